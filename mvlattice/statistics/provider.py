"""What tile selection needs to know about data, behind a small interface (Calcite's
LatticeStatisticProvider): the star's row count and distinct counts of column sets."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


class StatisticProvider(Protocol):
    """Counts over a lattice's star join; columns are lattice column labels."""

    def row_count(self) -> int:
        """Rows of the star (the fact table's rows, since every join is many-to-one)."""
        ...

    def distinct_count(self, columns: Iterable[str]) -> float:
        """Distinct combinations of `columns` over the star; NULL counts as a value."""
        ...
