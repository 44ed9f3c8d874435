"""A dict-backed provider for tests (Calcite's test providers): counts given, the rest estimated."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mvlattice.lattice.statistic_provider import ColumnSet, column_set
from mvlattice.statistics.estimate import Estimator


class DictStatisticProvider:
    """`StatisticProvider` from a row count and distinct counts keyed by column sets.

    Keys may be any iterable of labels (a lone string is one column). Sets not in the dict are
    estimated from the given ones, keys and FDs exactly as for profiled data; with
    `strict=True` they raise KeyError instead. `asked` records every set asked, in order.
    """

    def __init__(
        self,
        rows: int,
        counts: Mapping[Iterable[str] | str, float],
        *,
        keys: Iterable[Iterable[str]] = (),
        dependencies: Iterable[tuple[Iterable[str], str]] = (),
        strict: bool = False,
    ) -> None:
        self.rows = rows
        self.counts: dict[ColumnSet, float] = {column_set(k): float(v) for k, v in counts.items()}
        self.counts.setdefault(frozenset(), min(1.0, rows))
        self.strict = strict
        self.asked: list[ColumnSet] = []
        self._estimator = Estimator(
            rows,
            self.counts,
            keys=[column_set(k) for k in keys],
            dependencies=[(column_set(a), b) for a, b in dependencies],
        )

    def row_count(self) -> int:
        return self.rows

    def distinct_count(self, columns: Iterable[str]) -> float:
        cols = column_set(columns)
        self.asked.append(cols)
        if cols in self.counts:
            return self.counts[cols]
        if self.strict:
            raise KeyError(f"no distinct count for {sorted(cols)}")
        return self._estimator.estimate(cols)
