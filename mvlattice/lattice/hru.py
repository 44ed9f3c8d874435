"""HRU96 greedy view selection: Harinarayan, Rajaraman, Ullman, *Implementing Data Cubes
Efficiently*, SIGMOD 1996.

Views form a partial order "w ⪯ v: w can be answered from v", given as (parent, child) edges;
the order is their transitive closure, computed here, so covering edges or the full relation both
do. Linear cost model (§3.1): answering w costs the size of the cheapest selected view u_w with
w ⪯ u_w. Benefit of v given the selection S (§4):

    B(v, S) = Σ_{w ⪯ v} weight(w) · max(0, C(u_w) − C(v))

The paper prints the difference as C(v) − C(u); its worked numbers (Fig. 8) use C(u) − C(v).
The benefit only shrinks as S grows (it is submodular), which makes lazy greedy exact and gives
the paper's guarantee: k greedy picks reach at least 1 − (1 − 1/k)^k ≥ 1 − 1/e of the best
possible benefit.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from mvlattice.errors import UsageError

Edge = tuple[str, str]


@dataclass(frozen=True, slots=True)
class GreedyResult:
    """What greedy chose, with enough detail to replay the paper's tables.

    `picks` are (view, benefit) in pick order, required views first; the top is not a pick.
    `costs[0]` is the total cost with only the top selected, `costs[i]` the total after pick i.
    `rounds[i]` maps every unselected non-top view to its benefit just before pick i (empty when
    rounds were not recorded). `timed_out` says `max_millis` ran out before greedy finished.
    """

    top: str
    picks: tuple[tuple[str, float], ...]
    costs: tuple[float, ...]
    rounds: tuple[Mapping[str, float], ...]
    timed_out: bool

    def __post_init__(self) -> None:
        if len(self.costs) != len(self.picks) + 1:
            raise ValueError("costs must hold the cost before any pick and after each pick")
        if self.rounds and len(self.rounds) != len(self.picks):
            raise ValueError("rounds, when recorded, hold one table per pick")

    @property
    def selected(self) -> tuple[str, ...]:
        return (self.top, *(name for name, _ in self.picks))

    @property
    def total_benefit(self) -> float:
        return self.costs[0] - self.costs[-1]


@dataclass(frozen=True, slots=True)
class _Indexed:
    """The lattice by index: `answers[v]` lists the weighted views w ⪯ v (v itself included),
    ascending, so every benefit sums its terms in one fixed order."""

    names: tuple[str, ...]
    sizes: tuple[float, ...]
    weights: tuple[float, ...]
    answers: tuple[tuple[int, ...], ...]
    top: int
    weighted: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class _Options:
    k: int | None
    space: float | None
    max_millis: float | None
    min_benefit: float
    lazy: bool
    record_rounds: bool


def greedy(
    sizes: Mapping[str, float],
    edges: Iterable[Edge],
    k: int | None = None,
    *,
    weights: Mapping[str, float] | None = None,
    space: float | None = None,
    max_millis: float | None = None,
    min_benefit: float = 0.0,
    required: Iterable[str] = (),
    lazy: bool = True,
    record_rounds: bool = True,
) -> GreedyResult:
    """HRU96 greedy selection of views to materialize.

    `sizes` maps each view to its rows; `edges` are (parent, child) pairs, child computable from
    parent. The top view, the only one without a parent, is always selected and never a pick.
    `weights` are query frequencies; when given, views missing from it have weight 0 (nobody
    asks for them), otherwise every view has weight 1.

    Stopping: `k` greedy picks; `space` caps the summed size of greedy picks (candidates that do
    not fit are skipped, and candidates are ranked by benefit per row); with neither, greedy goes
    on while any candidate has benefit > `min_benefit`. A view whose benefit is <= `min_benefit`
    is never picked. `max_millis` stops the search and returns the picks so far with
    `timed_out=True` (the only nondeterministic input).

    `required` views (tiles a model declares) are selected first, in the given order, whatever
    their benefit; they count against neither `k` nor `space`, like the top view.

    Ties: among equal benefit (benefit per row with `space`), the smaller view wins, then the
    lexicographically smaller name. `lazy=True` gives the same picks as `lazy=False`, faster.
    """
    names = tuple(sorted(sizes))
    index = {name: i for i, name in enumerate(names)}
    below = _closure(names, index, edges)
    opts = _opts(k, space, max_millis, min_benefit, lazy, record_rounds)
    return _select(_indexed(names, sizes, weights, below), opts, _required(index, required))


def greedy_over_sets(
    sizes_by_set: Mapping[frozenset[str], float],
    k: int | None = None,
    *,
    weights: Mapping[frozenset[str], float] | None = None,
    space: float | None = None,
    max_millis: float | None = None,
    min_benefit: float = 0.0,
    required: Iterable[frozenset[str]] = (),
    lazy: bool = True,
    record_rounds: bool = True,
) -> GreedyResult:
    """`greedy` over group-by column sets, w ⪯ v iff w ⊆ v; views are named by `set_name`.

    The set of all columns must be among the views: it is the top.
    """
    named = {set_name(columns): columns for columns in sizes_by_set}
    if len(named) != len(sizes_by_set):
        raise UsageError("two column sets have the same name; column names must not hold ','")
    names = tuple(sorted(named))
    index = {name: i for i, name in enumerate(names)}
    below = _subset_bits(tuple(named[name] for name in names))
    _check_single_top(names, below)
    plain_sizes = {set_name(columns): size for columns, size in sizes_by_set.items()}
    plain_weights = None if weights is None else {set_name(c): w for c, w in weights.items()}
    lat = _indexed(names, plain_sizes, plain_weights, below)
    wanted = _required(index, (set_name(columns) for columns in required))
    return _select(lat, _opts(k, space, max_millis, min_benefit, lazy, record_rounds), wanted)


def set_name(columns: frozenset[str]) -> str:
    """The view name of a column set: sorted columns joined by ','; the grand total is '()'."""
    return ",".join(sorted(columns)) if columns else "()"


def cube_edges(views: Mapping[str, frozenset[str]]) -> tuple[Edge, ...]:
    """Covering (parent, child) edges of the subset order on column sets: child ⊂ parent with no
    view strictly between them. `greedy` takes its transitive closure itself."""
    names = tuple(sorted(views))
    sets = tuple(views[name] for name in names)
    if len(set(sets)) != len(sets):
        raise UsageError("two views have the same column set; a view's columns must be unique")
    below = _subset_bits(sets)
    strictly = [bits & ~(1 << v) for v, bits in enumerate(below)]
    edges: list[Edge] = []
    for v, under in enumerate(strictly):
        covered = 0
        for u in _bit_indices(under):
            covered |= strictly[u]
        edges.extend((names[v], names[u]) for u in _bit_indices(under & ~covered))
    return tuple(edges)


# --- input checking and indexing ------------------------------------------------------------


def _opts(
    k: int | None,
    space: float | None,
    max_millis: float | None,
    min_benefit: float,
    lazy: bool,
    record_rounds: bool,
) -> _Options:
    if k is not None and (not isinstance(k, int) or k < 0):
        raise UsageError(f"k must be a non-negative integer, got {k!r}")
    for label, value in (("space", space), ("max_millis", max_millis)):
        if value is not None and not _finite_non_negative(value):
            raise UsageError(f"{label} must be a non-negative number, got {value!r}")
    if not isinstance(min_benefit, int | float) or not math.isfinite(min_benefit):
        raise UsageError(f"min_benefit must be a finite number, got {min_benefit!r}")
    return _Options(k, space, max_millis, float(min_benefit), lazy, record_rounds)


def _finite_non_negative(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and value >= 0


def _closure(names: tuple[str, ...], index: Mapping[str, int], edges: Iterable[Edge]) -> list[int]:
    """For each view, the bitset of views it answers (itself included), from (parent, child)
    edges; rejects unknown views, cycles and anything but one top."""
    children: list[list[int]] = [[] for _ in names]
    parents = [0] * len(names)
    for edge in edges:
        if not isinstance(edge, tuple | list) or len(edge) != 2:
            raise UsageError(f"an edge must be a (parent, child) pair, got {edge!r}")
        parent, child = edge
        for name in edge:
            if name not in index:
                raise UsageError(f"edge ({parent!r}, {child!r}) names unknown view {name!r}")
        children[index[parent]].append(index[child])
        parents[index[child]] += 1
    order = _topological(names, children, parents)
    below = [0] * len(names)
    for v in reversed(order):
        bits = 1 << v
        for c in children[v]:
            bits |= below[c]
        below[v] = bits
    _check_single_top(names, below)
    return below


def _topological(
    names: tuple[str, ...], children: list[list[int]], parents: list[int]
) -> list[int]:
    """Kahn's algorithm, parents before children; a leftover view lies on or under a cycle."""
    waiting = list(parents)
    order = [v for v, count in enumerate(waiting) if count == 0]
    for v in order:  # grows while iterating: each child is appended once all its parents are in
        for c in children[v]:
            waiting[c] -= 1
            if waiting[c] == 0:
                order.append(c)
    if len(order) < len(names):
        raise UsageError("edges form a cycle: " + " -> ".join(_a_cycle(names, children, order)))
    return order


