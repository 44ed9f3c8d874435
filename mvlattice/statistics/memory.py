"""A `SetCounter` over rows held in Python: exact, NULL as a value, for tests and tiny data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mvlattice.lattice.statistic_provider import ColumnSet, Counts


class MemoryCounter:
    """Counts distinct tuples of the given rows (mappings of label -> value; None is NULL)."""

    exact = True
    description = "exact, in memory"

    def __init__(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self.rows = tuple(dict(r) for r in rows)
        self.calls: list[tuple[ColumnSet, ...]] = []  # one entry per pass, for tests

    def count(self, column_sets: Sequence[ColumnSet]) -> Counts:
        sets = tuple(dict.fromkeys(column_sets))
        self.calls.append(sets)
        distinct = {s: float(self._distinct(s)) for s in sets}
        distinct[frozenset()] = min(1.0, len(self.rows))
        return Counts(len(self.rows), distinct, exact=True)

    def _distinct(self, columns: ColumnSet) -> int:
        if not columns:
            return min(1, len(self.rows))
        cols = sorted(columns)
        return len({tuple(row[c] for c in cols) for row in self.rows})
