"""Tiles for a lattice: HRU96 greedy over candidate group-bys sized by a statistics provider.

The views are column sets of the lattice (`candidates`), w ⪯ v iff w ⊆ v; the top is the star
at full detail, sized by the star's row count; every other view is sized by the distinct count
of its columns (counted or estimated by the provider), capped at the row count (§3.1's linear
cost model: answering a query costs the rows of the view it reads).

Candidates are group-bys of dimension columns (`plan.columns`: no measure column of the fact
table), closed under the hierarchies the counts show (`plan.hierarchy`: a tile by month also
holds quarter and year). With a workload, views are weighted by how often they are asked for;
without one, by the hierarchies and declared tiles (`defaults`), and the plan says so.

Tiles the model declares are always selected, first; `algorithm: false` selects only them.
Chosen tiles carry the lattice's default measures, every measure its declared tiles name, and
every measure the workload queries they are chosen for aggregate (`assign`). A byte budget
(`plan.budget`) keeps the longest prefix of greedy's picks that fits; the plan's coverage of
its workload, and the curve of coverage and bytes as tiles are added, are `plan.coverage`'s.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from mvlattice.errors import UsageError
from mvlattice.lattice.lattice import Lattice, Measure, TileSpec
from mvlattice.lattice.statistic_provider import StatisticProvider
from mvlattice.model.loader import Model
from mvlattice.plan.assign import TileFacts, with_workload_measures
from mvlattice.plan.budget import Budget, stored_width, tile_bytes
from mvlattice.plan.candidates import (
    Candidates,
    ColumnSet,
    candidate_sets,
    canonical,
    canonical_labels,
    dimension_like,
)
from mvlattice.plan.columns import column_roles, fact_keys
from mvlattice.plan.coverage import Coverage, predicted_coverage
from mvlattice.plan.defaults import default_weights
from mvlattice.plan.hierarchy import closure, dependencies
from mvlattice.plan.hru import GreedyResult, greedy_over_sets, set_name
from mvlattice.plan.sizing import count_missing, counted, sizes
from mvlattice.plan.workload import Workload, WorkloadQuery, read_workload, workload_from_entries

DEFAULT_MAX_TILES = 8
BUDGET_TRIES = 4  # greedy runs again with a smaller space budget when the tiles are wider
BYTES_MAX_TILES = 32  # greedy's picks a byte budget (without --max-tiles) cuts a prefix of
NO_WORKLOAD = "no workload: group-bys weighed by the lattice's hierarchies and declared tiles"
ROUND_TOP = 10  # candidates recorded per round
REFINE_ROUNDS = 2


@dataclass(frozen=True, slots=True)
class PlannedTile:
    """A chosen tile, its estimated rows, its benefit when picked and the total cost after."""

    spec: TileSpec
    rows: float
    benefit: float
    cost_after: float
    declared: bool = False
    counted: bool = False  # rows counted by the provider, not estimated
    bytes: float = 0.0  # estimated: rows × stored columns × bytes per value (plan.budget)

    @property
    def dimensions(self) -> tuple[str, ...]:
        return self.spec.dimensions


@dataclass(frozen=True, slots=True)
class PlanRound:
    """HRU96 Fig. 8's row: the best candidates' benefits (or every candidate's) just before
    `chosen` was picked."""

    chosen: tuple[str, ...]
    benefits: tuple[tuple[tuple[str, ...], float], ...]  # best first


@dataclass(frozen=True, slots=True)
class LatticePlan:
    lattice: Lattice
    tiles: tuple[PlannedTile, ...]
    rounds: tuple[PlanRound, ...]
    top_rows: float
    cost_before: float
    candidates: int
    workload: Workload | None = None
    timed_out: bool = False
    truncated: bool = False  # the candidate cap cut unions or small sets
    weighting: str = "workload"  # or NO_WORKLOAD
    budget: Budget = Budget()
    coverage: Coverage | None = None  # of the workload, by the chosen tiles (predicted)
    dimensions: tuple[str, ...] = ()  # the columns the plan groups by (plan.columns)
    hierarchies: tuple[tuple[str, tuple[str, ...]], ...] = ()  # column -> columns it determines

    @property
    def bytes(self) -> float:
        return sum(t.bytes for t in self.tiles)

    @property
    def cost_after(self) -> float:
        return self.tiles[-1].cost_after if self.tiles else self.cost_before

    def answering(self, columns: Iterable[str]) -> PlannedTile | None:
        """The chosen tile with the fewest rows holding every column (join-equal columns count
        as the same), or None when only the star answers."""
        canon = canonical_labels(self.lattice)
        wanted = canonical(columns, canon)
        fits = [t for t in self.tiles if wanted <= canonical(t.dimensions, canon)]
        return min(fits, key=lambda t: t.rows, default=None)


def plan_lattice(
    lattice: Lattice,
    stats: StatisticProvider,
    *,
    max_tiles: int | None = None,
    max_rows: float | None = None,
    workload: Workload | None = None,
    max_millis: float | None = None,
    min_benefit: float = 0.0,
    count: bool = True,
    rounds: int | None = ROUND_TOP,
    keys: frozenset[str] = frozenset(),
    budget: Budget | None = None,
) -> LatticePlan:
    """Choose tiles for `lattice` (HRU96 §4 greedy; see the module docstring).

    `max_tiles` defaults to DEFAULT_MAX_TILES unless `max_rows` (a budget on the summed rows
    of chosen tiles) or `budget.max_bytes` is given; `max_millis` (per greedy run) defaults to
    the lattice's `algorithmMaxMillis`. With `count` and a provider that can count more sets,
    the asked and declared sets are counted first, then the chosen tiles, and greedy runs
    again on the counted sizes (at most REFINE_ROUNDS times) until every chosen tile's rows
    are counted. `rounds` is how many of each round's best candidates the plan records
    (lazily found); None records every candidate (HRU96's Fig. 8 table, a plain-greedy
    evaluation per round), 0 none. `keys`: the fact table's key columns (`columns.fact_keys`).
    """
    _check_limits(max_tiles, max_rows)
    money = budget or Budget()
    roles = column_roles(lattice, keys)
    canon = canonical_labels(lattice)
    dims = dimension_like(lattice, stats, canon, roles.dimensions)
    constants = [
        d
        for d in roles.dimensions
        if canon.get(d, d) == d and float(stats.distinct_count((d,))) <= 1
    ]
    determined = dependencies(lattice, stats, dims, constants) if count else {}

    def close(columns: ColumnSet) -> ColumnSet:
        return closure(columns, determined)

    has_work = workload is not None and bool(workload.queries)
    if has_work:
        assert workload is not None
        asked = _summed((q.columns, q.weight) for q in workload.queries if q.measures is not None)
    else:
        asked = default_weights(lattice, dims, determined)
    cands = candidate_sets(lattice, stats, asked, allowed=roles.dimensions, close=close)
    if count:
        count_missing(stats, _by_weight(cands))
    k = _k(lattice, max_tiles, max_rows, money.max_bytes)

    def choose(space: float | None) -> tuple[dict[ColumnSet, float], GreedyResult]:
        views = sizes(cands.sets, cands.top, lattice, stats)
        given = sizes(tuple(set(cands.origin.values())), cands.top, lattice, stats)
        for closed, origin in cands.origin.items():  # hierarchies: the same rows, unless counted
            if closed in views and closed != cands.top and not counted(stats, closed):
                views[closed] = min(views[closed], given[origin])
        result = greedy_over_sets(
            views,
            k + 1 if k else k,  # one more than asked: what the next tile would buy
            weights=cands.asked or None,
            space=space,
            max_millis=_millis(lattice, max_millis),
            min_benefit=min_benefit,
            required=cands.declared,
            record_rounds=rounds != 0,
            round_top=rounds or None,
        )
        return views, result

    def run(space: float | None) -> LatticePlan:
        views, result = choose(space)
        by_name = {set_name(s): s for s in views}
        for _ in range(REFINE_ROUNDS):
            picked = (by_name[name] for name, _ in result.picks)
            if not (count and count_missing(stats, picked)):
                break
            views, result = choose(space)
        return _plan(lattice, cands, views, result, workload, stats, money)

    # A byte budget is HRU's space budget (benefit per row, what fits) in rows of a typical
    # tile's width; when the chosen tiles are wider, the budget in rows shrinks and greedy runs
    # again, so the tiles that fit are chosen for it rather than cut off a larger plan.
    space = max_rows
    if money.max_bytes is not None:
        width = _typical_width(lattice, workload, close)
        space = _min(max_rows, money.max_bytes / (money.bytes_per_value * width))
    plan = run(space)
    for _ in range(BUDGET_TRIES):
        spent = _spent(plan, k, workload, money)
        if money.max_bytes is None or space is None or spent <= money.max_bytes:
            break
        space *= 0.9 * money.max_bytes / spent
        plan = run(space)
    return _finish(plan, k, has_work, workload, money, roles.dimensions, determined)


def _min(a: float | None, b: float) -> float:
    return b if a is None else min(a, b)


def _typical_width(
    lattice: Lattice, workload: Workload | None, close: Callable[[ColumnSet], ColumnSet]
) -> float:
    """Stored columns of a tile answering a typical query: its closed columns and measures."""
    queries = [q for q in (workload.queries if workload else ()) if q.measures is not None]
    base = stored_width((), lattice.default_measures)
    if not queries:
        return base + 3.0
    total = sum(q.weight for q in queries) or 1.0
    return (
        base
        + sum(q.weight * stored_width(close(q.columns), q.measures or ()) for q in queries) / total
    )


def _spent(plan: LatticePlan, k: int | None, workload: Workload | None, budget: Budget) -> float:
    """Bytes of the tiles a plan keeps before any cut by bytes."""
    queries = workload.queries if workload is not None else ()
    picks = [TileFacts(t.dimensions, t.spec.measures, t.rows, t.declared) for t in plan.tiles]
    declared = sum(t.declared for t in plan.tiles)
    keep = len(picks) if k is None else min(len(picks), declared + k)
    return _bytes(plan.lattice, picks[:keep], queries, budget)


def _summed(pairs: Iterable[tuple[ColumnSet, float]]) -> dict[ColumnSet, float]:
    out: dict[ColumnSet, float] = {}
    for columns, weight in pairs:
        out[columns] = out.get(columns, 0.0) + weight
    return out


def _finish(
    plan: LatticePlan,
    k: int | None,
    has_work: bool,
    workload: Workload | None,
    budget: Budget,
    dims: tuple[str, ...],
    determined: Mapping[str, frozenset[str]],
) -> LatticePlan:
    """Measures from the workload, bytes, the cut to `k` greedy picks and to the byte budget,
    and the coverage curve over every pick greedy made (the one past the cut included)."""
    queries = workload.queries if workload is not None else ()
    picks = [TileFacts(t.dimensions, t.spec.measures, t.rows, t.declared) for t in plan.tiles]
    declared = sum(t.declared for t in plan.tiles)
    keep = len(picks) if k is None else min(len(picks), declared + k)
    while (
        budget.max_bytes is not None
        and keep > declared
        and _bytes(plan.lattice, picks[:keep], queries, budget) > budget.max_bytes
    ):
        keep -= 1
    facts = with_workload_measures(plan.lattice, picks[:keep], queries)
    tiles = tuple(
        replace(
            tile,
            spec=replace(tile.spec, measures=fact.measures),
            bytes=_tile_bytes(fact, budget),
        )
        for tile, fact in zip(plan.tiles, facts, strict=False)
    )
    coverage = predicted_coverage(
        plan.lattice, picks, keep, workload, plan.top_rows, budget.bytes_per_value
    )
    hierarchies = tuple(
        (d, tuple(sorted(determined[d]))) for d in sorted(determined) if determined[d]
    )
    return replace(
        plan,
        tiles=tiles,
        rounds=plan.rounds[:keep],
        weighting="workload" if has_work else NO_WORKLOAD,
        budget=budget,
        coverage=coverage,
        dimensions=dims,
        hierarchies=hierarchies,
    )


def _tile_bytes(tile: TileFacts, budget: Budget) -> float:
    width = stored_width(tile.dimensions, tile.measures)
    return tile_bytes(tile.rows, width, budget.bytes_per_value)


def _bytes(
    lattice: Lattice, picks: Sequence[TileFacts], queries: Sequence[WorkloadQuery], budget: Budget
) -> float:
    return sum(_tile_bytes(t, budget) for t in with_workload_measures(lattice, picks, queries))


def _by_weight(cands: Candidates) -> list[ColumnSet]:
    """What is asked, most asked first, then what is declared."""
    asked = sorted(cands.asked, key=lambda s: (-cands.asked[s], len(s), sorted(s)))
    return [*asked, *cands.declared]


def _k(
    lattice: Lattice, max_tiles: int | None, max_rows: float | None, max_bytes: float | None
) -> int | None:
    if not lattice.algorithm:
        return 0
    if max_tiles is not None:
        return max_tiles
    if max_bytes is not None:
        return BYTES_MAX_TILES
    return None if max_rows is not None else DEFAULT_MAX_TILES


def _millis(lattice: Lattice, max_millis: float | None) -> float | None:
    if max_millis is not None:
        return max_millis
    return float(lattice.algorithm_max_millis) if lattice.algorithm_max_millis >= 0 else None


def _plan(
    lattice: Lattice,
    cands: Candidates,
    views: Mapping[ColumnSet, float],
    result: GreedyResult,
    workload: Workload | None,
    stats: StatisticProvider,
    budget: Budget,
) -> LatticePlan:
    by_name = {set_name(s): s for s in views}
    specs = _Specs(lattice)
    tiles = []
    for i, (name, benefit) in enumerate(result.picks):
        columns = by_name[name]
        spec, declared = specs.spec(columns)
        cost = result.costs[i + 1]
        is_counted = counted(stats, columns)
        tiles.append(PlannedTile(spec, views[columns], benefit, cost, declared, is_counted))
    rounds = tuple(
        PlanRound(specs.order(by_name[name]), _ranked(table, by_name, views, specs))
        for (name, _), table in zip(result.picks, result.rounds, strict=False)
    )
    top_rows = views[cands.top]
    return LatticePlan(
        lattice,
        tuple(tiles),
        rounds,
        top_rows,
        result.costs[0],
        len(views),
        workload,
        result.timed_out,
        cands.truncated,
        budget=budget,
    )


def _ranked(
    table: Mapping[str, float],
    by_name: Mapping[str, ColumnSet],
    views: Mapping[ColumnSet, float],
    specs: _Specs,
) -> tuple[tuple[tuple[str, ...], float], ...]:
    key = {name: (-benefit, views[by_name[name]], name) for name, benefit in table.items()}
    return tuple((specs.order(by_name[n]), table[n]) for n in sorted(table, key=key.__getitem__))


class _Specs:
    """TileSpecs for chosen column sets: declared tiles as declared, others with the lattice's
    default measures plus every declared tile's measures; dimensions in lattice order."""

    def __init__(self, lattice: Lattice) -> None:
        self.lattice = lattice
        self.position = {label: i for i, label in enumerate(lattice.labels)}
        canon = canonical_labels(lattice)
        self.declared: dict[ColumnSet, TileSpec] = {}
        for tile in lattice.tiles:
            self.declared.setdefault(canonical(tile.dimensions, canon), tile)
        declared_measures = (m for t in lattice.tiles for m in t.measures)
        self.measures: tuple[Measure, ...] = tuple(
            dict.fromkeys((*lattice.default_measures, *declared_measures))
        )

    def order(self, columns: ColumnSet) -> tuple[str, ...]:
        return tuple(sorted(columns, key=self.position.__getitem__))

    def spec(self, columns: ColumnSet) -> tuple[TileSpec, bool]:
        if columns in self.declared:
            return self.declared[columns], True
        return TileSpec(self.lattice.name, self.order(columns), self.measures), False


# --- a model's lattice, with its workload and statistics --------------------------------------

WorkloadInput = Workload | str | os.PathLike[str] | list | tuple | None


def plan_model(
    model: Model,
    stats_for: Callable[[Lattice], StatisticProvider],
    *,
    lattice: str | None = None,
    max_tiles: int | None = None,
    max_rows: float | None = None,
    workload: WorkloadInput = None,
    max_millis: float | None = None,
    budget: Budget | None = None,
) -> LatticePlan:
    """Plan one lattice of `model`. The workload (a file, a list of {dimensions, weight}
    entries, or a Workload) is read before statistics are asked for, so bad input fails fast."""
    chosen = model.choose_lattice(lattice)
    work = load_workload(workload, chosen)
    return plan_lattice(
        chosen,
        stats_for(chosen),
        max_tiles=max_tiles,
        max_rows=max_rows,
        workload=work,
        max_millis=max_millis,
        keys=fact_keys(model, chosen),
        budget=budget,
    )


def load_workload(workload: WorkloadInput, lattice: Lattice) -> Workload | None:
    if workload is None or isinstance(workload, Workload):
        return workload
    if isinstance(workload, list | tuple):
        return workload_from_entries(list(workload), lattice)
    return read_workload(workload, lattice)


def _check_limits(max_tiles: int | None, max_rows: float | None) -> None:
    if max_tiles is not None and (isinstance(max_tiles, bool) or not isinstance(max_tiles, int)):
        raise UsageError(f"max_tiles must be a whole number, got {max_tiles!r}")
    if max_tiles is not None and max_tiles < 0:
        raise UsageError(f"max_tiles must be zero or more, got {max_tiles}")
    if max_rows is not None and not (isinstance(max_rows, int | float) and max_rows >= 0):
        raise UsageError(f"max_rows must be a non-negative number, got {max_rows!r}")
