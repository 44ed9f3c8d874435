"""HRU96 §4's greedy search over an indexed lattice: plain rounds as the paper writes them and
lazy rounds (stale benefits only overstate, by submodularity), with k, space, time and
minimum-benefit stopping rules."""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from mvlattice.errors import UsageError
from mvlattice.plan.hru_order import Indexed, finite_non_negative


@dataclass(frozen=True, slots=True)
class GreedyResult:
    """What greedy chose, with enough detail to replay the paper's tables.

    `picks` are (view, benefit) in pick order, required views first; the top is not a pick.
    `costs[0]` is the total cost with only the top selected, `costs[i]` the total after pick i.
    `rounds[i]` maps every unselected non-top view (or, with `round_top`, the best of them,
    best first) to its benefit just before pick i (empty when rounds were not recorded).
    `timed_out` says `max_millis` ran out before greedy finished.
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
class Options:
    k: int | None
    space: float | None
    max_millis: float | None
    min_benefit: float
    lazy: bool
    record_rounds: bool
    round_top: int | None = None  # record only this many best views per round


def options(
    k: int | None,
    space: float | None,
    max_millis: float | None,
    min_benefit: float,
    lazy: bool,
    record_rounds: bool,
    round_top: int | None = None,
) -> Options:
    if k is not None and (not isinstance(k, int) or k < 0):
        raise UsageError(f"k must be a non-negative integer, got {k!r}")
    for label, value in (("space", space), ("max_millis", max_millis)):
        if value is not None and not finite_non_negative(value):
            raise UsageError(f"{label} must be a non-negative number, got {value!r}")
    if not isinstance(min_benefit, int | float) or not math.isfinite(min_benefit):
        raise UsageError(f"min_benefit must be a finite number, got {min_benefit!r}")
    if round_top is not None and (not isinstance(round_top, int) or round_top < 1):
        raise UsageError(f"round_top must be a positive integer, got {round_top!r}")
    return Options(k, space, max_millis, float(min_benefit), lazy, record_rounds, round_top)


class _Expired(Exception):
    """`max_millis` ran out; the round under way is dropped."""


class _Search:
    """Mutable state of one run: the cost of answering each weighted view, picks, space used."""

    __slots__ = ("lat", "opts", "cost", "chosen", "picks", "costs", "rounds", "greedy_picks",
                 "used", "deadline")  # fmt: skip

    def __init__(self, lat: Indexed, opts: Options) -> None:
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
        return self.table({v: evaluate(v) for v in self.unchosen()})

    def table(self, benefits: Mapping[int, float]) -> Mapping[str, float]:
        """A round's table from benefits: all of them, or the `round_top` best of the views
        still eligible, best first."""
        views = list(benefits)
        if self.opts.round_top is not None:
            views = [v for v in views if self.eligible(v, benefits[v])]
            key = {v: self.key(v, benefits[v]) for v in views}
            views = heapq.nsmallest(self.opts.round_top, views, key=key.__getitem__)
        return MappingProxyType({self.lat.names[v]: benefits[v] for v in views})

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


def select(lat: Indexed, opts: Options, required: tuple[int, ...]) -> GreedyResult:
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
        table = search.table(benefits) if search.opts.record_rounds else None
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
    top = search.opts.round_top
    while search.wants_more() and heap:
        if top is not None and search.opts.record_rounds:
            table: Mapping[str, float] | None = _lazy_top(search, heap, top)
        else:  # computed apart, so recording never steers the search
            table = search.round_table()
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


def _lazy_top(search: _Search, heap: list[_Entry], n: int) -> Mapping[str, float]:
    """The round's `n` best eligible views, lazily: drop ineligible heads as `_pop_best`
    does, refresh the head until it is fresh and set it aside, n times, then put them back.
    A fresh head's key is no worse than any other entry's fresh key (see `_lazy_rounds`), so
    they come out in exact order; refreshing only makes the heap more exact and leaves the
    pick unchanged."""
    fresh: list[_Entry] = []
    while heap and len(fresh) < n:
        *_, v, evaluated_at, benefit = heap[0]
        if not search.eligible(v, benefit):
            heapq.heappop(heap)
        elif evaluated_at == len(search.picks):
            fresh.append(heapq.heappop(heap))
        else:
            heapq.heapreplace(heap, _entry(search, v))
    for entry in fresh:
        heapq.heappush(heap, entry)
    return MappingProxyType({search.lat.names[e[3]]: e[5] for e in fresh})
