"""What tile selection needs to know about data, behind a small interface (Calcite's
LatticeStatisticProvider): the star's row count and distinct counts of column sets.

Two layers:

- `StatisticProvider` answers `distinct_count` of ANY column set (counted or estimated) — what
  HRU tile planning asks, thousands of times.
- `SetCounter` counts a batch of column sets over the star in one Spark pass (exact or sketched);
  a provider asks it only for the sets worth counting.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

ColumnSet = frozenset[str]


def column_set(columns: Iterable[str]) -> ColumnSet:
    """A column set as the providers key it; a lone string is one column, not its letters."""
    return frozenset((columns,) if isinstance(columns, str) else columns)


def ordered(columns: ColumnSet, labels: Sequence[str] | None = None) -> tuple[str, ...]:
    """The set's columns in lattice order (unknown labels last, alphabetically)."""
    position = {label: i for i, label in enumerate(labels or ())}
    return tuple(sorted(columns, key=lambda c: (position.get(c, len(position)), c)))


class StatisticProvider(Protocol):
    """Counts over a lattice's star join; columns are lattice column labels."""

    def row_count(self) -> int:
        """Rows of the star (the fact table's rows, since every join is many-to-one)."""
        ...

    def distinct_count(self, columns: Iterable[str]) -> float:
        """Distinct combinations of `columns` over the star; NULL counts as a value."""
        ...


@dataclass(frozen=True, slots=True)
class Counts:
    """The result of one counting pass: rows of the star and distinct counts of column sets."""

    rows: int
    distinct: Mapping[ColumnSet, float] = field(default_factory=dict)
    exact: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "distinct", MappingProxyType(dict(self.distinct)))


class SetCounter(Protocol):
    """Counts many column sets over the star in one pass. `exact` says whether counts are."""

    @property
    def exact(self) -> bool: ...

    @property
    def description(self) -> str:
        """For people: e.g. 'exact count(distinct)' or 'HLL sketch, lgConfigK=16'."""
        ...

    def count(self, column_sets: Sequence[ColumnSet]) -> Counts:
        """Rows of the star and the distinct count of every set given (the empty set is 1)."""
        ...
