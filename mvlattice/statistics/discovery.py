"""Unique keys and functional dependencies read off distinct counts.

X is a unique key when d(X) = rows; X → y holds when d(X ∪ {y}) = d(X) (every combination of
X has one value of y). Both are reported minimal: no subset of a key is a key, no subset of a
determinant determines the same column, and nothing is reported that a key or a constant column
already explains. A constant column c (d(c) = 1, e.g. all NULL) is reported as `-> c`.

Counts equal within a relative `tolerance` (0 for exact counts) are candidates. A dependency
(and a key, X -> every column) is claimed only where the counts can tell it from a violation
(`support`): exact counts that are equal; sketched counts that are equal and small enough that
one violating combination would show (n ≤ 35 at p = 16), marked `exact=False`; or a dependency
the star's joins guarantee (`guaranteed`, from `statistics.implied`). Sketched counts equal
only within the tolerance are not claimed (`unsupported`, `near_keys`): at 1,000 values ±2 %
hides 20 violating combinations. The planner's estimator never takes them as dependencies, only
as the measured ratio d(X ∪ {y}) / d(X) (`estimate`, rule 1); a near-key still bounds its
supersets' counts between its own and the rows.

Calcite's profiler had a NULL bug here: it counted with `count(distinct a, b)`, which skips rows
with a NULL in any column, so NULLs collapsed combinations and produced false keys and FDs. Our
counters treat NULL as a value of its own (see `counting_sql`), so the counts obey GROUP BY.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from mvlattice.lattice.statistic_provider import ColumnSet, ordered
from mvlattice.statistics.implied import Dependencies, closure
from mvlattice.statistics.support import SUPPORTED, sketch_supports

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
    # (determinant, dependent) equal only within the tolerance: not claimed; the estimator
    # uses their measured ratio
    unsupported: tuple[tuple[ColumnSet, str], ...] = ()
    # sets with as many values as rows only within the tolerance: not claimed; d(S ⊇ X) is
    # between d(X) and the rows, so the estimator may still bound by them
    near_keys: tuple[tuple[str, ...], ...] = ()


def discover(
    rows: int,
    counts: Mapping[ColumnSet, float],
    labels: Sequence[str] = (),
    *,
    exact: bool = True,
    tolerance: float = 0.0,
    guaranteed: Dependencies = (),
    limit: float = SUPPORTED,
) -> Discovery:
    """Minimal unique keys and minimal FDs among the counted sets (see the module docstring);
    `limit` is the largest sketched count that supports a dependency (`support`).

    >>> counts = {frozenset({"a"}): 1000.0, frozenset({"a", "b"}): 1004.0}
    >>> found = discover(10**5, counts, exact=False, tolerance=0.01)
    >>> found.dependencies, found.unsupported
    ((), ((frozenset({'a'}), 'b'),))
    """
    keys = _keys(rows, counts, tolerance)

    def supported(det: ColumnSet, dep: str) -> bool:
        if dep in closure(det, guaranteed):
            return True  # the joins fix it, whatever the counts' error
        if exact:
            return counts[det | {dep}] == counts[det]
        return sketch_supports(counts[det], counts[det | {dep}], limit)

    # With sketched counts, a determinant with nearly as many values as rows "determines"
    # everything within the tolerance; such FDs are noise, not even counted as unsupported.
    near_key = rows * (1 - NEAR_KEY_MARGIN) if tolerance > 0 else float(rows)
    claimed, unsupported = _dependencies(counts, keys, tolerance, labels, near_key, supported)
    found = [FunctionalDependency(ordered(det, labels), dep, exact) for det, dep in claimed]
    # A key is X -> every column: claimed on the same evidence, d(X) = rows, as a dependency.
    held = [
        k for k in keys if (counts[k] == rows if exact else sketch_supports(rows, counts[k], limit))
    ]
    return Discovery(
        tuple(ordered(k, labels) for k in _in_order(held, labels)),
        _sorted(found, labels),
        unsupported,
        tuple(ordered(k, labels) for k in _in_order([k for k in keys if k not in held], labels)),
    )


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
    labels: Sequence[str],
    near_key: float,
    supported: Callable[[ColumnSet, str], bool],
) -> tuple[list[tuple[ColumnSet, str]], tuple[tuple[ColumnSet, str], ...]]:
    """Minimal (determinant, dependent) pairs whose counts agree within the tolerance, split
    into those `supported` claims and the others."""
    constants = {next(iter(s)) for s, d in counts.items() if len(s) == 1 and d <= 1}
    claimed: dict[str, list[ColumnSet]] = {c: [frozenset()] for c in constants}
    unsupported: dict[str, list[ColumnSet]] = {}
    for target in sorted(counts, key=len):
        for dep in _in_order(target, labels):
            det = target - {dep}
            if not det or det not in counts or dep in constants:
                continue
            if counts[det] >= near_key or any(k <= det for k in keys):
                continue  # a key determines everything: nothing worth saying
            smaller = claimed.get(dep, []) + unsupported.get(dep, [])
            if any(d <= det for d in smaller):
                continue  # a smaller determinant already does (or seems to)
            if _same(counts[target], counts[det], tolerance):
                kept = claimed if supported(det, dep) else unsupported
                kept.setdefault(dep, []).append(det)
    pairs = [(det, dep) for dep, dets in claimed.items() for det in dets]
    return pairs, tuple((det, dep) for dep, dets in unsupported.items() for det in dets)


def _sorted(
    found: list[FunctionalDependency], labels: Sequence[str]
) -> tuple[FunctionalDependency, ...]:
    position = {label: i for i, label in enumerate(labels)}
    return tuple(
        sorted(
            found,
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
