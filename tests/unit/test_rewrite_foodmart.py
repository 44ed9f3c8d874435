"""Tiles of FoodMart's lattice as views (no Spark: the model declares its columns here)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mvlattice.datasets.foodmart import TABLES
from mvlattice.jobs.naming import tile_qualified_name
from mvlattice.lattice.lattice import Measure, TileSpec
from mvlattice.model.loader import load_model
from mvlattice.mvrewrite.context import context_for
from mvlattice.mvrewrite.rewriter import rewrite
from mvlattice.mvrewrite.views import tile_sql
from tests.golden.rewrite import runner

MONTHS = TileSpec("star", ("the_year", "the_month"), (Measure("count"),))
YEAR_MEASURES = TileSpec(
    "star",
    ("the_year",),
    (Measure("count"), Measure("sum", ("unit_sales",)), Measure("avg", ("store_cost",))),
)
FAMILY = TileSpec("star", ("product_family", "quarter"), (Measure("count"),))
DISTINCT = TileSpec("star", ("the_year",), (Measure("count", ("s.product_id",), True),))
MONTH_QUERY = (
    "select the_year, the_month, count(*) as c from foodmart.sales_fact_1997 "
    "join foodmart.time_by_day using (time_id) group by the_year, the_month"
)
TYPES = {
    (f"foodmart.{t.name}", c.split()[0].lower()): c.split()[1]
    for t in TABLES
    for c in re.split(r",\s*(?![^(]*\))", t.ddl)
}


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory):
    return runner.foodmart_model(tmp_path_factory.mktemp("foodmart"))


def ctx(model, *tiles: TileSpec, rows=None):
    return context_for(model, tiles=tiles, materializations=(), types=TYPES, row_counts=rows)


def test_the_documented_month_query_reads_the_month_tile(model) -> None:
    result = rewrite(MONTH_QUERY, ctx(model, MONTHS, YEAR_MEASURES))
    assert result.materializations == (tile_qualified_name(MONTHS),)
    assert result.sql == (
        "SELECT\n  mv.the_year AS the_year,\n  mv.the_month AS the_month,\n  mv.count AS c\n"
        f"FROM {tile_qualified_name(MONTHS)} AS mv"
    )


def test_a_tile_is_the_group_by_of_the_whole_star(model) -> None:
    sql = tile_sql(model.lattice("star"), YEAR_MEASURES)
    assert sql.startswith(
        "SELECT `t`.`the_year` AS `the_year`, count(*) AS `count`, "
        "sum(`s`.`unit_sales`) AS `sum_unit_sales`, sum(`s`.`store_cost`) AS `sum_store_cost`, "
        "count(`s`.`store_cost`) AS `count_store_cost`\nFROM `foodmart`.`sales_fact_1997` AS `s`"
    )
    assert "`product_class` AS `pc`" in sql and sql.endswith("GROUP BY `t`.`the_year`")


def test_rollup_onto_a_coarser_grouping(model) -> None:
    result = rewrite(
        "select t.the_year, count(*), sum(s.unit_sales), avg(s.store_cost) "
        "from foodmart.sales_fact_1997 s join foodmart.time_by_day t on s.time_id = t.time_id "
        "where t.the_year in (1997, 1998) group by t.the_year",
        ctx(model, YEAR_MEASURES),
    )
    assert result.rewritten
    assert "mv.count AS `count(1)`" in result.sql  # same grouping: no re-aggregation
    assert (
        "CAST(CAST(mv.sum_store_cost AS DECIMAL(20, 4)) / CAST(mv.count_store_cost AS "
        "DECIMAL(20, 0)) AS DECIMAL(14, 8))" in result.sql
    )
    assert "WHERE\n  mv.the_year IN (1997, 1998)" in result.sql


def test_global_count_over_a_tile(model) -> None:
    result = rewrite(
        "select count(*) from foodmart.sales_fact_1997 s join foodmart.time_by_day t "
        "on s.time_id = t.time_id where t.the_month = 'January'",
        ctx(model, MONTHS),
    )
    assert "COALESCE(SUM(mv.count), 0)" in result.sql and "mv.the_month = 'January'" in result.sql


def test_a_year_pinned_by_the_where_needs_no_reaggregation(model) -> None:
    pinned = rewrite(
        "select the_month, count(*) as c from foodmart.sales_fact_1997 "
        "join foodmart.time_by_day using (time_id) where the_year = 1997 group by the_month",
        ctx(model, MONTHS),
    )
    assert pinned.rewritten and "mv.count AS c" in pinned.sql and "GROUP BY" not in pinned.sql


def test_a_string_column_equal_to_a_number_is_not_pinned(model) -> None:
    # the_month is a string: `the_month = 1` lets '1' and '1.0' through, two groups.
    result = rewrite(
        "select the_year, count(*) as c from foodmart.sales_fact_1997 "
        "join foodmart.time_by_day using (time_id) where the_month = 1 group by the_year",
        ctx(model, MONTHS),
    )
    assert result.rewritten and "SUM(mv.count) AS c" in result.sql and "GROUP BY" in result.sql


def test_snowflake_columns_through_lossless_joins(model) -> None:
    result = rewrite(
        "select pc.product_family, count(*) as n from foodmart.sales_fact_1997 s "
        "join foodmart.product p on s.product_id = p.product_id "
        "join foodmart.product_class pc on p.product_class_id = pc.product_class_id "
        "group by pc.product_family",
        ctx(model, FAMILY),
    )
    assert result.rewritten and "SUM(mv.count) AS n" in result.sql


def test_count_distinct_measure_only_at_its_own_grouping(model) -> None:
    context = ctx(model, DISTINCT)
    same = rewrite(
        "select t.the_year, count(distinct s.product_id) as n from foodmart.sales_fact_1997 s "
        "join foodmart.time_by_day t on s.time_id = t.time_id group by t.the_year",
        context,
    )
    assert same.rewritten and "mv.count_distinct_s__product_id AS n" in same.sql
    total = rewrite(
        "select count(distinct s.product_id) from foodmart.sales_fact_1997 s "
        "join foodmart.time_by_day t on s.time_id = t.time_id",
        context,
    )
    assert not total.rewritten and total.explain[0].reason == "CANNOT_ROLL_UP"


def test_hints_name_the_missing_dimension_and_measure(model) -> None:
    context = ctx(model, MONTHS)
    (note,) = rewrite(
        "select the_day, count(*) from foodmart.sales_fact_1997 join foodmart.time_by_day "
        "using (time_id) group by the_day",
        context,
    ).explain
    assert note.reason == "MISSING_COLUMN"
    assert "add dimension 'the_day' to a tile of lattice 'star'" in note.message
    (note,) = rewrite(
        "select the_year, sum(unit_sales) from foodmart.sales_fact_1997 "
        "join foodmart.time_by_day using (time_id) group by the_year",
        context,
    ).explain
    assert (
        note.reason == "CANNOT_ROLL_UP" and "add measure sum(unit_sales) to a tile" in note.message
    )


def test_the_smallest_tile_wins(model) -> None:
    query = (
        "select the_year, count(*) from foodmart.sales_fact_1997 "
        "join foodmart.time_by_day using (time_id) group by the_year"
    )
    assert rewrite(query, ctx(model, MONTHS, YEAR_MEASURES)).materializations == (
        tile_qualified_name(YEAR_MEASURES),
    )
    rows = {tile_qualified_name(MONTHS): 24, tile_qualified_name(YEAR_MEASURES): 1000}
    assert rewrite(query, ctx(model, MONTHS, YEAR_MEASURES, rows=rows)).materializations == (
        tile_qualified_name(MONTHS),
    )


def test_a_measure_over_a_derived_column(tmp_path: Path) -> None:
    """SUM(a * b) matches a tile measure over the derived column `a * b`."""
    base = runner.foodmart_model(tmp_path)
    text = (
        Path(base.file)
        .read_text()
        .replace("select 1 from", "select s.unit_sales * s.store_sales as revenue from")
    )
    path = tmp_path / "derived.yaml"
    path.write_text(text)
    model = load_model(path, warehouse=str(tmp_path / "warehouse"))
    tile = TileSpec("star", ("the_year",), (Measure("sum", ("revenue",)),))
    result = rewrite(
        "select t.the_year, sum(s.unit_sales * s.store_sales) as r from foodmart.sales_fact_1997 s "
        "join foodmart.time_by_day t on s.time_id = t.time_id group by t.the_year",
        context_for(model, tiles=(tile,), materializations=(), types=TYPES),
    )
    assert result.rewritten and "mv.sum_revenue AS r" in result.sql


def test_a_tile_naming_an_unknown_column_is_reported(model) -> None:
    broken = TileSpec("star", ("no_such_column",), (Measure("count"),))
    context = ctx(model, broken)
    assert context.views[0].block is None
    (note,) = rewrite(MONTH_QUERY, context).explain
    assert note.reason == "VIEW_UNSUPPORTED" and "no_such_column" in note.message
