"""Providers without Spark: the dict provider, the profiled provider, the persistent cache."""

from __future__ import annotations

import json

import pytest

from mvlattice.delta.sources import SourceVersion as V
from mvlattice.errors import NotFoundError
from mvlattice.lattice.lattice import Lattice, LatticeColumn, Node
from mvlattice.statistics import DictStatisticProvider, StatisticProvider
from mvlattice.statistics.cache import CachingCounter
from mvlattice.statistics.counting_sql import (
    column_hashes,
    exact_select,
    key_expression,
)
from mvlattice.statistics.estimate import independence
from mvlattice.statistics.memory import MemoryCounter
from mvlattice.statistics.profile import run_profile
from mvlattice.statistics.profiled import ProfiledStatisticProvider
from mvlattice.statistics.store import LocalFiles, statistics_store


def fs(*cols: str) -> frozenset[str]:
    return frozenset(cols)


ROWS = [{"a": i % 4, "b": i % 3, "c": None if i % 5 == 0 else i % 2} for i in range(60)]


# -- the dict provider ---------------------------------------------------------------------
def test_dict_provider_answers_counted_sets_and_records_questions():
    provider: StatisticProvider = DictStatisticProvider(
        1000, {"a": 10, ("a", "b"): 37, frozenset({"b"}): 20}
    )
    assert provider.row_count() == 1000
    assert provider.distinct_count(["b", "a"]) == 37
    assert provider.distinct_count(("a",)) == 10
    assert provider.distinct_count(()) == 1
    assert provider.asked == [fs("a", "b"), fs("a"), fs()]


def test_dict_provider_estimates_the_rest_or_refuses_when_strict():
    provider = DictStatisticProvider(1000, {"a": 10, "b": 20})
    assert provider.distinct_count(["a", "b"]) == pytest.approx(independence(1000, (10, 20)))
    strict = DictStatisticProvider(1000, {"a": 10}, strict=True)
    with pytest.raises(KeyError):
        strict.distinct_count(["a", "b"])


def test_dict_provider_uses_keys_and_dependencies():
    provider = DictStatisticProvider(
        500, {"id": 500, "m": 12, "q": 4}, keys=[["id"]], dependencies=[(["m"], "q")]
    )
    assert provider.distinct_count(["id", "q"]) == 500
    assert provider.distinct_count(["m", "q"]) == 12


# -- the profiled provider -----------------------------------------------------------------
def test_profiled_provider_profiles_once_on_first_question():
    builds = []
    counter = MemoryCounter(ROWS)

    def build():
        builds.append(1)
        return run_profile(counter, "lat", ("a", "b", "c"), max_size=2)

    provider = ProfiledStatisticProvider(build, counter)
    assert builds == []
    assert provider.row_count() == 60
    assert provider.distinct_count(["c"]) == 3  # 0, 1 and NULL
    assert provider.distinct_count(["a", "b"]) == 12
    assert builds == [1]
    assert provider.is_counted(["a", "b"]) and not provider.is_counted(["a", "b", "c"])
    assert 12 <= provider.distinct_count(["a", "b", "c"]) <= 60


def test_profiled_provider_counts_more_sets_in_one_pass():
    counter = MemoryCounter(ROWS)
    provider = ProfiledStatisticProvider(
        run_profile(counter, "lat", ("a", "b", "c"), max_size=2), counter
    )
    got = provider.count_sets([("a", "b", "c"), ("a", "b")])
    assert got[fs("a", "b", "c")] == len({(r["a"], r["b"], r["c"]) for r in ROWS})
    assert counter.calls[-1] == (fs("a", "b", "c"),)  # only the missing set was counted
    assert provider.is_counted(["a", "b", "c"])
    assert provider.profile.passes == 2


def test_profiled_provider_rejects_unknown_columns():
    provider = ProfiledStatisticProvider(
        run_profile(MemoryCounter(ROWS), "lat", ("a", "b", "c"), max_size=1)
    )
    with pytest.raises(NotFoundError, match="lattice 'lat' has no column 'bb'.*'b'"):
        provider.distinct_count(["a", "bb"])


# -- the persistent cache ------------------------------------------------------------------
def lattice(sql: str = "select 1 from s.f as f") -> Lattice:
    cols = tuple(LatticeColumn(c, "f", c, f"`f`.`{c}`") for c in ("a", "b", "c"))
    return Lattice("lat", "s", sql, (Node("f", "s", "f"),), (), cols)


