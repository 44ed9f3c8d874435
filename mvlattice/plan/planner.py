"""Tiles for a lattice: HRU96 greedy over candidate group-bys sized by a statistics provider.

The views are column sets of the lattice (`candidates`), w ⪯ v iff w ⊆ v; the top is the star
at full detail, sized by the star's row count; every other view is sized by the distinct count
of its columns (counted or estimated by the provider), capped at the row count (§3.1's linear
cost model: answering a query costs the rows of the view it reads). With a workload, views are
weighted by how often they are asked for; without one (or when the workload names nothing in
this lattice) every candidate weighs 1, HRU96's uniform case.

Tiles the model declares are always selected, first; `algorithm: false` selects only them.
Chosen tiles carry the lattice's default measures plus every measure its declared tiles name.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from mvlattice.errors import UsageError
from mvlattice.lattice.lattice import Lattice, Measure, TileSpec
from mvlattice.lattice.statistic_provider import StatisticProvider
from mvlattice.model.loader import Model
from mvlattice.plan.candidates import (
    Candidates,
    ColumnSet,
    candidate_sets,
    canonical,
    canonical_labels,
)
from mvlattice.plan.hru import GreedyResult, greedy_over_sets, set_name
from mvlattice.plan.sizing import count_missing, counted, sizes
from mvlattice.plan.workload import Workload, read_workload, workload_from_entries

DEFAULT_MAX_TILES = 8
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
) -> LatticePlan:
    """Choose tiles for `lattice` (HRU96 §4 greedy; see the module docstring).

    `max_tiles` defaults to DEFAULT_MAX_TILES unless `max_rows` (a budget on the summed rows
    of chosen tiles) is given; `max_millis` (per greedy run) defaults to the lattice's
    `algorithmMaxMillis`. With `count` and a provider that can count more sets, the asked and
    declared sets are counted first, then the chosen tiles, and greedy runs again on the
    counted sizes (at most REFINE_ROUNDS times) until every chosen tile's rows are counted.
    `rounds` is how many of each round's best candidates the plan records (lazily found);
    None records every candidate (HRU96's Fig. 8 table, a plain-greedy evaluation per round),
    0 none.
    """
    _check_limits(max_tiles, max_rows)
    asked = workload.weights() if workload is not None and workload.queries else None
    cands = candidate_sets(lattice, stats, asked)
    if count:
        count_missing(stats, _by_weight(cands))

    def choose() -> tuple[dict[ColumnSet, float], GreedyResult]:
        views = sizes(cands.sets, cands.top, lattice, stats)
        result = greedy_over_sets(
            views,
            _k(lattice, max_tiles, max_rows),
            weights=cands.asked or None,
            space=max_rows,
            max_millis=_millis(lattice, max_millis),
            min_benefit=min_benefit,
            required=cands.declared,
            record_rounds=rounds != 0,
            round_top=rounds or None,
        )
        return views, result

    views, result = choose()
    by_name = {set_name(s): s for s in views}
    for _ in range(REFINE_ROUNDS):
        picked = (by_name[name] for name, _ in result.picks)
        if not (count and count_missing(stats, picked)):
            break
        views, result = choose()
    return _plan(lattice, cands, views, result, workload, stats)


def _by_weight(cands: Candidates) -> list[ColumnSet]:
    """What is asked, most asked first, then what is declared."""
    asked = sorted(cands.asked, key=lambda s: (-cands.asked[s], len(s), sorted(s)))
    return [*asked, *cands.declared]


def _k(lattice: Lattice, max_tiles: int | None, max_rows: float | None) -> int | None:
    if not lattice.algorithm:
        return 0
    if max_tiles is None and max_rows is None:
        return DEFAULT_MAX_TILES
    return max_tiles


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
