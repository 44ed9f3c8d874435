"""The provider tile planning uses: counted sets from a profile, every other set estimated."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace

from mvlattice.lattice.statistic_provider import ColumnSet, Counts, SetCounter, column_set
from mvlattice.statistics.profile import Profile, build_profile


class ProfiledStatisticProvider:
    """`StatisticProvider` over a `Profile`, built on first use when given a function.

    `distinct_count` of a counted set is its count; of any other set, the estimate of
    `mvlattice.statistics.estimate` (keys, FDs, counted subsets, Cardenas). `count_sets`
    counts more sets in one pass when a counter is at hand, and later answers use them.
    """

    def __init__(
        self,
        profile: Profile | Callable[[], Profile],
        counter: SetCounter | None = None,
        *,
        tolerance: float = 0.0,
    ) -> None:
        self._profile = profile if isinstance(profile, Profile) else None
        self._build = None if isinstance(profile, Profile) else profile
        self.counter = counter
        self.tolerance = tolerance

    @property
    def profile(self) -> Profile:
        if self._profile is None:
            assert self._build is not None
            self._profile = self._build()
        return self._profile

    def row_count(self) -> int:
        return self.profile.rows

    def distinct_count(self, columns: Iterable[str]) -> float:
        cols = column_set(columns)
        _check_labels(self.profile, cols)
        counted = self.profile.counts.get(cols)
        return counted if counted is not None else self.profile.estimator.estimate(cols)

    def is_counted(self, columns: Iterable[str]) -> bool:
        return column_set(columns) in self.profile.counts

    def count_sets(self, column_sets: Iterable[Iterable[str]]) -> dict[ColumnSet, float]:
        """Count the sets not counted yet (one pass), keep them, and return all asked."""
        wanted = [column_set(s) for s in column_sets]
        profile = self.profile
        for cols in wanted:
            _check_labels(profile, cols)
        missing = [s for s in dict.fromkeys(wanted) if s not in profile.counts]
        if missing:
            if self.counter is None:
                raise ValueError("this provider has no counter to count new column sets")
            more = self.counter.count(missing)
            merged = Counts(more.rows, {**profile.counts, **more.distinct}, profile.exact)
            rebuilt = build_profile(
                profile.lattice, profile.labels, merged, profile.method,
                tolerance=self.tolerance, guaranteed=profile.guaranteed,
            )  # fmt: skip
            profile = self._profile = replace(rebuilt, passes=profile.passes + 1)
        return {s: profile.counts[s] for s in wanted}


def _check_labels(profile: Profile, columns: ColumnSet) -> None:
    from mvlattice.document import suggest
    from mvlattice.errors import NotFoundError

    for c in sorted(columns):
        if c not in profile.labels:
            raise NotFoundError(
                f"lattice '{profile.lattice}' has no column '{c}'" + suggest(c, profile.labels)
            )