def test_cache_is_hit_for_the_same_versions(tmp_path):
    store = statistics_store(str(tmp_path), lattice(), "exact", {"s.f": V(3, "id")})
    first = CachingCounter(MemoryCounter(ROWS), store)
    counts = first.count([fs("a"), fs("a", "b")])
    assert (first.hits, first.misses) == (0, 2)

    again = MemoryCounter([])  # would count nothing right: it must not be asked
    second = CachingCounter(
        again, statistics_store(str(tmp_path), lattice(), "exact", {"s.f": V(3, "id")})
    )
    assert second.count([fs("a"), fs("a", "b")]).distinct == counts.distinct
    assert second.count([fs("a", "b")]).rows == 60
    assert again.calls == [] and (second.hits, second.misses) == (3, 0)


def test_cache_counts_only_missing_sets_and_misses_on_new_versions(tmp_path):
    CachingCounter(
        MemoryCounter(ROWS),
        statistics_store(str(tmp_path), lattice(), "exact", {"s.f": V(3, "id")}),
    ).count([fs("a")])
    inner = MemoryCounter(ROWS)
    same = CachingCounter(
        inner, statistics_store(str(tmp_path), lattice(), "exact", {"s.f": V(3, "id")})
    )
    same.count([fs("a"), fs("b")])
    assert inner.calls == [(fs("b"),)]

    newer = MemoryCounter(ROWS)
    changed = CachingCounter(
        newer, statistics_store(str(tmp_path), lattice(), "exact", {"s.f": V(4, "id")})
    )
    changed.count([fs("a")])
    assert newer.calls == [(fs("a"),)]


def test_cache_key_covers_the_lattice_definition_and_method(tmp_path):
    base = statistics_store(str(tmp_path), lattice(), "exact", {"s.f": V(1, "id")})
    other_sql = statistics_store(str(tmp_path), lattice("select 1 from s.g as f"), "exact", {})
    other_method = statistics_store(str(tmp_path), lattice(), "hll16", {"s.f": V(1, "id")})
    assert base is not None and other_sql is not None and other_method is not None
    assert len({base.location, other_sql.location, other_method.location}) == 3
    assert base.location.startswith(str(tmp_path / "_mvlattice" / "statistics" / "lat"))


def test_no_persistent_cache_without_delta_versions(tmp_path):
    assert statistics_store(str(tmp_path), lattice(), "exact", {"s.f": V(None)}) is None
    counter = CachingCounter(MemoryCounter(ROWS), None)
    counter.count([fs("a")])
    counter.count([fs("a")])
    assert counter.persistent is False and (counter.hits, counter.misses) == (1, 1)


def test_a_damaged_cache_file_is_a_miss(tmp_path):
    store = statistics_store(str(tmp_path), lattice(), "exact", {"s.f": V(1, "id")})
    assert store is not None
    LocalFiles().write(store.location, "{not json")
    inner = MemoryCounter(ROWS)
    CachingCounter(inner, store).count([fs("a")])
    assert inner.calls == [(fs("a"),)]
    doc = json.loads(LocalFiles().read(store.location) or "")
    assert doc["rows"] == 60 and doc["key"]["sources"] == {"s.f": 1}


# -- the counting SQL (run on Spark by the integration tests) -------------------------------
def test_exact_sql_groups_narrow_rows_per_set():
    keys = {"a": "`a`", "b": "CAST(`b` AS STRING)", "c": "hex(`c`)"}
    text = exact_select("{star}", ("a", "b", "c"), [("a",), ("a", "c")], keys)
    assert "stack(2, 0, `s0`, CAST(NULL AS STRING), 1, `s0`, `s2`) AS (sid, k0, k1)" in text
    assert "SELECT `a` AS `s0`, CAST(`b` AS STRING) AS `s1`, hex(`c`) AS `s2` FROM {star}" in text
    assert "GROUP BY sid, k0, k1" in text


def test_key_expressions_keep_values_apart():
    assert key_expression("x", "string") == "`x`"
    assert key_expression("x", "decimal(10,4)") == "CAST(`x` AS STRING)"
    assert key_expression("x", "binary") == "hex(`x`)"
    assert key_expression("x", "array<int>") == "to_json(`x`)"


def test_sketch_sql_hashes_nulls_apart():
    text = column_hashes("t", ("a", "b"))
    assert "xxhash64(`a`, isnull(`a`)) AS `h0`" in text
    assert "xxhash64(`b`, isnull(`b`)) AS `h1`" in text
