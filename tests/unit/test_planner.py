"""Tiles for a lattice: HRU96 over candidate group-bys with a dict-backed statistics provider."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mvlattice.errors import NotFoundError, UsageError
from mvlattice.lattice.lattice import Lattice, Measure
from mvlattice.plan.candidates import canonical, canonical_labels
from mvlattice.plan.planner import (
    DEFAULT_MAX_TILES,
    NO_WORKLOAD,
    LatticePlan,
    plan_lattice,
    plan_model,
)
from mvlattice.plan.workload import Workload, workload_from_entries
from tests.unit.plan_support import ASKED, COUNTS, ROWS, shop_lattice, shop_model, shop_stats

S = frozenset


@pytest.fixture
def lattice(tmp_path: Path) -> Lattice:
    return shop_lattice(tmp_path)


def workload(lattice: Lattice, entries: list[dict] | None = None) -> Workload:
    return workload_from_entries(entries if entries is not None else ASKED, lattice)


def dims(plan: LatticePlan) -> list[tuple[str, ...]]:
    return [t.dimensions for t in plan.tiles]


def test_a_weighted_plan_answers_what_is_asked(lattice: Lattice) -> None:
    plan = plan_lattice(lattice, shop_stats(), workload=workload(lattice), max_tiles=3)
    # Round 1's best serves the three heaviest queries at once; round 2 a smaller tile for
    # the months and quarters; round 3 the products (asked as p.product_id, the same column).
    # Each carries fiscal_period, a constant every column determines (plan.hierarchy).
    assert dims(plan) == [
        ("brand", "the_year", "the_month", "quarter", "fiscal_period", "family"),
        ("the_year", "the_month", "quarter", "fiscal_period", "family"),
        ("s.product_id", "fiscal_period"),
    ]
    for entry in ASKED:
        assert plan.answering(entry["dimensions"] + entry.get("filters", [])) is not None
    assert plan.answering(["the_year", "the_month"]).rows == 72  # the smaller of two tiles
    assert plan.answering(["store_id"]) is None
    assert plan.top_rows == ROWS
    assert plan.cost_before == ROWS * 19  # every query reads the star


def test_costs_fall_by_each_benefit_and_rounds_rank_every_candidate(lattice: Lattice) -> None:
    plan = plan_lattice(lattice, shop_stats(), workload=workload(lattice), max_tiles=3, rounds=None)
    cost = plan.cost_before
    for tile, round_ in zip(plan.tiles, plan.rounds, strict=True):
        assert tile.cost_after == pytest.approx(cost - tile.benefit)
        cost = tile.cost_after
        assert round_.chosen == tile.dimensions
        assert round_.benefits[0] == (tile.dimensions, tile.benefit)
        benefits = [b for _, b in round_.benefits]
        assert benefits == sorted(benefits, reverse=True)
    assert len(plan.rounds[0].benefits) == plan.candidates - 1  # all but the top
    assert plan.cost_after == plan.tiles[-1].cost_after
    short = plan_lattice(lattice, shop_stats(), workload=workload(lattice), max_tiles=3)
    assert [len(r.benefits) for r in short.rounds] == [10, 10, 10]
    for full, best in zip(plan.rounds, short.rounds, strict=True):
        assert best.benefits == full.benefits[:10]
    quiet = plan_lattice(lattice, shop_stats(), workload=workload(lattice), max_tiles=3, rounds=0)
    assert quiet.rounds == () and quiet.tiles == short.tiles


def test_without_a_workload_hierarchies_weigh_and_k_defaults(lattice: Lattice) -> None:
    plan = plan_lattice(lattice, shop_stats())
    assert plan.weighting == NO_WORKLOAD and plan.coverage is None
    assert len(plan.tiles) == DEFAULT_MAX_TILES
    # brand -> family and the_month -> quarter (COUNTS): the first tile holds both hierarchies
    assert dims(plan)[0] == ("brand", "the_month", "quarter", "fiscal_period", "family")
    assert all(t.benefit > 0 and not t.declared for t in plan.tiles)
    measures = {"units", "price", "store_id"}  # fact columns that are no key
    assert not any(measures & set(t.dimensions) for t in plan.tiles)
    assert dict(plan.hierarchies)["the_month"] == ("fiscal_period", "quarter")


def test_tiles_carry_default_and_declared_measures(tmp_path: Path) -> None:
    tiles = "[{dimensions: [the_year, quarter], measures: [{agg: max, args: price}]}]"
    lattice = shop_lattice(tmp_path, tiles=tiles)
    plan = plan_lattice(lattice, shop_stats(), workload=workload(lattice), max_tiles=2)
    declared, *chosen = plan.tiles
    assert declared.declared and declared.spec == lattice.tiles[0]
    assert declared.spec.measures == (Measure("max", ("price",)),)
    assert [t.spec.measures for t in chosen] == [
        (Measure("count"), Measure("sum", ("units",)), Measure("max", ("price",)))
    ] * 2
    assert {t.spec.lattice for t in plan.tiles} == {"sales"}


def test_declared_tiles_come_first_and_do_not_count_against_k(tmp_path: Path) -> None:
    tiles = "[{dimensions: [store_id]}, {dimensions: [[pc, product_class_id], the_year]}]"
    lattice = shop_lattice(tmp_path, tiles=tiles)
    plan = plan_lattice(lattice, shop_stats(), workload=workload(lattice), max_tiles=1)
    assert dims(plan)[:2] == [("store_id",), ("pc.product_class_id", "the_year")]
    assert [t.declared for t in plan.tiles] == [True, True, False]
    assert plan.tiles[0].benefit == 0  # nobody asks for stores: declared all the same
    zero = plan_lattice(lattice, shop_stats(), workload=workload(lattice), max_tiles=0)
    assert dims(zero) == [("store_id",), ("pc.product_class_id", "the_year")]


def test_algorithm_false_selects_only_declared_tiles(tmp_path: Path) -> None:
    lattice = shop_lattice(tmp_path, algorithm=False, tiles="[{dimensions: [the_month, the_year]}]")
    plan = plan_lattice(lattice, shop_stats(), workload=workload(lattice), max_tiles=5)
    assert dims(plan) == [("the_month", "the_year")]  # as declared
    assert plan.tiles[0].benefit == 10 * (ROWS - 24)
    bare = plan_lattice(shop_lattice(tmp_path / "b", algorithm=False), shop_stats())
    assert bare.tiles == () and bare.cost_after == bare.cost_before


def test_a_row_budget_replaces_the_tile_count(lattice: Lattice) -> None:
    plan = plan_lattice(lattice, shop_stats(), workload=workload(lattice), max_rows=600)
    assert sum(t.rows for t in plan.tiles) <= 600
    assert len(plan.tiles) > 1
    both = plan_lattice(
        lattice, shop_stats(), workload=workload(lattice), max_rows=600, max_tiles=1
    )
    assert len(both.tiles) == 1


def test_min_benefit_and_the_time_limit(lattice: Lattice) -> None:
    plan = plan_lattice(lattice, shop_stats(), workload=workload(lattice), min_benefit=10_000)
    assert plan.tiles and all(t.benefit > 10_000 for t in plan.tiles)
    limited = dataclasses.replace(lattice, algorithm_max_millis=0)  # algorithmMaxMillis: 0
    stopped = plan_lattice(limited, shop_stats(), workload=workload(lattice))
    assert stopped.timed_out and stopped.tiles == ()
    unlimited = plan_lattice(limited, shop_stats(), workload=workload(lattice), max_millis=10_000)
    assert not unlimited.timed_out and unlimited.tiles


class CountingStats:
    """A provider that estimates by independence until asked to count; counts come from the
    dict provider (which knows the_month -> quarter and friends)."""

    def __init__(self) -> None:
        self.truth = shop_stats()
        self.counts: dict[frozenset[str], float] = {
            S({c}): v for c, v in COUNTS.items() if isinstance(c, str)
        }
        self.passes: list[list[frozenset[str]]] = []

    def row_count(self) -> int:
        return ROWS

    def distinct_count(self, columns: Iterable[str]) -> float:
        cols = S(columns)
        if cols in self.counts:
            return self.counts[cols]
        n = math.prod(self.counts[S({c})] for c in cols)
        return -n * math.expm1(ROWS * math.log1p(-1 / n)) if n > 1 else n

    def is_counted(self, columns: Iterable[str]) -> bool:
        return S(columns) in self.counts

    def count_sets(self, column_sets: Iterable[Iterable[str]]) -> Mapping[frozenset[str], float]:
        sets = [S(s) for s in column_sets]
        self.passes.append(sets)
        for s in sets:
            self.counts[s] = self.truth.distinct_count(s)
        return {s: self.counts[s] for s in sets}


def test_a_counting_provider_counts_the_asked_sets_then_the_chosen_tiles(lattice: Lattice) -> None:
    stats = CountingStats()
    plan = plan_lattice(lattice, stats, workload=workload(lattice), max_tiles=3)
    hierarchies, asked = stats.passes[:2]
    assert S({"the_year", "the_month"}) in hierarchies  # pairs inside one dimension
    assert S({"brand", "family"}) in hierarchies
    assert asked[0] == S({"the_year", "brand"})  # the most asked not counted yet first
    assert set(asked) == {S({"brand", "the_year"}), S({"family", "quarter"})}
    assert all(t.counted for t in plan.tiles)
    for t in plan.tiles:
        assert t.rows == stats.truth.distinct_count(t.dimensions)
    uncounted = plan_lattice(lattice, CountingStats(), workload=workload(lattice), count=False)
    assert not any(t.counted for t in uncounted.tiles if len(t.dimensions) > 1)


def test_plan_model_picks_the_lattice_and_reads_the_workload_first(tmp_path: Path) -> None:
    model = shop_model(tmp_path)
    plan = plan_model(model, lambda _: shop_stats(), workload=ASKED, max_tiles=1)
    assert plan.lattice.name == "sales" and len(plan.tiles) == 1
    assert plan.workload is not None and len(plan.workload.queries) == 4

    def no_stats(_: Lattice) -> None:
        raise AssertionError("statistics asked before the workload was read")

    with pytest.raises(UsageError, match="unknown column 'nope'"):
        plan_model(model, no_stats, workload=[{"dimensions": ["nope"]}])  # type: ignore[arg-type]
    with pytest.raises(NotFoundError, match="no lattice 'sale'.*did you mean 'sales'"):
        plan_model(model, no_stats, lattice="sale")  # type: ignore[arg-type]
    two = dataclasses.replace(
        model, lattices=(model.lattices[0], dataclasses.replace(model.lattices[0], name="b"))
    )
    with pytest.raises(UsageError, match=r"several lattices \(sales, b\); name one with --lattice"):
        plan_model(two, no_stats)  # type: ignore[arg-type]
    with pytest.raises(NotFoundError, match="no lattices in"):
        plan_model(dataclasses.replace(model, lattices=()), no_stats)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_tiles": -1}, "max_tiles must be zero or more"),
        ({"max_tiles": 2.5}, "max_tiles must be a whole number"),
        ({"max_rows": -3}, "max_rows must be a non-negative number"),
    ],
)
def test_bad_limits(lattice: Lattice, options: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        plan_lattice(lattice, shop_stats(), **options)


GROUPABLE = ("s.product_id", "store_id", "brand", "the_year", "the_month", "quarter", "family")


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sets(st.sampled_from(GROUPABLE), max_size=4), st.integers(1, 50)),
        min_size=1,
        max_size=8,
    ),
    st.integers(0, 6),
)
def test_chosen_tiles_always_answer_something_asked(
    tmp_path_factory: pytest.TempPathFactory, asked: list, k: int
) -> None:
    lattice = shop_lattice(tmp_path_factory.mktemp("shop"))
    entries = [{"dimensions": sorted(d), "weight": w} for d, w in asked]
    plan = plan_lattice(lattice, shop_stats(), workload=workload(lattice, entries), max_tiles=k)
    canon = canonical_labels(lattice)
    wanted = [canonical(e["dimensions"], canon) for e in entries]
    assert len(plan.tiles) <= k
    for tile in plan.tiles:
        assert tile.benefit > 0
        assert any(w <= canonical(tile.dimensions, canon) for w in wanted)
    costs = [plan.cost_before, *(t.cost_after for t in plan.tiles)]
    assert costs == sorted(costs, reverse=True)
    again = plan_lattice(lattice, shop_stats(), workload=workload(lattice, entries), max_tiles=k)
    assert again == plan  # deterministic
