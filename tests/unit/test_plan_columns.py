"""Dimension roles, hierarchies, budgets and predicted coverage of a plan, without Spark."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.errors import ModelError, UsageError
from mvlattice.lattice.lattice import Measure
from mvlattice.plan.budget import Budget, measured_bytes_per_value, parse_bytes, parse_share
from mvlattice.plan.columns import column_roles, fact_keys
from mvlattice.plan.hierarchy import closure, dependencies
from mvlattice.plan.planner import plan_lattice
from mvlattice.plan.workload import workload_from_sql
from tests.unit.plan_support import ROWS, shop_lattice, shop_model, shop_stats

JOINS = (
    "from shop.sales s join shop.time_by_day t on s.time_id = t.time_id "
    "join shop.product p on s.product_id = p.product_id "
    "join shop.product_class pc on p.product_class_id = pc.product_class_id"
)


def test_fact_columns_that_are_no_key_are_measures(tmp_path: Path) -> None:
    lattice = shop_lattice(tmp_path)
    roles = column_roles(lattice)
    assert set(roles.measures) == {"units", "price", "store_id"}  # units: a measure's argument
    assert {"s.product_id", "s.time_id", "brand", "the_month", "family"} <= set(roles.dimensions)


def test_declared_keys_and_lattice_lists_decide(tmp_path: Path) -> None:
    lists = "[]\n    dimensions: [price]\n    measures: [brand]"  # after the lattice's tiles
    model = shop_model(tmp_path)
    lattice = model.lattices[0]
    assert fact_keys(model, lattice) == frozenset()  # shop.sales declares no keys
    assert "store_id" in column_roles(lattice, frozenset({"store_id"})).dimensions
    listed = shop_model(tmp_path / "l", tiles=lists).lattices[0]
    assert listed.dimension_labels == ("price",) and listed.measure_labels == ("brand",)
    roles = column_roles(listed)
    assert "price" in roles.dimensions and "brand" in roles.measures


def test_a_misspelled_role_column_is_named_with_a_suggestion(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"lattices\[0\]\.dimensions\[0\]: unknown column "
                       r"'brnd' \(did you mean 'brand'\?\)"):  # fmt: skip
        shop_model(tmp_path, tiles="[]\n    dimensions: [brnd]")


def test_hierarchies_from_counts_and_constants() -> None:
    stats = shop_stats()  # brand -> family, the_month -> quarter; fiscal_period constant
    lattice_dims = ["brand", "family", "the_month", "quarter", "the_year"]
    from tests.unit.plan_support import shop_lattice as make

    lattice = make(Path("/nonexistent-shop"))
    found = dependencies(lattice, stats, lattice_dims, ["fiscal_period"])
    assert found["brand"] == {"family", "fiscal_period"}
    assert found["the_month"] == {"quarter", "fiscal_period"}
    assert found["the_year"] == {"fiscal_period"}  # a year has many months
    assert closure({"brand", "the_year"}, found) == {"brand", "family", "the_year", "fiscal_period"}


def test_sizes_parse_in_both_unit_systems() -> None:
    assert parse_bytes("500MB") == 500e6 and parse_bytes("2GiB") == 2 * 2**30
    assert parse_bytes("1.5 kb") == 1500 and parse_bytes("1024") == 1024
    assert parse_share("5%") == pytest.approx(0.05) and parse_share("0.25") == 0.25
    for bad in ("5 parsecs", "MB", "-1MB"):
        with pytest.raises(UsageError, match="is not a size"):
            parse_bytes(bad)
    with pytest.raises(UsageError, match="more than 0"):
        parse_share("0%")
    assert measured_bytes_per_value([(1000, 10, 5), (None, 3, 2), (500, 0, 4)]) == 20.0
    assert measured_bytes_per_value([]) is None


def test_tiles_carry_the_measures_of_the_queries_they_answer(tmp_path: Path) -> None:
    lattice = shop_lattice(tmp_path)
    work = workload_from_sql(
        [
            (f"select t.the_month, max(s.price) {JOINS} group by t.the_month", 3.0),
            (f"select pc.family, avg(s.units) {JOINS} group by pc.family", 2.0),
            (f"select t.the_month, sum(s.units * s.price) {JOINS} group by 1", 1.0),
        ],
        lattice,
    )
    plan = plan_lattice(lattice, shop_stats(), workload=work, max_tiles=1)
    (tile,) = plan.tiles
    assert {"the_month", "family"} <= set(tile.dimensions)
    assert {
        Measure("max", ("price",)),
        Measure("sum", ("units",)),
        Measure("count", ("units",)),
    } <= (set(tile.spec.measures))
    coverage = plan.coverage
    assert coverage is not None and coverage.source == "plan"
    assert [q.answered for q in coverage.queries] == [True, True, False]  # an expression: no
    assert coverage.share == pytest.approx(5 / 6)
    assert coverage.rows_before == 6 * ROWS
    assert coverage.rows_after == (3 + 2) * tile.rows + 1 * ROWS
    first, past = coverage.curve
    assert first.chosen and not past.chosen and first.coverage == coverage.share


def test_a_byte_budget_keeps_the_prefix_that_fits(tmp_path: Path) -> None:
    lattice = shop_lattice(tmp_path)
    work = workload_from_sql(
        [
            (f"select t.the_month, count(*) {JOINS} group by 1", 5.0),
            (f"select p.brand, t.quarter, count(*) {JOINS} group by 1, 2", 3.0),
            (f"select s.product_id, count(*) {JOINS} group by 1", 1.0),
        ],
        lattice,
    )
    free = plan_lattice(lattice, shop_stats(), workload=work)
    assert len(free.tiles) >= 2
    budget = free.tiles[0].bytes + 1
    tight = plan_lattice(lattice, shop_stats(), workload=work, budget=Budget(max_bytes=budget))
    assert tight.tiles and tight.bytes <= budget < free.bytes
    assert tight.coverage is not None and free.coverage is not None
    chosen = [p.chosen for p in tight.coverage.curve]
    assert chosen == sorted(chosen, reverse=True)  # the kept picks, then the next one
    assert tight.coverage.share <= free.coverage.share
