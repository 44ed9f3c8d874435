"""Hierarchies of a lattice's dimensions, read off distinct counts: a → b when
d(a, b) = d(a) (every value of a has one value of b: day → month → quarter → year,
brand → category → family), and every column determines a constant one.

The planner closes each candidate group-by under these dependencies: the closure has the same
rows (each added column is determined) and answers every query on a coarser level, so a tile
by month also answers quarter and year queries. Pairs are counted only inside one branch of
the star (the tables reached through one join of the fact table): a hierarchy lives in a
dimension, and pairs across dimensions are where a star's group-bys grow.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence

from mvlattice.lattice.lattice import Lattice
from mvlattice.lattice.statistic_provider import StatisticProvider
from mvlattice.plan.sizing import CountingProvider

MAX_PAIRS = 512  # pairs counted in one extra pass at most
TOLERANCE = 0.005  # sketched counts: d(a, b) within 0.5 % of d(a) is a dependency

ColumnSet = frozenset[str]


def branch_of(lattice: Lattice) -> dict[str, str]:
    """Each column label -> the alias of the root's child it hangs from (the root's join
    columns: the child they join; its other and derived columns: their own branch, by label)."""
    parent = {n.alias: n.parent for n in lattice.nodes}
    root = lattice.root.alias
    joins = {  # a join column of the root belongs to the dimension it joins
        (root, column): edge.target
        for edge in lattice.edges
        if edge.source == root
        for column in edge.source_columns
    }
    out = {}
    for c in lattice.columns:
        alias = joins.get((c.alias or "", c.column or ""), c.alias)
        while alias is not None and parent.get(alias) not in (None, root):
            alias = parent[alias]
        out[c.label] = alias if alias not in (None, root) else c.label
    return out


def dependencies(
    lattice: Lattice,
    stats: StatisticProvider,
    dims: Sequence[str],
    constants: Sequence[str] = (),
) -> dict[str, frozenset[str]]:
    """For each of `dims`, the dims it determines (transitively) and the `constants` (columns
    of one value, which every column determines), itself excluded. A dimension's key-like
    columns (as many values as its join key: product_id, product_name, SKU) determine every
    attribute of it; they are no level of a hierarchy, so they determine only the constants —
    else every tile by product would carry each of its attributes."""
    branch = branch_of(lattice)
    counts = {d: float(stats.distinct_count((d,))) for d in dims}
    levels = [d for d in dims if not _key_like(d, lattice, branch, counts)]
    pairs = [
        frozenset(p) for p in itertools.combinations(levels, 2) if branch[p[0]] == branch[p[1]]
    ][:MAX_PAIRS]
    if isinstance(stats, CountingProvider):
        missing = [p for p in pairs if not stats.is_counted(p)]
        if missing:
            stats.count_sets(missing)
    direct: dict[str, set[str]] = {d: set(constants) - {d} for d in dims}
    for pair in pairs:
        a, b = sorted(pair)
        both = float(stats.distinct_count((a, b)))
        for x, y in ((a, b), (b, a)):
            if both <= counts[x] * (1 + TOLERANCE):
                direct[x].add(y)
    return {d: frozenset(_reach(d, direct)) for d in dims}


def _key_like(
    label: str, lattice: Lattice, branch: Mapping[str, str], counts: Mapping[str, float]
) -> bool:
    """Whether `label` has (nearly) as many values as the join key of its dimension."""
    keys = [k for k in counts if branch[k] == branch[label] and _joins(k, lattice)]
    return any(counts[label] >= counts[k] * (1 - TOLERANCE) for k in keys)


def _joins(label: str, lattice: Lattice) -> bool:
    root = lattice.root.alias
    column = next((c for c in lattice.columns if c.label == label), None)
    return column is not None and any(
        e.source == root and column.alias == root and column.column in e.source_columns
        for e in lattice.edges
    )


def _reach(start: str, direct: Mapping[str, Iterable[str]]) -> set[str]:
    seen: set[str] = set()
    todo = list(direct[start])
    while todo:
        c = todo.pop()
        if c not in seen and c != start:
            seen.add(c)
            todo.extend(direct.get(c, ()))
    return seen


def closure(columns: Iterable[str], determined: Mapping[str, frozenset[str]]) -> ColumnSet:
    """The columns plus every column they determine."""
    cols = set(columns)
    for c in list(cols):
        cols |= determined.get(c, frozenset())
    return frozenset(cols)
