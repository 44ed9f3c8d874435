"""Which dependencies sketched counts may claim (`statistics.support`); no Spark."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

from mvlattice.cli.cmd_profile import profile_lines
from mvlattice.lattice.statistic_provider import Counts
from mvlattice.statistics import discovery, support
from mvlattice.statistics.discovery import FunctionalDependency, discover
from mvlattice.statistics.hll import estimate, update
from mvlattice.statistics.profile import build_profile
from mvlattice.statistics.support import largest_supported, sketch_supports

ROWS = 86_837
FOODMART = ("store_sales", "gross_weight", "brand_name", "the_month", "quarter")


def fs(*cols: str) -> frozenset[str]:
    return frozenset(cols)


def test_docstring_examples_run() -> None:
    assert doctest.testmod(support).failed == 0
    assert doctest.testmod(discovery).failed == 0


def test_the_limit_keeps_a_hidden_violation_below_alpha() -> None:
    m = 1 << 16
    n = largest_supported(16, 0.01)
    assert n == 35
    assert (n + 1) * n / (2 * m) <= 0.01 < (n + 2) * (n + 1) / (2 * m)
    assert largest_supported(18, 0.01) > largest_supported(16, 0.01) > largest_supported(12, 0.01)


def test_small_sketches_are_exact_unless_registers_are_shared() -> None:
    """The rule's premise: below the limit, n hashes in distinct registers estimate n after
    rounding, and every shared register loses exactly one value (never an overshoot)."""
    rng = np.random.default_rng(7)
    for n in (1, 2, 12, 35, 36, 200):
        for _ in range(50):
            hashes = rng.integers(0, 2**63, size=n, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
            registers = np.zeros(1 << 16, np.uint8)
            update(registers, hashes, 16)
            occupied = len(set((hashes >> np.uint64(48)).tolist()))
            assert round(estimate(registers)) == occupied


def test_large_counts_within_the_error_are_not_claimed() -> None:
    """FoodMart's `store_sales, gross_weight -> brand_name`: 0.7 % apart is within ±2 %, but
    at 20,000 values that is 140 possibly violating combinations."""
    counts = {
        fs("store_sales"): 1_049.0,
        fs("gross_weight"): 376.0,
        fs("brand_name"): 111.0,
        fs("store_sales", "gross_weight"): 20_140.0,
        fs("store_sales", "brand_name"): 19_874.0,
        fs("gross_weight", "brand_name"): 1_490.0,
        fs("store_sales", "gross_weight", "brand_name"): 20_281.0,
    }
    found = discover(ROWS, counts, FOODMART, exact=False, tolerance=0.02)
    assert found.dependencies == ()
    assert found.unsupported == ((fs("store_sales", "gross_weight"), "brand_name"),)
    assert not sketch_supports(20_140.0, 20_281.0)
    assert not sketch_supports(20_140.0, 20_140.0)  # equal, but one violation would not show


def test_a_true_dependency_with_small_counts_is_claimed() -> None:
    counts = {
        fs("the_month"): 12.0,
        fs("quarter"): 4.0,
        fs("the_month", "quarter"): 12.0,
        fs("brand_name"): 111.0,
        fs("brand_name", "the_month"): 1_332.0,
    }
    found = discover(ROWS, counts, FOODMART, exact=False, tolerance=0.02)
    assert found.dependencies == (FunctionalDependency(("the_month",), "quarter", exact=False),)
    assert found.unsupported == ()
    exact = discover(ROWS, counts, FOODMART)
    assert exact.dependencies == (FunctionalDependency(("the_month",), "quarter"),)


def test_small_counts_one_apart_are_a_violation_and_large_exact_ones_a_dependency() -> None:
    counts = {fs("a"): 30.0, fs("b"): 3.0, fs("a", "b"): 31.0}
    assert discover(ROWS, counts, ("a", "b"), exact=False, tolerance=0.05).dependencies == ()
    big = {fs("a"): 20_140.0, fs("b"): 111.0, fs("a", "b"): 20_140.0}
    assert discover(ROWS, big, ("a", "b")).dependencies == (FunctionalDependency(("a",), "b"),)
    assert discover(ROWS, big, ("a", "b"), exact=False, tolerance=0.02).dependencies == ()


def test_what_the_joins_guarantee_is_claimed_at_any_count() -> None:
    counts = {fs("s.product_id"): 1_559.0, fs("brand_name"): 111.0}
    counts[fs("s.product_id", "brand_name")] = 1_559.0
    joins = ((fs("s.product_id"), fs("brand_name")),)
    labels = ("s.product_id", "brand_name")
    found = discover(ROWS, counts, labels, exact=False, tolerance=0.02, guaranteed=joins)
    assert found.dependencies == (FunctionalDependency(("s.product_id",), "brand_name", False),)
    assert discover(ROWS, counts, labels, exact=False, tolerance=0.02).dependencies == ()


def test_what_is_not_claimed_still_serves_the_planners_estimator() -> None:
    """Not claimed to users, a -> b still makes the estimate d(a, b, c) = d(a, c): off by the
    sketches' error at most, and on FoodMart better than the measured ratio d(a, b) / d(a)."""
    counts = {fs("a"): 1_000.0, fs("b"): 100.0, fs("c"): 50.0, fs("a", "b"): 1_004.0}
    counts |= {fs("a", "c"): 5_000.0, fs("b", "c"): 4_000.0, fs(): 1.0}
    profile = build_profile("lat", ("a", "b", "c"), Counts(ROWS, counts, False), "hll",
                            tolerance=0.02)  # fmt: skip
    assert profile.dependencies == () and profile.unsupported == ((fs("a"), "b"),)
    assert profile.estimator.estimate(fs("a", "b", "c")) == pytest.approx(5_000)
    assert profile.to_json()["unsupported_dependencies"] == 1


