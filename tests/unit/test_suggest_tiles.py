"""Tiles for the logged workload: the planner's weighted HRU96 with the log's frequencies."""

from __future__ import annotations

import math

from mvlattice.lattice.lattice import Lattice
from mvlattice.model.loader import Model
from mvlattice.statistics.dict_provider import DictStatisticProvider
from mvlattice.suggest.estimates import DESCRIPTION, heuristic_statistics
from mvlattice.suggest.logs import ANSI, LogEntry
from mvlattice.suggest.suggester import LatticeSuggestion, suggest
from tests.unit.test_suggest_calcite import foodmart  # noqa: F401 - fixture

BY_YEAR = (
    'select "t"."the_year", sum("s"."unit_sales") from "sales_fact_1997" as "s" '
    'join "time_by_day" as "t" on "s"."time_id" = "t"."time_id" group by "t"."the_year"'
)
BY_FAMILY_IN_YEAR = (
    'select "pc"."product_family", sum("s"."unit_sales") from "sales_fact_1997" as "s", '
    '"time_by_day" as "t", "product" as "p", "product_class" as "pc" '
    'where "s"."time_id" = "t"."time_id" and "s"."product_id" = "p"."product_id" '
    'and "p"."product_class_id" = "pc"."product_class_id" and "t"."the_year" = 1997 '
    'group by "pc"."product_family"'
)
DETAIL = 'select "s"."unit_sales" from "sales_fact_1997" as "s" where "s"."store_id" = 3'


def counts(lattice: Lattice) -> DictStatisticProvider:
    """FoodMart-like numbers: 86,837 rows; years 2, families 3, brands 111."""
    singles = {"the_year": 2, "product_family": 3, "brand_name": 111, "quarter": 4}
    return DictStatisticProvider(
        86_837, {(label,): n for label, n in singles.items() if label in lattice.labels}
    )


def run(model: Model, log: list[tuple[str, float]], **options) -> LatticeSuggestion:
    entries = [LogEntry(sql, f"q{i}", weight, dialect=ANSI) for i, (sql, weight) in enumerate(log)]
    result = suggest(entries, model=model, stats_for=counts, statistics="dict", **options)
    (item,) = result.lattices
    return item


def test_tiles_answer_the_logged_queries_and_cite_them(foodmart: Model) -> None:  # noqa: F811
    item = run(foodmart, [(BY_YEAR, 5), (BY_FAMILY_IN_YEAR, 2), (DETAIL, 1)])
    plan = item.tiles
    assert plan is not None and plan.statistics == "dict"
    assert [(t.planned.dimensions, t.queries, t.weight) for t in plan.tiles] == [
        (("product_family", "the_year"), ("q1",), 2.0),
        (("the_year",), ("q0",), 5.0),
    ]
    assert plan.star_only == ()
    assert plan.unmapped == ("q2",)  # a detail query: no tile answers it
    assert item.lattice is not None and item.lattice.row_count_estimate == 86_837


def test_space_budget_limits_the_summed_rows(foodmart: Model) -> None:  # noqa: F811
    item = run(foodmart, [(BY_YEAR, 5), (BY_FAMILY_IN_YEAR, 2)], max_rows=3)
    assert item.tiles is not None
    assert [t.planned.dimensions for t in item.tiles.tiles] == [("the_year",)]
    assert item.tiles.star_only == ("q1",)


def test_max_tiles_and_no_tiles(foodmart: Model) -> None:  # noqa: F811
    item = run(foodmart, [(BY_YEAR, 5), (BY_FAMILY_IN_YEAR, 2)], max_tiles=1)
    assert item.tiles is not None and len(item.tiles.tiles) == 1
    assert run(foodmart, [(BY_YEAR, 5)], tiles=False).tiles is None


def test_no_aggregate_query_no_tiles(foodmart: Model) -> None:  # noqa: F811
    item = run(foodmart, [(DETAIL, 1)])
    assert item.tiles is not None and item.tiles.plan is None and item.tiles.tiles == ()


def test_select_distinct_is_a_group_by_for_tiles(foodmart: Model) -> None:  # noqa: F811
    q = (
        'select distinct "t"."the_year" from "sales_fact_1997" as "s" '
        'join "time_by_day" as "t" on "s"."time_id" = "t"."time_id"'
    )
    item = run(foodmart, [(q, 1)])
    assert item.tiles is not None
    assert [t.planned.dimensions for t in item.tiles.tiles] == [("the_year",)]


def test_each_query_is_mapped_onto_its_own_role_of_a_twice_read_table() -> None:
    order = (
        "select t.the_year, count(*) from sales s join time_by_day t on s.order_time_id = "
        "t.time_id group by t.the_year"
    )
    ship = (
        "select t.quarter, count(*) from sales s join time_by_day t on s.ship_time_id = "
        "t.time_id group by t.quarter"
    )
    entries = [LogEntry(order, "order"), LogEntry(ship, "ship")]
    (item,) = suggest(entries, default_schema="shop").lattices
    assert item.lattice is not None
    assert [n.alias for n in item.lattice.nodes] == ["sales", "time_by_day", "time_by_day_2"]
    assert item.tiles is not None
    asked = {(a.query, tuple(sorted(a.columns))) for a in item.tiles.asks}
    assert asked == {("order", ("time_by_day.the_year",)), ("ship", ("time_by_day_2.quarter",))}


def test_heuristic_statistics_shrink_along_the_arms(foodmart: Model) -> None:  # noqa: F811
    result = suggest([LogEntry(BY_FAMILY_IN_YEAR, "q", dialect=ANSI)], model=foodmart)
    assert result.summary.statistics == DESCRIPTION
    (item,) = result.lattices
    assert item.lattice is not None
    stats = heuristic_statistics(item.lattice, 1e6)
    assert stats.row_count() == 1_000_000
    product_rows, class_rows = round(1e6 ** (1 / 2)), round(1e6 ** (1 / 3))
    assert stats.distinct_count(["product.product_id"]) == product_rows  # product's key
    assert stats.distinct_count(["sales_fact_1997.product_id"]) == product_rows  # its copy
    assert stats.distinct_count(["product_class.product_class_id"]) == class_rows
    assert stats.distinct_count(["the_year"]) == round(math.sqrt(1e6 ** (1 / 2)))
    assert stats.distinct_count(["product_family"]) == round(math.sqrt(1e6 ** (1 / 3)))
