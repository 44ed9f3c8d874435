"""Which column sets to count, level by level (Calcite's profiler, CALCITE-1616).

Pass 1 counts every single column and every pair in one go. Each further level k (up to
`max_size`) is one more pass over the candidates built from the level below, Apriori style:

- a (k−1)-set is *extendable* when it is not (a superset of) a unique key and none of its columns
  is determined by the others (an FD makes every superset derivable, see `estimate`);
- a k-set holding a column that another determines and is determined by (s.product_id and
  p.product_id) is skipped: the set with the first of them in lattice order stands for it;
- a k-set is a candidate when all its (k−1)-subsets were counted and are extendable, at least
  two of them are *surprising* — their counts differ from what smaller sets predict by more
  than `surprise`; with none, independence predicts the k-set, and with one, the estimator's
  cover (the correlated part times the independent rest) does — and its counted subsets leave
  room: the largest subset count (a lower bound) and the least
  product of a split into counted parts (an upper bound, with the rows) differ by more than
  `surprise`. On FoodMart the last rule matters most: most triples there hold a near-key such as
  (customer_id, store_sales), and counting them would tell nothing.

Candidates are ranked by that room (upper / lower bound) and capped at `max_per_level`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from types import MappingProxyType
from typing import Any

from mvlattice.lattice.statistic_provider import ColumnSet, Counts, SetCounter, ordered
from mvlattice.statistics.discovery import (
    Discovery,
    FunctionalDependency,
    discover,
    equivalents,
)
from mvlattice.statistics.estimate import Estimator
from mvlattice.statistics.implied import Dependencies

SURPRISE = 0.1
MAX_PER_LEVEL = 500

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
    # (determinant, dependent) the counts agree on only within the sketches' error: not claimed
    unsupported: tuple[tuple[ColumnSet, str], ...] = ()
    guaranteed: Dependencies = ()  # what the star's joins fix (`statistics.implied`)
    near_keys: tuple[tuple[str, ...], ...] = ()  # keys only within the sketches' error
    _estimator: list[Estimator] = field(default_factory=list, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "counts", MappingProxyType(dict(self.counts)))

    @property
    def estimator(self) -> Estimator:
        """The estimator for sets never counted, built once from this profile."""
        if not self._estimator:
            deps = [(frozenset(f.determinant), f.dependent) for f in self.dependencies]
            # a near-key bounds its supersets' counts between its own and the rows: still useful
            keys = [frozenset(k) for k in self.unique_keys + self.near_keys]
            # what is not claimed still estimates better than anything else the counts give
            near = list(self.unsupported)
            self._estimator.append(Estimator(self.rows, self.counts, keys, deps + near))
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
            "unsupported_dependencies": len(self.unsupported),
            "unsupported_keys": len(self.near_keys),
        }


def build_profile(
    lattice: str,
    labels: Sequence[str],
    counts: Counts,
    method: str,
    *,
    tolerance: float = 0.0,
    passes: int = 0,
    guaranteed: Dependencies = (),
) -> Profile:
    """A Profile from counts: discovers keys and the FDs the counts support among them."""
    found: Discovery = discover(
        counts.rows,
        counts.distinct,
        labels,
        exact=counts.exact,
        tolerance=tolerance,
        guaranteed=guaranteed,
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
        found.unsupported,
        guaranteed,
        found.near_keys,
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
    guaranteed: Dependencies = (),
    progress: Progress | None = None,
) -> Profile:
    """Count singles and pairs in one pass, then one pass per larger level (module docstring)."""
    say = progress or (lambda _line: None)
    first = [frozenset(c) for k in range(1, min(max_size, 2) + 1) for c in _combos(labels, k)]
    say(f"pass 1: {len(first)} column sets of size ≤ {min(max_size, 2)} ({counter.description})")
    counts = counter.count(first)
    build = partial(build_profile, lattice, labels, tolerance=tolerance, guaranteed=guaranteed)
    profile = build(counts, counter.description)
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
        profile = build(merged, counter.description)
    return replace(profile, passes=passes)


def next_level(
    profile: Profile, k: int, *, surprise: float = SURPRISE, limit: int = MAX_PER_LEVEL
) -> list[ColumnSet]:
    """Candidate k-sets from the counted (k−1)-sets (see the module docstring)."""
    below = [s for s in profile.counts if len(s) == k - 1]
    extendable = {s for s in below if _extendable(profile, s)}
    estimator = profile.estimator
    stand_in = equivalents(((frozenset(f.determinant), f.dependent) for f in profile.dependencies),
                           profile.labels)  # fmt: skip
    score = {s: estimator.surprise(s) for s in extendable}
    ranked: dict[ColumnSet, float] = {}
    seen: set[ColumnSet] = set()
    for base in (s for s in extendable if score[s] > surprise):
        for column in profile.labels:
            target = base | {column}
            if column in base or target in seen or target in profile.counts:
                continue
            seen.add(target)
            if any(c in stand_in for c in target):
                continue  # the same set with the column's representative says it all
            subsets = [target - {c} for c in target]
            if not all(sub in extendable for sub in subsets):
                continue
            if sum(score[sub] > surprise for sub in subsets) < 2:
                continue  # one correlated part times an independent rest: the cover predicts it
            lower, upper = bounds(profile, target)
            if upper > lower * (1 + surprise):
                ranked[target] = upper / lower
    position = {c: i for i, c in enumerate(profile.labels)}
    order = sorted(ranked, key=lambda s: (-ranked[s], sorted(position[c] for c in s)))
    return order[:limit]


def bounds(profile: Profile, columns: ColumnSet) -> tuple[float, float]:
    """What counted subsets and FDs already say about d(X): at least the largest d(S), S ⊂ X;
    at most the rows, d(S)·d(X − S) for every split into counted parts, and the estimator's
    FD bounds. When the two are close, counting X cannot tell much."""
    counts = profile.counts
    lower = max((counts[s] for s in _proper_subsets(columns) if s in counts), default=1.0)
    upper = min(float(profile.rows), profile.estimator.upper_bound(columns))
    for part in _proper_subsets(columns):
        rest = columns - part
        if part in counts and rest in counts:
            upper = min(upper, counts[part] * counts[rest])
    return max(lower, 1.0), upper


def _proper_subsets(columns: ColumnSet) -> list[ColumnSet]:
    items = sorted(columns)
    return [frozenset(c) for k in range(1, len(items)) for c in itertools.combinations(items, k)]


def _extendable(profile: Profile, columns: ColumnSet) -> bool:
    if any(frozenset(key) <= columns for key in profile.unique_keys + profile.near_keys):
        return False
    return not any(
        f.dependent in columns and frozenset(f.determinant) <= columns - {f.dependent}
        for f in profile.dependencies
    )


def _combos(labels: Sequence[str], k: int) -> list[tuple[str, ...]]:
    return list(itertools.combinations(labels, k))


def _number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else round(value, 1)
