"""HRU96's "computable from" order, indexed: views by position, each view's set of answerable
views as a bitset (the transitive closure of the given edges, or the subset order on column
sets), and the input checks that go with it."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from mvlattice.errors import UsageError

Edge = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Indexed:
    """The lattice by index: `answers[v]` lists the weighted views w ⪯ v (v itself included),
    ascending, so every benefit sums its terms in one fixed order."""

    names: tuple[str, ...]
    sizes: tuple[float, ...]
    weights: tuple[float, ...]
    answers: tuple[tuple[int, ...], ...]
    top: int
    weighted: tuple[int, ...]


def finite_non_negative(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and value >= 0


def closure(names: tuple[str, ...], index: Mapping[str, int], edges: Iterable[Edge]) -> list[int]:
    """For each view, the bitset of views it answers (itself included), from (parent, child)
    edges; rejects unknown views, cycles and anything but one top."""
    children: list[list[int]] = [[] for _ in names]
    parents = [0] * len(names)
    for edge in edges:
        if not isinstance(edge, tuple | list) or len(edge) != 2:
            raise UsageError(f"an edge must be a (parent, child) pair, got {edge!r}")
        parent, child = edge
        for name in edge:
            if name not in index:
                raise UsageError(f"edge ({parent!r}, {child!r}) names unknown view {name!r}")
        children[index[parent]].append(index[child])
        parents[index[child]] += 1
    order = _topological(names, children, parents)
    below = [0] * len(names)
    for v in reversed(order):
        bits = 1 << v
        for c in children[v]:
            bits |= below[c]
        below[v] = bits
    check_single_top(names, below)
    return below


def _topological(
    names: tuple[str, ...], children: list[list[int]], parents: list[int]
) -> list[int]:
    """Kahn's algorithm, parents before children; a leftover view lies on or under a cycle."""
    waiting = list(parents)
    order = [v for v, count in enumerate(waiting) if count == 0]
    for v in order:  # grows while iterating: each child is appended once all its parents are in
        for c in children[v]:
            waiting[c] -= 1
            if waiting[c] == 0:
                order.append(c)
    if len(order) < len(names):
        raise UsageError("edges form a cycle: " + " -> ".join(_a_cycle(names, children, order)))
    return order


def _a_cycle(names: tuple[str, ...], children: list[list[int]], done: list[int]) -> list[str]:
    # Every view Kahn left over has a left-over parent, so walking up parents must repeat a view.
    left = set(range(len(names))) - set(done)
    parent_of = {c: p for p in sorted(left, reverse=True) for c in children[p] if c in left}
    path, v = [], min(left)
    while v not in path:
        path.append(v)
        v = parent_of[v]
    cycle = path[path.index(v) :][::-1]  # walked child to parent; print parent to child
    start = cycle.index(min(cycle, key=names.__getitem__))
    cycle = cycle[start:] + cycle[:start]
    return [names[u] for u in (*cycle, cycle[0])]


def check_single_top(names: tuple[str, ...], below: Sequence[int]) -> None:
    if not names:
        raise UsageError("no views given: a lattice needs at least its top view")
    under_something = 0
    for v, bits in enumerate(below):
        under_something |= bits & ~(1 << v)
    tops = [names[v] for v in range(len(names)) if not under_something >> v & 1]
    if len(tops) != 1:
        raise UsageError(f"no unique top view: {', '.join(tops)} are computable from no view")


def subset_bits(sets: tuple[frozenset[str], ...]) -> list[int]:
    # w ⊆ v iff w lacks every column v lacks: intersect, over the columns v lacks, the bitsets
    # of views lacking that column (a few big-int ANDs per view instead of n subset tests).
    everyone = (1 << len(sets)) - 1
    columns = sorted(frozenset().union(*sets))
    lacking = {c: sum(1 << v for v, s in enumerate(sets) if c not in s) for c in columns}
    below = []
    for s in sets:
        bits = everyone
        for c in columns:
            if c not in s:
                bits &= lacking[c]
        below.append(bits)
    return below


def indexed(
    names: tuple[str, ...],
    sizes: Mapping[str, float],
    weights: Mapping[str, float] | None,
    below: Sequence[int],
) -> Indexed:
    for name in names:
        if not finite_non_negative(sizes[name]):
            raise UsageError(f"size of view {name!r} must be a non-negative number")
    if weights is None:
        weight = tuple(1.0 for _ in names)
    else:
        unknown = sorted(set(weights) - set(names))
        if unknown:
            raise UsageError(f"weights name unknown views: {', '.join(unknown)}")
        if not all(finite_non_negative(w) for w in weights.values()):
            raise UsageError("weights must be non-negative numbers")
        weight = tuple(float(weights.get(name, 0.0)) for name in names)
    # Only weighted views carry cost, so benefits need only the weighted views each view answers.
    weighted = sum(1 << v for v, w in enumerate(weight) if w > 0)
    answers = tuple(bit_indices(bits & weighted) for bits in below)
    top = next(v for v, bits in enumerate(below) if bits.bit_count() == len(names))
    size = tuple(float(sizes[name]) for name in names)
    return Indexed(names, size, weight, answers, top, bit_indices(weighted))


def required_views(index: Mapping[str, int], required: Iterable[str]) -> tuple[int, ...]:
    wanted: list[int] = []
    for name in required:
        if name not in index:
            raise UsageError(f"required view {name!r} is not in the lattice")
        if index[name] not in wanted:
            wanted.append(index[name])
    return tuple(wanted)


def bit_indices(bits: int) -> tuple[int, ...]:
    found = []
    while bits:
        low = bits & -bits
        found.append(low.bit_length() - 1)
        bits ^= low
    return tuple(found)