def _a_cycle(names: tuple[str, ...], children: list[list[int]], done: list[int]) -> list[str]:
    # Every view Kahn left over has a left-over parent, so walking up parents must repeat a view.
    left = set(range(len(names))) - set(done)
    parent_of = {c: p for p in sorted(left, reverse=True) for c in children[p] if c in left}
    path, v = [], min(left)
    while v not in path:
        path.append(v)
        v = parent_of[v]
    cycle = path[path.index(v) :][::-1]  # walked child to parent; print parent to child
    start = cycle.index(min(cycle, key=names.__getitem__))
    cycle = cycle[start:] + cycle[:start]
    return [names[u] for u in (*cycle, cycle[0])]


def _check_single_top(names: tuple[str, ...], below: Sequence[int]) -> None:
    if not names:
        raise UsageError("no views given: a lattice needs at least its top view")
    under_something = 0
    for v, bits in enumerate(below):
        under_something |= bits & ~(1 << v)
    tops = [names[v] for v in range(len(names)) if not under_something >> v & 1]
    if len(tops) != 1:
        raise UsageError(f"no unique top view: {', '.join(tops)} are computable from no view")


def _subset_bits(sets: tuple[frozenset[str], ...]) -> list[int]:
    # w ⊆ v iff w lacks every column v lacks: intersect, over the columns v lacks, the bitsets
    # of views lacking that column (a few big-int ANDs per view instead of n subset tests).
    everyone = (1 << len(sets)) - 1
    columns = sorted(frozenset().union(*sets))
    lacking = {c: sum(1 << v for v, s in enumerate(sets) if c not in s) for c in columns}
    below = []
    for s in sets:
        bits = everyone
        for c in columns:
            if c not in s:
                bits &= lacking[c]
        below.append(bits)
    return below


