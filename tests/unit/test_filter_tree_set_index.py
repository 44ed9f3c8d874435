"""The lattice-of-sets index answers subset, superset and near-subset questions exactly as a
scan of its keys would, through any sequence of insertions and removals."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mvlattice.mvrewrite.index.set_index import SetIndex

S = frozenset
ELEMENTS = st.sampled_from("abcdefgh")
SETS = st.frozensets(ELEMENTS, max_size=6)
OPERATIONS = st.lists(st.tuples(st.booleans(), SETS), max_size=40)


def build(operations: list[tuple[bool, frozenset]]) -> tuple[SetIndex[str], set[frozenset]]:
    index: SetIndex[str] = SetIndex()
    keys: set[frozenset] = set()
    for insert, key in operations:
        if insert:
            index.setdefault(key, lambda k=key: "".join(sorted(k)))
            keys.add(key)
        elif key in keys:
            index.pop(key)
            keys.discard(key)
    return index, keys


@settings(max_examples=300, deadline=None)
@given(OPERATIONS, SETS, st.integers(0, 2))
def test_searches_agree_with_a_scan(operations, query, slack) -> None:
    index, keys = build(operations)
    assert sorted(map(sorted, index.subsets_of(query))) == sorted(
        sorted(k) for k in keys if k <= query
    )
    assert sorted(map(sorted, index.supersets_of(query))) == sorted(
        sorted(k) for k in keys if k >= query
    )
    assert sorted(map(sorted, index.within(query, slack))) == sorted(
        sorted(k) for k in keys if len(k - query) <= slack
    )
    assert len(index) == len(keys)
    assert all(index[k] == "".join(sorted(k)) for k in keys)


@settings(max_examples=100, deadline=None)
@given(OPERATIONS, OPERATIONS, SETS)
def test_a_copy_is_independent(first, then, query) -> None:
    index, keys = build(first)
    copy = index.copy(lambda payload: payload)
    for insert, key in then:
        if insert:
            copy.setdefault(key, lambda: "new")
        elif key in copy:
            copy.pop(key)
    assert sorted(map(sorted, index.subsets_of(query))) == sorted(
        sorted(k) for k in keys if k <= query
    )


def test_subsets_are_found_by_probing_or_by_counting() -> None:
    index: SetIndex[int] = SetIndex()
    for i, key in enumerate([S(), S("a"), S("ab"), S("abc"), S("bd"), S("x")]):
        index.setdefault(key, lambda i=i: i)
    small, large = S("ab"), S("abcdefghijklmnop")  # 4 probes; 65536 would be too many
    assert set(index.subsets_of(small)) == {S(), S("a"), S("ab")}
    assert set(index.subsets_of(large)) == {S(), S("a"), S("ab"), S("abc"), S("bd")}
    assert set(index.supersets_of(S("b"))) == {S("ab"), S("abc"), S("bd")}
    assert set(index.supersets_of(S("bz"))) == set()
    assert set(index.within(S("ab"), 1)) == {S(), S("a"), S("ab"), S("abc"), S("bd"), S("x")}


def test_an_existing_key_keeps_its_payload() -> None:
    index: SetIndex[list[int]] = SetIndex()
    first = index.setdefault(S("a"), list)
    first.append(1)
    assert index.setdefault(S("a"), list) == [1]
    assert index.pop(S("a")) == [1]
    assert S("a") not in index
    assert list(index.subsets_of(S("a"))) == []
