"""Candidate group-bys: asked, declared, small and union sets, never all 2^n subsets."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from mvlattice.errors import UsageError
from mvlattice.lattice.lattice import Lattice, LatticeColumn, Node
from mvlattice.plan.candidates import (
    candidate_sets,
    canonical,
    canonical_labels,
    dimension_like,
)
from mvlattice.statistics.dict_provider import DictStatisticProvider
from tests.unit.plan_support import shop_lattice, shop_stats

S = frozenset


def test_join_columns_are_canonical_at_the_side_nearest_the_root(tmp_path: Path) -> None:
    canon = canonical_labels(shop_lattice(tmp_path))
    assert canon["p.product_id"] == "s.product_id"
    assert canon["t.time_id"] == "s.time_id"
    assert canon["pc.product_class_id"] == "p.product_class_id"
    assert canon["brand"] == "brand"
    assert canonical(["p.product_id", "s.product_id", "brand"], canon) == S(
        {"s.product_id", "brand"}
    )


def test_dimension_like_columns(tmp_path: Path) -> None:
    lattice = shop_lattice(tmp_path)
    dims = dimension_like(lattice, shop_stats(), canonical_labels(lattice))
    # units is a measure's argument, price has too many values, fiscal_period one value,
    # p.product_id / t.time_id / pc.product_class_id are copies of join columns
    assert dims == (
        "s.product_id",
        "s.time_id",
        "store_id",
        "p.product_class_id",
        "brand",
        "the_year",
        "the_month",
        "quarter",
        "family",
    )


def test_without_a_workload_candidates_are_the_top_singles_and_pairs(tmp_path: Path) -> None:
    lattice = shop_lattice(tmp_path)
    cands = candidate_sets(lattice, shop_stats())
    dims = cands.dimension_like
    expected = {S(c) for r in (1, 2) for c in itertools.combinations(dims, r)}
    assert cands.sets[0] == cands.top
    assert set(cands.sets[1:]) == expected
    assert cands.top == S(canonical_labels(lattice).values())
    assert (cands.asked, cands.declared, cands.truncated) == ({}, (), False)


def test_asked_and_declared_sets_and_their_unions(tmp_path: Path) -> None:
    tiles = "[{dimensions: [the_year, [p, product_id]]}]"
    lattice = shop_lattice(tmp_path, tiles=tiles)
    asked = {S({"the_month", "fiscal_period"}): 3.0, S({"price"}): 1.0, S({"t.time_id"}): 2.0}
    cands = candidate_sets(lattice, shop_stats(), asked)
    declared = S({"the_year", "s.product_id"})
    assert cands.declared == (declared,)
    assert cands.asked == {
        S({"the_month", "fiscal_period"}): 3.0,
        S({"price"}): 1.0,
        S({"s.time_id"}): 2.0,  # canonical
    }
    for union in (
        S({"the_month", "fiscal_period", "price"}),
        S({"the_month", "fiscal_period", "the_year", "s.product_id"}),
        S({"price", "s.time_id"}),
    ):
        assert union in cands.sets
    assert len(cands.sets) == len(set(cands.sets))


def test_unions_are_bounded_in_columns(tmp_path: Path) -> None:
    lattice = shop_lattice(tmp_path)
    asked = {S({"brand", "family"}): 1.0, S({"the_year", "the_month"}): 1.0, S({"price"}): 1.0}
    cands = candidate_sets(lattice, shop_stats(), asked, max_union_columns=3)
    assert S({"brand", "family", "price"}) in cands.sets
    assert S({"brand", "family", "the_year", "the_month"}) not in cands.sets
    unbounded = candidate_sets(lattice, shop_stats(), asked, max_union_columns=8)
    assert S({"brand", "family", "the_year", "the_month", "price"}) in unbounded.sets


def wide_lattice(n: int) -> tuple[Lattice, DictStatisticProvider]:
    columns = tuple(
        LatticeColumn(f"c{i:02d}", "f", f"c{i:02d}", f"`f`.`c{i:02d}`") for i in range(n)
    )
    lattice = Lattice("wide", "w", "select 1 from w.fact f", (Node("f", "w", "fact"),), (), columns)
    counts = {c.label: 2 + 7 * i for i, c in enumerate(columns)}
    return lattice, DictStatisticProvider(1_000_000, counts)


def test_a_wide_lattice_never_enumerates_its_subsets() -> None:
    lattice, stats = wide_lattice(38)
    asked = {
        S({f"c{i % 38:02d}", f"c{(i * 7) % 38:02d}", f"c{(i * 3 + 1) % 38:02d}"}): 1.0
        for i in range(60)
    }
    cands = candidate_sets(lattice, stats, asked, max_candidates=500)
    assert len(cands.sets) == 501  # the top plus the cap
    assert cands.truncated
    assert set(asked) <= set(cands.sets)  # what is asked is never cut
    assert len(stats.asked) == 38  # one distinct count per column decides dimension-likeness


def test_asked_sets_stay_even_beyond_the_cap() -> None:
    lattice, stats = wide_lattice(30)
    asked = {S({f"c{i:02d}", f"c{j:02d}"}): 1.0 for i in range(30) for j in range(i + 1, 30)}
    cands = candidate_sets(lattice, stats, asked, max_candidates=100)
    assert set(asked) <= set(cands.sets)
    assert cands.truncated


def test_unknown_columns_in_the_asked_sets_are_refused() -> None:
    lattice, stats = wide_lattice(3)
    with pytest.raises(UsageError, match="lattice 'wide' has no column c07, x"):
        candidate_sets(lattice, stats, {S({"c00", "c07", "x"}): 1.0})