def test_a_key_is_claimed_on_the_same_evidence() -> None:
    """(s.product_id, customer_id) within 2 % of 86,837 rows: 1,700 duplicates would not show.
    A near-key still bounds its supersets for the estimator: between its count and the rows."""
    counts = {fs("s.product_id"): 1_559.0, fs("customer_id"): 5_581.0, fs(): 1.0}
    counts[fs("s.product_id", "customer_id")] = 85_900.0
    labels = ("s.product_id", "customer_id", "store_id")
    found = discover(ROWS, counts, labels, exact=False, tolerance=0.02)
    assert found.unique_keys == () and found.near_keys == (("s.product_id", "customer_id"),)
    profile = build_profile("lat", labels, Counts(ROWS, counts, False), "hll", tolerance=0.02)
    assert profile.to_json()["unique_keys"] == [] and profile.to_json()["unsupported_keys"] == 1
    every = profile.estimator.estimate(fs("s.product_id", "customer_id", "store_id"))
    assert 85_900 <= every <= ROWS
    tiny = {fs("id"): 8.0, fs("g"): 3.0, fs("id", "g"): 8.0}
    assert discover(8, tiny, ("id", "g"), exact=False, tolerance=0.02).unique_keys == (("id",),)
    seven = {fs("id"): 7.0, fs("g"): 3.0}  # one duplicate row: small counts show it
    assert discover(8, seven, ("id", "g"), exact=False, tolerance=0.2).unique_keys == ()


def test_profile_text_counts_what_it_does_not_claim() -> None:
    doc = {"distinct": [], "unique_keys": [], "unsupported_dependencies": 182}
    doc |= {"unsupported_keys": 5}
    deps = [FunctionalDependency(("the_month",), "quarter", False)]
    text = "\n".join(profile_lines(doc, deps, show_all=True))
    assert "the_month -> quarter  (approximate)" in text
    assert "not claimed: 182 dependencies that hold only within the sketches' error" in text
    assert "unique keys: none found (not claimed: 5 sets unique only within the sketches'" in text
    quiet = {**doc, "unsupported_dependencies": 0, "unsupported_keys": 0}
    assert "not claimed" not in "\n".join(profile_lines(quiet, deps, show_all=False))
