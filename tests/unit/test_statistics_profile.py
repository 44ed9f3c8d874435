"""Which sets the profiler counts, and the keys and FDs it reports (no Spark: MemoryCounter)."""

from __future__ import annotations

import itertools

from mvlattice.statistics.discovery import FunctionalDependency, discover, equivalents
from mvlattice.statistics.memory import MemoryCounter
from mvlattice.statistics.profile import bounds, next_level, run_profile

LABELS = ("id", "month", "quarter", "region", "store", "promo", "x", "y", "w", "nothing")


def fs(*cols: str) -> frozenset[str]:
    return frozenset(cols)


def sample_rows() -> list[dict]:
    """id is a key; month -> quarter; store -> region; month and store correlate (24 of 96
    combinations occur); promo is independent of both; x, y, w (i mod 6, 10, 15) correlate
    pairwise and all three take only 30 combinations; nothing is all NULL; region has a NULL
    value of its own."""
    rows = []
    for i in range(240):
        month = i % 12 + 1
        store = i % 8
        rows.append(
            {
                "id": i,
                "month": month,
                "quarter": (month - 1) // 3 + 1,
                "region": None if store < 2 else store % 3,
                "store": store,
                "promo": i % 5,
                "x": i % 6,
                "y": i % 10,
                "w": i % 15,
                "nothing": None,
            }
        )
    return rows


def test_first_pass_counts_every_single_and_pair_at_once():
    counter = MemoryCounter(sample_rows())
    run_profile(counter, "lat", LABELS, max_size=2)
    assert len(counter.calls) == 1
    expected = {fs(c) for c in LABELS} | {fs(*p) for p in itertools.combinations(LABELS, 2)}
    assert set(counter.calls[0]) == expected


def test_max_size_one_counts_singles_only():
    counter = MemoryCounter(sample_rows())
    profile = run_profile(counter, "lat", LABELS, max_size=1)
    assert {len(s) for s in profile.sets()} == {1}


def test_keys_fds_and_constants_are_discovered():
    profile = run_profile(MemoryCounter(sample_rows()), "lat", LABELS, max_size=2)
    assert profile.rows == 240
    assert profile.unique_keys == (("id",),)
    found = {str(f) for f in profile.dependencies}
    assert "month -> quarter" in found
    assert "store -> region" in found
    assert "-> nothing" in found  # all NULL: one value
    # minimal: the key determines everything, but that is not reported
    assert not any(f.determinant == ("id",) for f in profile.dependencies)
    assert not any(f.dependent == "nothing" and f.determinant for f in profile.dependencies)


def test_null_is_a_value_of_its_own():
    rows = [{"a": None, "b": 1}, {"a": 1, "b": None}, {"a": None, "b": None}, {"a": 1, "b": 1}]
    profile = run_profile(MemoryCounter(rows), "lat", ("a", "b"), max_size=2)
    assert profile.counts[fs("a")] == 2  # NULL and 1
    assert profile.counts[fs("a", "b")] == 4  # no NULL collapses a combination
    assert profile.unique_keys == (("a", "b"),)
    assert profile.dependencies == ()


def test_larger_levels_only_for_surprising_extendable_sets():
    counter = MemoryCounter(sample_rows())
    profile = run_profile(counter, "lat", LABELS, max_size=3)
    triples = [s for s in profile.counts if len(s) == 3]
    assert fs("x", "y", "w") in triples  # every pair is surprising, the triple is not bounded
    assert profile.counts[fs("x", "y", "w")] == 30
    # (month, store) is surprising, but promo is independent of both: the cover predicts it
    assert fs("month", "store", "promo") not in triples
    for t in triples:
        assert "id" not in t  # supersets of a key are never counted
        assert "nothing" not in t  # a constant is implied by the empty set
        assert not {"month", "quarter"} <= t  # month -> quarter: derivable
    assert len(counter.calls) == 2 and profile.passes == 2


def test_independent_columns_stop_at_pairs():
    rows = [{"a": i % 5, "b": (i // 5) % 7, "c": (i // 35) % 3} for i in range(105)]
    counter = MemoryCounter(rows)
    profile = run_profile(counter, "lat", ("a", "b", "c"), max_size=3)
    assert fs("a", "b", "c") not in profile.counts  # independence predicts it; nothing to count
    assert len(counter.calls) == 1


def test_next_level_is_ranked_and_capped():
    profile = run_profile(MemoryCounter(sample_rows()), "lat", LABELS, max_size=2)
    everything = next_level(profile, 3, limit=1000)
    assert next_level(profile, 3, limit=1) == everything[:1]


def test_sketched_findings_are_approximate_and_only_where_the_error_supports_them():
    counts = {fs("a"): 1000.0, fs("b"): 10.0, fs("a", "b"): 1004.0, fs("b", "c"): 30.0}
    counts |= {fs("c"): 30.0}
    found = discover(100_000, counts, ("a", "b", "c"), exact=False, tolerance=0.01)
    # a -> b is within the tolerance, but 4 violating combinations would not show: not claimed
    assert found.dependencies == (FunctionalDependency(("c",), "b", exact=False),)
    assert found.unsupported == ((fs("a"), "b"),)
    assert discover(100_000, counts, ("a", "b", "c")).dependencies == (
        FunctionalDependency(("c",), "b"),
    )


def test_to_json_shape():
    profile = run_profile(MemoryCounter(sample_rows()), "lat", LABELS, max_size=2)
    doc = profile.to_json()
    assert doc["lattice"] == "lat" and doc["rows"] == 240
    assert doc["distinct"][0] == {"columns": ["id"], "count": 240, "exact": True}
    pair = next(d for d in doc["distinct"] if d["columns"] == ["month", "quarter"])
    assert pair["count"] == 12
    assert doc["unique_keys"] == [["id"]]
    assert {"determinant": ["month"], "dependent": "quarter", "exact": True} in doc[
        "functional_dependencies"
    ]


def test_equivalent_columns_map_to_the_first_in_lattice_order():
    deps = [(fs("b"), "a"), (fs("a"), "b"), (fs("c"), "b"), (fs("b"), "c"), (fs("a"), "d")]
    assert equivalents(deps, ("c", "a", "b", "d")) == {"a": "c", "b": "c"}
    assert equivalents(deps) == {"b": "a", "c": "a"}


def test_bounds_from_counted_parts():
    profile = run_profile(MemoryCounter(sample_rows()), "lat", LABELS, max_size=2)
    lower, upper = bounds(profile, fs("x", "y", "w"))
    assert lower == 30  # every pair has 30 combinations
    assert upper == 30 * 6  # (y, w) times x
