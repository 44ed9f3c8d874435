"""Which column sets to count, level by level (Calcite's profiler, CALCITE-1616).

Pass 1 counts every single column and every pair in one go. Each further level k (up to
`max_size`) is one more pass over the candidates built from the level below, Apriori style:

- a (k−1)-set is *extendable* when it is not (a superset of) a unique key and none of its columns
  is determined by the others (an FD makes every superset derivable, see `estimate`);
- a k-set is a candidate when all its (k−1)-subsets were counted and are extendable, and at least
  one of them is *surprising*: its count differs from what smaller sets predict by more than
  `surprise` — if no subset carries a correlation, independence already predicts the k-set.

Candidates are ranked by their most surprising subset and capped at `max_per_level`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from mvlattice.statistics.discovery import Discovery, FunctionalDependency, discover
from mvlattice.statistics.estimate import Estimator
from mvlattice.statistics.provider import ColumnSet, Counts, SetCounter, ordered

SURPRISE = 0.1
MAX_PER_LEVEL = 2000

Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Profile:
    """Counts of a lattice's column sets, with the keys and FDs they reveal."""

    lattice: str
    labels: tuple[str, ...]
    rows: int
    counts: Mapping[ColumnSet, float]
    exact: bool
    method: str
    unique_keys: tuple[tuple[str, ...], ...] = ()
    dependencies: tuple[FunctionalDependency, ...] = ()
    passes: int = 0
    _estimator: list[Estimator] = field(default_factory=list, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "counts", MappingProxyType(dict(self.counts)))

    @property
    def estimator(self) -> Estimator:
        """The estimator for sets never counted, built once from this profile."""
        if not self._estimator:
            deps = [(frozenset(f.determinant), f.dependent) for f in self.dependencies]
            keys = [frozenset(k) for k in self.unique_keys]
            self._estimator.append(Estimator(self.rows, self.counts, keys, deps))
        return self._estimator[0]

    def sets(self) -> list[ColumnSet]:
        """Counted non-empty sets: by size, then lattice order."""
        position = {c: i for i, c in enumerate(self.labels)}
        return sorted(
            (s for s in self.counts if s),
            key=lambda s: (len(s), sorted(position.get(c, len(position)) for c in s)),
        )

    def to_json(self) -> dict[str, Any]:
        """The document `mvlattice profile --json` prints."""
        return {
            "lattice": self.lattice,
            "rows": self.rows,
            "method": self.method,
            "distinct": [
                {
                    "columns": list(ordered(s, self.labels)),
                    "count": _number(self.counts[s]),
                    "exact": self.exact,
                }
                for s in self.sets()
            ],
            "unique_keys": [list(k) for k in self.unique_keys],
            "functional_dependencies": [
                {"determinant": list(f.determinant), "dependent": f.dependent, "exact": f.exact}
                for f in self.dependencies
            ],
        }


def build_profile(
    lattice: str,
    labels: Sequence[str],
    counts: Counts,
    method: str,
    *,
    tolerance: float = 0.0,
    passes: int = 0,
) -> Profile:
    """A Profile from counts: discovers keys and FDs among them."""
    found: Discovery = discover(
        counts.rows, counts.distinct, labels, exact=counts.exact, tolerance=tolerance
    )
    return Profile(
        lattice,
        tuple(labels),
        counts.rows,
        counts.distinct,
        counts.exact,
        method,
        found.unique_keys,
        found.dependencies,
        passes,
    )


def run_profile(
    counter: SetCounter,
    lattice: str,
    labels: Sequence[str],
    *,
    max_size: int = 3,
    surprise: float = SURPRISE,
    max_per_level: int = MAX_PER_LEVEL,
    tolerance: float = 0.0,
    progress: Progress | None = None,
) -> Profile:
    """Count singles and pairs in one pass, then one pass per larger level (module docstring)."""
    say = progress or (lambda _line: None)
    first = [frozenset(c) for k in range(1, min(max_size, 2) + 1) for c in _combos(labels, k)]
    say(f"pass 1: {len(first)} column sets of size ≤ {min(max_size, 2)} ({counter.description})")
    counts = counter.count(first)
    profile = build_profile(lattice, labels, counts, counter.description, tolerance=tolerance)
    passes = 1
    for k in range(3, max_size + 1):
        candidates = next_level(profile, k, surprise=surprise, limit=max_per_level)
        if not candidates:
            say(f"size {k}: nothing surprising left to count")
            break
        passes += 1
        say(f"pass {passes}: {len(candidates)} column sets of size {k}")
        more = counter.count(candidates)
        merged = Counts(more.rows, {**profile.counts, **more.distinct}, counts.exact)
        profile = build_profile(lattice, labels, merged, counter.description, tolerance=tolerance)
    return replace(profile, passes=passes)


def next_level(
    profile: Profile, k: int, *, surprise: float = SURPRISE, limit: int = MAX_PER_LEVEL
) -> list[ColumnSet]:
    """Candidate k-sets from the counted (k−1)-sets (see the module docstring)."""
    below = [s for s in profile.counts if len(s) == k - 1]
    extendable = {s for s in below if _extendable(profile, s)}
    estimator = profile.estimator
    score = {s: estimator.surprise(s) for s in extendable}
    ranked: dict[ColumnSet, float] = {}
    for base in (s for s in extendable if score[s] > surprise):
        for column in profile.labels:
            target = base | {column}
            if column in base or target in ranked or target in profile.counts:
                continue
            subsets = [target - {c} for c in target]
            if all(s in extendable for s in subsets):
                ranked[target] = max(score[s] for s in subsets)
    position = {c: i for i, c in enumerate(profile.labels)}
    order = sorted(ranked, key=lambda s: (-ranked[s], sorted(position[c] for c in s)))
    return order[:limit]


def _extendable(profile: Profile, columns: ColumnSet) -> bool:
    if any(frozenset(key) <= columns for key in profile.unique_keys):
        return False
    return not any(
        f.dependent in columns and frozenset(f.determinant) <= columns - {f.dependent}
        for f in profile.dependencies
    )


def _combos(labels: Sequence[str], k: int) -> list[tuple[str, ...]]:
    return list(itertools.combinations(labels, k))


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(value, 1)
