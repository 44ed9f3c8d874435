"""Rows of candidate tiles, from a statistics provider, and counting the sets that matter.

Every candidate is sized by the provider's distinct count of its columns (counted or
estimated), capped at the star's rows; the top is the star itself, the empty set one row.

A provider that can count more sets in one pass (`count_sets(sets)`, as the profiled providers
of `mvlattice.statistics` can) is asked to: the planner counts what the workload asks and what
the model declares before choosing, then the chosen tiles, so that the rows a plan shows are
counted, not estimated. Any other provider (a dict, a fake) is only asked `distinct_count`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, runtime_checkable

from mvlattice.lattice.lattice import Lattice
from mvlattice.lattice.statistic_provider import StatisticProvider

ColumnSet = frozenset[str]
MAX_COUNTED = 256  # most sets counted in one extra pass


@runtime_checkable
class CountingProvider(Protocol):
    """A provider that can count more column sets, exactly or by sketch, in one pass."""

    def count_sets(self, column_sets: Iterable[Iterable[str]]) -> Mapping[ColumnSet, float]: ...

    def is_counted(self, columns: Iterable[str]) -> bool: ...


def sizes(
    sets: Sequence[ColumnSet], top: ColumnSet, lattice: Lattice, stats: StatisticProvider
) -> dict[ColumnSet, float]:
    """Rows of each view (§3.1's cost of answering from it)."""
    rows = float(stats.row_count())
    position = {label: i for i, label in enumerate(lattice.labels)}
    out = {}
    for columns in sets:
        if columns == top:
            out[columns] = rows
        elif not columns:
            out[columns] = min(rows, 1.0)
        else:
            ordered = tuple(sorted(columns, key=position.__getitem__))
            out[columns] = min(rows, float(stats.distinct_count(ordered)))
    return out


def count_missing(stats: StatisticProvider, sets: Iterable[ColumnSet]) -> bool:
    """Count (one pass) those of `sets` the provider has not counted, first MAX_COUNTED of
    them; says whether anything was counted. Non-counting providers count nothing."""
    if not isinstance(stats, CountingProvider):
        return False
    missing = [s for s in dict.fromkeys(sets) if s and not stats.is_counted(s)][:MAX_COUNTED]
    if missing:
        stats.count_sets(missing)
    return bool(missing)


def counted(stats: StatisticProvider, columns: ColumnSet) -> bool:
    """Whether the provider counted this set (rather than estimating it)."""
    return isinstance(stats, CountingProvider) and stats.is_counted(columns)
