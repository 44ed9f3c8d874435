"""Tile SQL, build order, targets and materialization SQL — pure, no Spark."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.errors import NotFoundError, SqlError
from mvlattice.jobs.order import Ancestor, build_order, cheapest_ancestor
from mvlattice.jobs.targets import (
    MATERIALIZATION,
    declared_targets,
    find_target,
    policy_for,
    tile_target,
)
from mvlattice.jobs.tilesql import (
    appended_relation,
    can_build_from,
    merge_tile_sql,
    mergeable,
    output_columns,
    rollup_tile_sql,
    star_tile_sql,
    tile_columns,
)
from mvlattice.lattice.lattice import Measure, TileSpec
from mvlattice.sql.query_tables import pin_versions, query_tables
from tests.unit.test_jobs_support import shop_model


@pytest.fixture
def model(tmp_path: Path):
    return shop_model(tmp_path)


@pytest.fixture
def lattice(model):
    return model.lattices[0]


def test_star_sql_groups_the_whole_star_and_shares_stored_columns(lattice) -> None:
    fine = lattice.tiles[0]
    sql = star_tile_sql(lattice, fine)
    assert "JOIN `shop`.`product` AS `p`" in sql and "JOIN `shop`.`time` AS `t`" in sql
    assert sql.endswith("GROUP BY `p`.`brand`, `t`.`the_year`, `t`.`the_month`")
    # AVG(units) is stored as sum_units + count_units; SUM(units) shares sum_units
    assert [c.name for c in tile_columns(fine)] == [
        "count",
        "sum_units",
        "count_units",
        "min_amount",
    ]
    assert output_columns(fine)[:3] == ("brand", "the_year", "the_month")
    assert sql.count("AS `sum_units`") == 1


def test_star_sql_pins_versions_and_handles_the_grand_total(lattice) -> None:
    total = lattice.tiles[2]
    sql = star_tile_sql(lattice, total, {"s": "`shop`.`sales` VERSION AS OF 7"})
    assert "FROM `shop`.`sales` VERSION AS OF 7 AS `s`" in sql
    assert "GROUP BY" not in sql


def test_rollup_needs_finer_dimensions_and_rollable_measures(lattice) -> None:
    fine, year, total, category = lattice.tiles
    assert can_build_from(year, fine) and can_build_from(total, year)
    assert not can_build_from(fine, year)  # coarser cannot answer finer
    assert not can_build_from(category, fine)  # category is not a dimension of `fine`
    by_brand = TileSpec("sales_star", ("brand", "category"), (Measure("count"),))
    assert can_build_from(category, by_brand)  # COUNT(DISTINCT brand): brand is grouped
    other_measure = TileSpec("sales_star", ("the_year",), (Measure("max", ("amount",)),))
    assert not can_build_from(other_measure, fine)
    assert not can_build_from(TileSpec("other", (), (Measure("count"),)), fine)


def test_rollup_sql_uses_the_rollup_table_and_keeps_types(lattice) -> None:
    fine, year, _, category = lattice.tiles
    sql = rollup_tile_sql(year, fine, "delta.`/t` VERSION AS OF 3", {"sum_units": "decimal(20,2)"})
    assert "sum(`count`) AS `count`" in sql
    assert "CAST(sum(`sum_units`) AS decimal(20,2)) AS `sum_units`" in sql
    assert "min(`min_amount`) AS `min_amount`" in sql
    assert "FROM delta.`/t` VERSION AS OF 3 AS `finer`" in sql
    by_brand = TileSpec("sales_star", ("brand", "category"), (Measure("count"),))
    distinct = rollup_tile_sql(category, by_brand, "x")
    assert "count(DISTINCT `brand`) AS `count_distinct_brand`" in distinct


def test_merge_sql_unions_the_tile_with_appended_aggregates(lattice) -> None:
    fine, _, _, category = lattice.tiles
    sql = merge_tile_sql(fine, "delta.`/t` VERSION AS OF 4", "SELECT 1", {"count": "bigint"})
    assert "UNION ALL\nSELECT 1" in sql
    assert "CAST(sum(`count`) AS bigint) AS `count`" in sql
    assert sql.endswith("GROUP BY `brand`, `the_year`, `the_month`")
    assert mergeable(fine) and not mergeable(category)
    with pytest.raises(ValueError, match="DISTINCT"):
        merge_tile_sql(category, "t", "SELECT 1")


def test_appended_relation_reads_only_named_files() -> None:
    sql = appended_relation("`shop`.`sales`", 5, ["part-1.parquet", "it's.parquet"])
    assert sql.startswith("(SELECT * FROM `shop`.`sales` VERSION AS OF 5 WHERE _metadata.")
    assert "'it\\'s.parquet'" in sql
    assert appended_relation("t", 1, []).endswith("WHERE false)")


def test_materialization_sql_is_pinned_but_ctes_are_not(model) -> None:
    m = model.materializations[0]
    assert set(query_tables(m.sql, m.schema)) == {"shop.time", "shop.sales"}
    pinned = pin_versions(m.sql, m.schema, {"shop.sales": 4, "shop.time": None})
    assert "shop.sales VERSION AS OF 4 AS s" in pinned
    assert "shop.time VERSION AS OF" not in pinned
    assert "JOIN y ON" in pinned
    with pytest.raises(SqlError, match="does not parse"):
        query_tables("select from from", "x")


def test_targets_of_the_model(model, lattice) -> None:
    targets = declared_targets(model, "/wh")
    assert targets[0].kind == MATERIALIZATION and targets[0].name == "adhoc.sales_by_year_mv"
    assert targets[0].location == "/wh/_mvlattice/materializations/adhoc/sales_by_year_mv"
    year = tile_target(lattice.tiles[1], "/wh")
    assert year.name.startswith("mvlattice.sales_star__the_year__")
    assert year.location == f"/wh/_mvlattice/tiles/{year.table}"
    assert find_target(targets, "sales_by_year") is targets[0]  # the view's name
    assert find_target(targets, year.table) == year
    with pytest.raises(NotFoundError, match="no tile or materialization 'sales_by_yr'"):
        find_target(targets, "sales_by_yr")
    assert policy_for(model, year).max_staleness_seconds == 600
    assert policy_for(model, targets[0]).cron == "30 2 1 * 0"
    with pytest.raises(NotFoundError, match="no lattice 'nope'"):
        declared_targets(model, "/wh", "nope")


def test_build_order_puts_ancestors_first(model, lattice) -> None:
    targets = declared_targets(model, "/wh")
    ordered = build_order(reversed(targets), ["sales_star"])
    assert ordered[0].kind == MATERIALIZATION
    dims = [len(t.spec.dimensions) for t in ordered[1:]]
    assert dims == sorted(dims, reverse=True)


def test_cheapest_ancestor_is_the_smallest_that_answers(lattice) -> None:
    fine, year, total, _ = lattice.tiles
    big = Ancestor("mvlattice.fine", "/f", fine, 500, 1)
    small = Ancestor("mvlattice.year", "/y", year, 3, 1)
    assert cheapest_ancestor(total, [big, small], star_rows=10_000) == small
    assert cheapest_ancestor(year, [big, small], star_rows=10_000) == big  # not itself
    assert cheapest_ancestor(year, [big], star_rows=400) is None  # the star is cheaper
    assert cheapest_ancestor(fine, [small], star_rows=None) is None


def test_sql_that_does_not_tokenize_is_a_sql_error() -> None:
    with pytest.raises(SqlError, match="does not parse"):
        query_tables("select `a from t", "x")