def _indexed(
    names: tuple[str, ...],
    sizes: Mapping[str, float],
    weights: Mapping[str, float] | None,
    below: Sequence[int],
) -> _Indexed:
    for name in names:
        if not _finite_non_negative(sizes[name]):
            raise UsageError(f"size of view {name!r} must be a non-negative number")
    if weights is None:
        weight = tuple(1.0 for _ in names)
    else:
        unknown = sorted(set(weights) - set(names))
        if unknown:
            raise UsageError(f"weights name unknown views: {', '.join(unknown)}")
        if not all(_finite_non_negative(w) for w in weights.values()):
            raise UsageError("weights must be non-negative numbers")
        weight = tuple(float(weights.get(name, 0.0)) for name in names)
    # Only weighted views carry cost, so benefits need only the weighted views each view answers.
    weighted = sum(1 << v for v, w in enumerate(weight) if w > 0)
    answers = tuple(_bit_indices(bits & weighted) for bits in below)
    top = next(v for v, bits in enumerate(below) if bits.bit_count() == len(names))
    size = tuple(float(sizes[name]) for name in names)
    return _Indexed(names, size, weight, answers, top, _bit_indices(weighted))


def _required(index: Mapping[str, int], required: Iterable[str]) -> tuple[int, ...]:
    wanted: list[int] = []
    for name in required:
        if name not in index:
            raise UsageError(f"required view {name!r} is not in the lattice")
        if index[name] not in wanted:
            wanted.append(index[name])
    return tuple(wanted)


def _bit_indices(bits: int) -> tuple[int, ...]:
    found = []
    while bits:
        low = bits & -bits
        found.append(low.bit_length() - 1)
        bits ^= low
    return tuple(found)


# --- the search -----------------------------------------------------------------------------


class _Expired(Exception):
    """`max_millis` ran out; the round under way is dropped."""


