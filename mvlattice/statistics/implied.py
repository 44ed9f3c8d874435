"""Column sets whose distinct count the star's joins fix: counted once, never sketched twice.

A lattice's joins are inner many-to-one equi-joins (Calcite's lattice, `lattice.star`): on
every row of the star an edge's source columns equal its target columns, and the target columns
— a key of the target table — determine every column of the target and of the tables joined
below it. So {s.product_id, p.product_id, brand} has exactly as many distinct values as
{s.product_id}: `representative` drops every column the rest of the set determines, and the
profiler sketches only representatives (bench/profile.py: 298 sets of ≤ 3 columns, 141
representatives). Derived columns (expressions) are never dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mvlattice.lattice.lattice import Lattice

Dependencies = tuple[tuple[frozenset[str], frozenset[str]], ...]  # (determinant, dependents)


def dependencies(lattice: Lattice) -> Dependencies:
    """The functional dependencies among labels that the star's edges guarantee."""
    label = {(c.alias, c.column): c.label for c in lattice.columns if not c.derived}
    below = _descendants(lattice)
    out = []
    for edge in lattice.edges:
        source = [label.get((edge.source, c)) for c in edge.source_columns]
        target = [label.get((edge.target, c)) for c in edge.target_columns]
        determined = frozenset(
            c.label for c in lattice.columns if not c.derived and c.alias in below[edge.target]
        )
        if all(target):
            key = frozenset(t for t in target if t)
            out.append((key, determined | {s for s in source if s}))
        if all(source):  # equal to the target's key on every row, so a key of it too
            out.append((frozenset(s for s in source if s), determined))
    return tuple(out)


def closure(columns: Iterable[str], fds: Dependencies) -> frozenset[str]:
    found = set(columns)
    changed = True
    while changed:
        changed = False
        for key, dependents in fds:
            if key <= found and not dependents <= found:
                found |= dependents
                changed = True
    return frozenset(found)


def representative(
    columns: frozenset[str], fds: Dependencies, order: Mapping[str, int]
) -> frozenset[str]:
    """`columns` less every column the others determine (the last in `order` dropped first):
    a subset with exactly the same number of distinct values."""
    kept = set(columns)
    for column in sorted(columns, key=lambda c: order.get(c, len(order)), reverse=True):
        if column in closure(kept - {column}, fds):
            kept.discard(column)
    return frozenset(kept)


def _descendants(lattice: Lattice) -> dict[str, set[str]]:
    """Alias -> itself and every alias joined below it."""
    children: dict[str, list[str]] = {}
    for edge in lattice.edges:
        children.setdefault(edge.source, []).append(edge.target)
    out: dict[str, set[str]] = {}

    def walk(alias: str) -> set[str]:
        if alias not in out:
            out[alias] = {alias}
            for child in children.get(alias, []):
                out[alias] |= walk(child)
        return out[alias]

    for node in lattice.nodes:
        walk(node.alias)
    return out
