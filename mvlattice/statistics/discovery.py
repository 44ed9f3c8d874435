"""Unique keys and functional dependencies read off distinct counts.

X is a unique key when d(X) = rows; X → y holds when d(X ∪ {y}) = d(X) (every combination of
X has one value of y). Both are reported minimal: no subset of a key is a key, no subset of a
determinant determines the same column, and nothing is reported that a key or a constant column
already explains. A constant column c (d(c) = 1, e.g. all NULL) is reported as `-> c`.

Counts are compared with a relative `tolerance`: 0 for exact counts. Sketched counts carry an
error, so what they report is *probable* (`exact=False`) — a rewriter should not trust it blindly
— and FDs from determinants with more than 90 % as many values as rows are not reported at all
(every column looks determined by a near-key within a sketch's tolerance).

Calcite's profiler had a NULL bug here: it counted with `count(distinct a, b)`, which skips rows
with a NULL in any column, so NULLs collapsed combinations and produced false keys and FDs. Our
counters treat NULL as a value of its own (see `counting_sql`), so the counts obey GROUP BY.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from mvlattice.lattice.statistic_provider import ColumnSet, ordered

NEAR_KEY_MARGIN = 0.1  # with sketches, determinants above 90 % of the rows are near-keys


@dataclass(frozen=True, slots=True)
class FunctionalDependency:
    """`determinant -> dependent`; an empty determinant means the column is constant."""

    determinant: tuple[str, ...]
    dependent: str
    exact: bool = True

    def __str__(self) -> str:
        return f"{', '.join(self.determinant)} -> {self.dependent}".lstrip()


@dataclass(frozen=True, slots=True)
class Discovery:
    unique_keys: tuple[tuple[str, ...], ...]
    dependencies: tuple[FunctionalDependency, ...]


def discover(
    rows: int,
    counts: Mapping[ColumnSet, float],
    labels: Sequence[str] = (),
    *,
    exact: bool = True,
    tolerance: float = 0.0,
) -> Discovery:
    """Minimal unique keys and minimal FDs among the counted sets (see the module docstring)."""
    keys = _keys(rows, counts, tolerance)
    # With sketched counts, a determinant with nearly as many values as rows "determines"
    # everything within the tolerance; such FDs are noise, so they are not reported.
    near_key = rows * (1 - NEAR_KEY_MARGIN) if tolerance > 0 else float(rows)
    deps = _dependencies(counts, keys, tolerance, exact, labels, near_key)
    return Discovery(tuple(ordered(k, labels) for k in _in_order(keys, labels)), deps)


def equivalents(
    dependencies: Iterable[tuple[ColumnSet, str]], labels: Sequence[str] = ()
) -> dict[str, str]:
    """Columns that determine each other (a -> b and b -> a, transitively), each mapped to its
    class's first column in lattice order: d(S ∪ {b}) = d(S ∪ {a}), so only one needs counting.
    Representatives are not in the map."""
    single = {(next(iter(det)), dep) for det, dep in dependencies if len(det) == 1}
    parent: dict[str, str] = {}

    def find(c: str) -> str:
        while parent.get(c, c) != c:
            c = parent[c]
        return c

    position = {label: i for i, label in enumerate(labels)}
    rank = lambda c: (position.get(c, len(position)), c)  # noqa: E731
    for a, b in sorted(single):
        if (b, a) in single:
            ra, rb = find(a), find(b)
            if ra != rb:
                first, second = sorted((ra, rb), key=rank)
                parent[second] = first
    return {c: find(c) for c in parent if find(c) != c}


def _same(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance * max(a, b)


def _keys(rows: int, counts: Mapping[ColumnSet, float], tolerance: float) -> list[ColumnSet]:
    if rows <= 1:
        return []  # with one row or none every set is a key; nothing worth saying
    found: list[ColumnSet] = []
    for cols in sorted(counts, key=len):
        if cols and _same(counts[cols], rows, tolerance) and not any(k < cols for k in found):
            found.append(cols)
    return found


def _dependencies(
    counts: Mapping[ColumnSet, float],
    keys: list[ColumnSet],
    tolerance: float,
    exact: bool,
    labels: Sequence[str],
    near_key: float,
) -> tuple[FunctionalDependency, ...]:
    constants = {next(iter(s)) for s, d in counts.items() if len(s) == 1 and d <= 1}
    found: dict[str, list[ColumnSet]] = {c: [frozenset()] for c in constants}
    for target in sorted(counts, key=len):
        for dep in _in_order(target, labels):
            det = target - {dep}
            if not det or det not in counts or dep in constants:
                continue
            if counts[det] >= near_key or any(k <= det for k in keys):
                continue  # a key determines everything: nothing worth saying
            if any(d <= det for d in found.get(dep, ())):
                continue  # a smaller determinant already does
            if _same(counts[target], counts[det], tolerance):
                found.setdefault(dep, []).append(det)
    out = [
        FunctionalDependency(ordered(det, labels), dep, exact)
        for dep, dets in found.items()
        for det in dets
    ]
    position = {label: i for i, label in enumerate(labels)}
    return tuple(
        sorted(
            out,
            key=lambda f: (
                len(f.determinant),
                [position.get(c, len(position)) for c in f.determinant],
                position.get(f.dependent, len(position)),
                f.determinant,
                f.dependent,
            ),
        )
    )


def _in_order(sets: Sequence[ColumnSet] | ColumnSet, labels: Sequence[str]) -> list:
    """Sets (or the columns of one set) in a stable order: by size, then lattice order."""
    position = {label: i for i, label in enumerate(labels)}
    if isinstance(sets, frozenset):
        return sorted(sets, key=lambda c: (position.get(c, len(position)), c))
    return sorted(
        sets, key=lambda s: (len(s), sorted(position.get(c, len(position)) for c in s), sorted(s))
    )