class _Search:
    """Mutable state of one run: the cost of answering each weighted view, picks, space used."""

    __slots__ = ("lat", "opts", "cost", "chosen", "picks", "costs", "rounds", "greedy_picks",
                 "used", "deadline")  # fmt: skip

    def __init__(self, lat: _Indexed, opts: _Options) -> None:
        self.lat, self.opts = lat, opts
        self.cost = [lat.sizes[lat.top]] * len(lat.names)  # §3.1: the top answers everything
        self.chosen = {lat.top}
        self.picks: list[tuple[str, float]] = []
        self.costs = [self.total_cost()]
        self.rounds: list[Mapping[str, float]] = []
        self.greedy_picks, self.used = 0, 0.0
        millis = opts.max_millis
        self.deadline = math.inf if millis is None else time.perf_counter() + millis / 1000

    def benefit(self, v: int) -> float:
        """B(v, S) (§4), the hot loop; terms summed in a fixed order, so results are exact
        repeats and a stale value bounds the fresh one even under float rounding."""
        size, cost, weights = self.lat.sizes[v], self.cost, self.lat.weights
        total = 0.0
        for w in self.lat.answers[v]:
            c = cost[w]
            if c > size:
                total += weights[w] * (c - size)
        return total

    def timed_benefit(self, v: int) -> float:
        """`benefit`, after checking the clock: one evaluation is the unit of work."""
        if time.perf_counter() >= self.deadline:
            raise _Expired
        return self.benefit(v)

    def total_cost(self) -> float:
        weights, cost = self.lat.weights, self.cost
        return sum(weights[w] * cost[w] for w in self.lat.weighted)

    def key(self, v: int, benefit: float) -> tuple[float, float, str]:
        """Smallest key wins: highest benefit (per row with a space budget), smaller, by name."""
        size = self.lat.sizes[v]
        if self.opts.space is None:
            score = benefit
        else:
            score = benefit / size if size > 0 else (math.inf if benefit > 0 else 0.0)
        return (-score, size, self.lat.names[v])

    def eligible(self, v: int, benefit: float) -> bool:
        """Both tests only get harder as S grows, so a view failing one is out for good."""
        space = self.opts.space
        fits = space is None or self.used + self.lat.sizes[v] <= space
        return fits and benefit > self.opts.min_benefit

    def wants_more(self) -> bool:
        return self.opts.k is None or self.greedy_picks < self.opts.k

    def round_table(self, *, timed: bool = True) -> Mapping[str, float] | None:
        """Fig. 8's row for this round: every unselected view's benefit, when recording."""
        if not self.opts.record_rounds:
            return None
        evaluate = self.timed_benefit if timed else self.benefit
        return MappingProxyType({self.lat.names[v]: evaluate(v) for v in self.unchosen()})

    def unchosen(self) -> list[int]:
        return [v for v in range(len(self.lat.names)) if v not in self.chosen]

    def pick(
        self, v: int, benefit: float, table: Mapping[str, float] | None, *, by_greedy: bool
    ) -> None:
        size = self.lat.sizes[v]
        for w in self.lat.answers[v]:
            self.cost[w] = min(self.cost[w], size)
        self.chosen.add(v)
        self.picks.append((self.lat.names[v], benefit))
        self.costs.append(self.total_cost())
        if table is not None:
            self.rounds.append(table)
        if by_greedy:
            self.greedy_picks += 1
            self.used += size

    def result(self, timed_out: bool) -> GreedyResult:
        top = self.lat.names[self.lat.top]
        picks, costs, rounds = tuple(self.picks), tuple(self.costs), tuple(self.rounds)
        return GreedyResult(top, picks, costs, rounds, timed_out)


def _select(lat: _Indexed, opts: _Options, required: tuple[int, ...]) -> GreedyResult:
    search = _Search(lat, opts)
    try:
        for v in required:  # declared, not searched for: never cut short by the clock
            if v not in search.chosen:  # the top is selected already
                table = search.round_table(timed=False)
                search.pick(v, search.benefit(v), table, by_greedy=False)
        (_lazy_rounds if opts.lazy else _plain_rounds)(search)
    except _Expired:
        return search.result(timed_out=True)
    return search.result(timed_out=False)


def _plain_rounds(search: _Search) -> None:
    """§4 as written: every round, the benefit of every unselected view; pick the best key."""
    while search.wants_more() and (left := search.unchosen()):
        benefits = {v: search.timed_benefit(v) for v in left}
        fit = [v for v in left if search.eligible(v, benefits[v])]
        if not fit:
            return
        best = min(fit, key=lambda v: search.key(v, benefits[v]))
        table = None
        if search.opts.record_rounds:
            table = MappingProxyType({search.lat.names[v]: benefits[v] for v in left})
        search.pick(best, benefits[best], table, by_greedy=True)


def _lazy_rounds(search: _Search) -> None:
    """Lazy greedy: a heap of stale benefits, which can only overstate (submodularity; float
    rounding is monotone too, and terms are summed in a fixed order). Keys compare (−score,
    size, name), and a stale key never exceeds the fresh one, so a fresh head beats every
    other view's fresh key, ties included: an entry with an equal stale score and a smaller
    size or name sits above the head and is re-evaluated first."""
    if not search.wants_more():
        return
    heap = [_entry(search, v) for v in search.unchosen()]
    heapq.heapify(heap)
    while search.wants_more() and heap:
        table = search.round_table()  # computed apart, so recording never steers the search
        best = _pop_best(search, heap)
        if best is None:
            return
        search.pick(*best, table, by_greedy=True)


_Entry = tuple[float, float, str, int, int, float]  # (−score, size, name, view, round, benefit)


def _entry(search: _Search, v: int) -> _Entry:
    benefit = search.timed_benefit(v)
    return (*search.key(v, benefit), v, len(search.picks), benefit)


def _pop_best(search: _Search, heap: list[_Entry]) -> tuple[int, float] | None:
    while heap:
        *_, v, evaluated_at, benefit = heap[0]
        if not search.eligible(v, benefit):  # the true benefit is no higher: out for good
            heapq.heappop(heap)
        elif evaluated_at == len(search.picks):
            heapq.heappop(heap)
            return v, benefit
        else:
            heapq.heapreplace(heap, _entry(search, v))
    return None
