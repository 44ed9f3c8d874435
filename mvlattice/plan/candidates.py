"""Which group-by column sets HRU96 considers for a lattice, without enumerating 2^n.

A lattice of n columns has 2^n group-bys (FoodMart's star: 38 columns). We consider:

1. the *top*: every column, i.e. the star at full detail (its size is the star's row count);
2. the *asked* sets: each workload query's group-by plus filtered columns (HRU96's views with
   weight > 0), and every declared tile;
3. their *closure under union*, bounded: unions of two asked/declared sets of at most
   `max_union_columns` columns; a union answers both, which is where HRU finds shared tiles.
   (Meets are not needed: the meet of two asked sets answers neither of them, and every asked
   set is a candidate already.) More rounds (unions of unions) while under `max_candidates`;
4. *small* sets: every single dimension-like column and every pair of them, the bottom of the
   lattice when there is no workload (with one, they add little: an asked single or pair is a
   candidate already, and so is the union of two of them). A column is dimension-like when it
   is not a measure's argument, is not the copy of a join column (below), and has
   1 < distinct values <= DIMENSION_FRACTION of the star's rows (keys of the fact table and
   measure-like columns with nearly as many values as rows make useless tiles; a constant
   column groups nothing).

Join columns come in equal pairs (`s.product_id` = `p.product_id` on every star row), so a set
holding one answers queries on the other. Each label is replaced by its *canonical* label, the
one nearest the root (`p.product_id` -> `s.product_id`), before sets are compared.

Candidates are capped at `max_candidates` in a fixed order: asked and declared sets (always
kept, like the top), then unions by (columns, -summed weight, columns as bits over the sorted
labels), then small sets by size and lattice order.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from mvlattice.errors import UsageError
from mvlattice.lattice.lattice import Lattice
from mvlattice.lattice.statistic_provider import StatisticProvider

DIMENSION_FRACTION = 0.1
MAX_CANDIDATES = 2000
MAX_UNION_COLUMNS = 8
UNION_ROUNDS = 2

ColumnSet = frozenset[str]


@dataclass(frozen=True, slots=True)
class Candidates:
    """The views HRU searches: `sets` (top first), what was asked (weights), what is declared."""

    top: ColumnSet
    sets: tuple[ColumnSet, ...]
    asked: Mapping[ColumnSet, float]
    declared: tuple[ColumnSet, ...]
    dimension_like: tuple[str, ...]
    truncated: bool
    # a closed candidate -> the set it closes: the same rows (its added columns are determined)
    origin: Mapping[ColumnSet, ColumnSet] = field(default_factory=dict)


def canonical_labels(lattice: Lattice) -> dict[str, str]:
    """Each table-column label -> the label of the equal join column nearest the root."""
    by_column = {(c.alias, c.column): c.label for c in lattice.columns if c.alias is not None}
    canon = {label: label for label in lattice.labels}
    for edge in lattice.edges:  # edges run root-outwards, so sources are canonical already
        pairs = zip(edge.source_columns, edge.target_columns, strict=True)
        for source, target in pairs:
            source_label = by_column.get((edge.source, source))
            target_label = by_column.get((edge.target, target))
            if source_label is not None and target_label is not None:
                canon[target_label] = canon[source_label]
    return canon


def canonical(columns: Iterable[str], canon: Mapping[str, str]) -> ColumnSet:
    return frozenset(canon.get(c, c) for c in columns)


def dimension_like(
    lattice: Lattice,
    stats: StatisticProvider,
    canon: Mapping[str, str],
    allowed: Iterable[str] | None = None,
) -> tuple[str, ...]:
    """Canonical, non-measure columns with 1 < distinct <= DIMENSION_FRACTION · rows, among
    `allowed` (the dimensions of `plan.columns`) when given."""
    measured = {a for m in _all_measures(lattice) for a in m.args}
    permitted = set(lattice.labels if allowed is None else allowed)
    limit = max(1.0, DIMENSION_FRACTION * stats.row_count())
    out = []
    for label in lattice.labels:
        if canon.get(label, label) != label or label in measured or label not in permitted:
            continue
        if 1 < stats.distinct_count((label,)) <= limit:
            out.append(label)
    return tuple(out)


def _all_measures(lattice: Lattice) -> tuple:
    return lattice.default_measures + tuple(m for t in lattice.tiles for m in t.measures)


def candidate_sets(
    lattice: Lattice,
    stats: StatisticProvider,
    asked: Mapping[ColumnSet, float] | None = None,
    *,
    max_candidates: int = MAX_CANDIDATES,
    max_union_columns: int = MAX_UNION_COLUMNS,
    allowed: Iterable[str] | None = None,
    close: Callable[[ColumnSet], ColumnSet] | None = None,
) -> Candidates:
    """The candidate views for `lattice`; `asked` maps workload views (labels) to weights.
    `allowed`: the columns small sets are made of (default: every column); `close`: a set's
    closure under the lattice's hierarchies (`plan.hierarchy`), applied to every candidate but
    the asked and declared sets, which stay as they are (a declared tile is built as declared)
    and are joined by their closures: same rows, more questions answered."""
    canon = canonical_labels(lattice)
    top = frozenset(canon.values())
    shut = close or (lambda s: s)
    weights: dict[ColumnSet, float] = {}
    for columns, weight in (asked or {}).items():
        key = canonical(columns, canon)
        weights[key] = weights.get(key, 0.0) + weight
    unknown = sorted({c for s in weights for c in s} - top)
    if unknown:
        raise UsageError(f"lattice '{lattice.name}' has no column {', '.join(unknown)}")
    declared = tuple(dict.fromkeys(canonical(t.dimensions, canon) for t in lattice.tiles))
    dims = dimension_like(lattice, stats, canon, allowed)
    seeds = _ordered([*weights, *declared], weights)
    pool = _Pool(top, max_candidates, shut)
    pool.add_all(seeds, force=True)  # their closures: asked and declared sets stay as well
    pool.add_all(seeds, force=True, keep=True)
    _union_closure(pool, seeds, weights, max_union_columns)
    pool.add_all(_small_sets(dims))
    return Candidates(
        top, pool.ordered(), weights, declared, dims, pool.truncated, dict(pool.origin)
    )


def _ordered(sets: Iterable[ColumnSet], weights: Mapping[ColumnSet, float]) -> list[ColumnSet]:
    unique = dict.fromkeys(sets)
    return sorted(unique, key=lambda s: (len(s), -weights.get(s, 0.0), sorted(s)))


def _small_sets(dims: tuple[str, ...]) -> list[ColumnSet]:
    singles = [frozenset((d,)) for d in dims]
    pairs = [frozenset(p) for p in itertools.combinations(dims, 2)]
    return singles + pairs


class _Pool:
    """Insertion-ordered candidates, the top first, at most `cap` sets besides the top."""

    def __init__(
        self, top: ColumnSet, cap: int, close: Callable[[ColumnSet], ColumnSet] = frozenset
    ) -> None:
        self.top, self.cap, self.close = top, cap, close
        self.origin: dict[ColumnSet, ColumnSet] = {}
        self.sets: dict[ColumnSet, None] = {top: None}
        self.truncated = False

    def full(self) -> bool:
        return len(self.sets) > self.cap

    def room(self) -> int:
        return self.cap + 1 - len(self.sets)

    def add_all(
        self, sets: Iterable[ColumnSet], *, force: bool = False, keep: bool = False
    ) -> list[ColumnSet]:
        """Add new sets (closed, or as they are with `keep`) in order until full; `force`
        (asked and declared sets and their closures) ignores the cap."""
        added = []
        for given in sets:
            s = given if keep else self.close(given)
            if s != given:
                self.origin.setdefault(s, given)
            if s in self.sets:
                continue
            if self.full() and not force:
                self.truncated = True
                break
            self.sets[s] = None
            added.append(s)
        return added

    def ordered(self) -> tuple[ColumnSet, ...]:
        return tuple(self.sets)


def _union_closure(
    pool: _Pool,
    seeds: list[ColumnSet],
    weights: Mapping[ColumnSet, float],
    max_columns: int,
) -> None:
    """UNION_ROUNDS rounds: unions of the seeds' pairs, then of the new sets with the seeds.
    A union is scored by the larger summed weight of the sets making it. Sets are bitmasks
    over the sorted labels here: a union is one `|`, its size one `bit_count`."""
    labels = sorted(pool.top)
    bit = {label: 1 << i for i, label in enumerate(labels)}
    seed_bits = [(sum(bit[c] for c in s), weights.get(s, 0.0)) for s in seeds]
    frontier, same = seed_bits, True
    for _ in range(UNION_ROUNDS):
        room = pool.room()
        if room <= 0 or not frontier:
            return
        known = {sum(bit[c] for c in s) for s in pool.sets}
        unions = _unions(frontier, seed_bits, max_columns, known, same=same)
        best = heapq.nsmallest(room + 1, unions, key=lambda u: (u.bit_count(), -unions[u], u))
        added = pool.add_all(frozenset(labels[i] for i in _bits(u)) for u in best)
        frontier = [(u, unions[u]) for u in best[: len(added)]]
        same = False


def _unions(
    left: list[tuple[int, float]],
    right: list[tuple[int, float]],
    max_columns: int,
    known: set[int],
    *,
    same: bool,
) -> dict[int, float]:
    """Unions of a left and a right set (of two different seeds when `same`), new and small
    enough, each with the best summed weight of a pair making it."""
    out: dict[int, float] = {}
    for i, (a, weight_a) in enumerate(left):
        for b, weight_b in right[i + 1 :] if same else right:
            union = a | b
            if union in known or union.bit_count() > max_columns:
                continue
            score = weight_a + weight_b
            if score > out.get(union, -1.0):
                out[union] = score
    return out


def _bits(mask: int) -> Iterator[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low
