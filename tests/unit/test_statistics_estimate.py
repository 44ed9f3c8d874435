"""The estimator for column sets never counted: Cardenas, independence, keys, FDs, covers."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mvlattice.statistics.estimate import Estimator, cardenas, independence, relative_error
from mvlattice.statistics.memory import MemoryCounter


def fs(*cols: str) -> frozenset[str]:
    return frozenset(cols)


# Calcite's LatticeTest values for Lattice.getRowCount(factCount, cardinalities...).
@pytest.mark.parametrize(
    ("rows", "cards", "expected", "tol"),
    [(10, (2, 3), 5.03, 0.01), (100, (9, 8), 54.2, 0.1), (1000, (9, 8), 72.0, 0.01)],
)
def test_independence_reproduces_calcites_values(rows, cards, expected, tol):
    assert independence(rows, cards) == pytest.approx(expected, abs=tol)


def test_cardenas_edges():
    assert cardenas(0, 100) == 0.0
    assert cardenas(100, 0) == 0.0
    assert cardenas(1, 100) == 1.0
    # a huge space: nearly every row is a new combination, never more than the rows
    assert 999.0 < cardenas(1e30, 1000) <= 1000.0
    assert cardenas(1e6, 1e6) == pytest.approx(1e6 * (1 - 1 / 2.718281828), rel=1e-3)


def test_counted_set_is_returned_as_counted():
    est = Estimator(1000, {fs("a"): 10, fs("b"): 20, fs("a", "b"): 37})
    assert est.estimate({"a", "b"}) == 37


def test_without_pairs_it_is_calcites_independence():
    est = Estimator(1000, {fs("a"): 10, fs("b"): 20, fs("c"): 3})
    assert est.estimate({"a", "b", "c"}) == pytest.approx(independence(1000, (10, 20, 3)))


def test_a_key_gives_the_row_count():
    est = Estimator(1000, {fs("a"): 1000, fs("b"): 5}, keys=[fs("a")])
    assert est.estimate({"a", "b", "c"}) == 1000


def test_a_dependent_column_adds_nothing():
    counts = {fs("month"): 12, fs("quarter"): 4, fs("store"): 25}
    est = Estimator(100_000, counts, dependencies=[(fs("month"), "quarter")])
    assert est.estimate({"month", "quarter", "store"}) == est.estimate({"month", "store"})
    assert est.estimate({"month", "quarter"}) == 12


def test_a_constant_column_adds_nothing():
    est = Estimator(500, {fs("a"): 40, fs("k"): 1}, dependencies=[(fs(), "k")])
    assert est.estimate({"a", "k"}) == 40


def test_counted_pairs_give_a_conditional_estimate():
    # b determines neither a nor c, but a and c each vary little given b: the cover
    # (a,b) then (b,c)/b predicts 20·20/10 = 40 combinations, not 10·10·20 = 2000.
    counts = {fs("a"): 10, fs("b"): 10, fs("c"): 20, fs("a", "b"): 20, fs("b", "c"): 20}
    est = Estimator(100_000, counts)
    assert est.estimate({"a", "b", "c"}) == pytest.approx(40, rel=0.01)


def test_bounded_by_largest_counted_subset_and_rows():
    counts = {fs("a"): 900, fs("b"): 2, fs("a", "b"): 950}
    est = Estimator(1000, counts)
    value = est.estimate({"a", "b", "c"})
    assert 950 <= value <= 1000


def test_a_column_nobody_counted_may_take_every_row():
    est = Estimator(1000, {fs("a"): 10})
    assert est.estimate({"a", "zzz"}) == pytest.approx(cardenas(10 * 1000, 1000))


def test_surprise_of_counted_sets():
    counts = {fs("a"): 10, fs("b"): 10, fs("a", "b"): 10, fs("c"): 10, fs("a", "c"): 100}
    est = Estimator(1_000_000, counts)
    assert est.surprise(fs("a", "b")) == pytest.approx(9.0)  # predicted 100, is 10
    assert est.surprise(fs("a", "c")) < 0.01  # independence predicts it
    assert est.surprise(fs("a")) == 0.0


def test_relative_error():
    assert relative_error(110, 100) == pytest.approx(0.1)
    assert relative_error(1, 0) == 1.0


rows_strategy = st.lists(
    st.tuples(*(st.sampled_from([None, 0, 1, 2, 3]) for _ in range(4))), min_size=1, max_size=40
)


@settings(max_examples=60, deadline=None)
@given(rows_strategy)
def test_estimates_stay_between_counted_subsets_and_rows(raw):
    data = [dict(zip("abcd", r, strict=True)) for r in raw]
    singles_pairs = [fs(*c) for k in (1, 2) for c in itertools.combinations("abcd", k)]
    counts = MemoryCounter(data).count(singles_pairs)
    est = Estimator(counts.rows, counts.distinct)
    for target in (fs("a", "b", "c"), fs("a", "b", "c", "d"), fs("b", "c", "d")):
        lower = max(v for s, v in counts.distinct.items() if s <= target)
        assert lower - 1e-9 <= est.estimate(target) <= counts.rows + 1e-9


def test_columns_that_determine_each_other_stand_for_each_other():
    counts = {fs("a"): 100, fs("b"): 100, fs("c"): 10, fs("a", "c"): 500}
    est = Estimator(100_000, counts, dependencies=[(fs("a"), "b"), (fs("b"), "a")])
    assert est.estimate({"b", "c"}) == 500


def test_a_determinant_outside_the_set_bounds_it():
    # product attributes: at most as many combinations as products, product_id not asked
    counts = {fs("product_id"): 1559, fs("weight"): 300, fs("width"): 200, fs("store"): 13}
    deps = [(fs("product_id"), "weight"), (fs("product_id"), "width")]
    est = Estimator(86_837, counts, dependencies=deps)
    assert est.estimate({"weight", "width"}) == 1559
    assert est.upper_bound({"weight", "width", "store"}) == 1559 * 13
    assert Estimator(86_837, counts).estimate({"weight", "width"}) > 40_000  # independence
