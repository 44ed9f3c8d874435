"""Tiles for the logged workload, and the declared tiles the log never needed.

The workload of a lattice is what its queries ask of it, read by the tile planner's own SQL
mapper (`workload_asks.statement_asks`: each aggregate block's group-by and filtered columns
as lattice labels), weighted by how often each query ran; the planner's weighted HRU96 greedy
(`planner.plan_lattice`) picks the tiles. One adaptation, outside the mapper: each query is
mapped onto the part of the lattice its own star reads (`views`): a merged lattice may read a
table twice (two roles of a dimension, a self-join), which the mapper treats as ambiguous,
while each query read it once. (`SELECT DISTINCT cols` groups by cols in `sql.block_summary`.)

Each chosen tile is credited with the queries it would answer — the smallest chosen tile
holding all of a query's columns; tiles no query would read are dropped from the suggestion.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from sqlglot import exp

from mvlattice.lattice.lattice import Lattice, TileSpec
from mvlattice.lattice.statistic_provider import StatisticProvider
from mvlattice.plan.candidates import canonical, canonical_labels
from mvlattice.plan.planner import LatticePlan, PlannedTile, plan_lattice
from mvlattice.plan.workload import Workload, WorkloadQuery, merge
from mvlattice.plan.workload_asks import LatticeIndex, statement_asks, target


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    """A logged query, parsed."""

    id: str
    weight: float
    trees: tuple[exp.Expr, ...]


@dataclass(frozen=True, slots=True)
class QueryAsk:
    """What one aggregate block of a logged query asks of the lattice."""

    query: str
    weight: float
    dimensions: frozenset[str]
    filters: frozenset[str]

    @property
    def columns(self) -> frozenset[str]:
        return self.dimensions | self.filters


@dataclass(frozen=True, slots=True)
class SuggestedTile:
    planned: PlannedTile
    queries: tuple[str, ...]  # the queries it would answer
    weight: float


@dataclass(frozen=True, slots=True)
class TilePlan:
    plan: LatticePlan | None  # None: no query asked anything a tile could answer
    tiles: tuple[SuggestedTile, ...]  # the non-declared picks some query would read
    asks: tuple[QueryAsk, ...]
    star_only: tuple[str, ...]  # queries no chosen tile answers
    statistics: str
    dropped: int = 0  # greedy picks no query would read (superseded by later picks)
    unmapped: tuple[str, ...] = ()  # queries with no aggregate block the mapper could label


Views = Mapping[str, frozenset[str]]  # query id -> lattice node aliases its star reads


def lattice_asks(
    lattice: Lattice, queries: Sequence[ParsedQuery], views: Views | None = None
) -> tuple[QueryAsk, ...]:
    """Every aggregate block of the queries, as lattice labels (see the module docstring)."""
    targets: dict[frozenset[str], LatticeIndex] = {}
    asks = []
    for query in queries:
        aliases = (views or {}).get(query.id) or frozenset(n.alias for n in lattice.nodes)
        if aliases not in targets:
            targets[aliases] = target(_view(lattice, aliases))
        for tree in query.trees:
            found = statement_asks(tree, targets[aliases])
            asks += [QueryAsk(query.id, query.weight, a.dimensions, a.filters) for a in found.asks]
    return tuple(asks)


def workload(asks: Sequence[QueryAsk], statements: int) -> Workload:
    return Workload(
        merge(WorkloadQuery(a.dimensions, a.filters, a.weight) for a in asks), statements
    )


def plan_tiles(
    lattice: Lattice,
    queries: Sequence[ParsedQuery],
    stats: StatisticProvider,
    statistics: str,
    *,
    views: Views | None = None,
    max_tiles: int | None = None,
    max_rows: float | None = None,
) -> TilePlan:
    """HRU96 weighted by the log (see the module docstring)."""
    asks = lattice_asks(lattice, queries, views)
    asked = {a.query for a in asks}
    unmapped = tuple(q.id for q in queries if q.id not in asked)
    if not asks:
        return TilePlan(None, (), (), (), statistics, 0, unmapped)
    count_asked(lattice, stats, asks)
    plan = plan_lattice(
        lattice,
        stats,
        max_tiles=max_tiles,
        max_rows=max_rows,
        workload=workload(asks, len(queries)),
    )
    answered: dict[tuple[str, ...], list[QueryAsk]] = {}
    star_only = []
    for ask in asks:
        tile = plan.answering(ask.columns)
        if tile is None:
            star_only.append(ask.query)
        else:
            answered.setdefault(tile.dimensions, []).append(ask)
    picks = [t for t in plan.tiles if not t.declared]
    tiles = tuple(
        SuggestedTile(
            t,
            tuple(dict.fromkeys(a.query for a in answered[t.dimensions])),
            sum(a.weight for a in answered[t.dimensions]),
        )
        for t in picks
        if t.dimensions in answered
    )
    dropped = len(picks) - len(tiles)
    star = tuple(dict.fromkeys(star_only))
    return TilePlan(plan, tiles, asks, star, statistics, dropped, unmapped)


def count_asked(lattice: Lattice, stats: StatisticProvider, asks: Sequence[QueryAsk]) -> None:
    """Have a provider that can count more sets (a profiled one) count the asked views in one
    pass, so the views the workload weighs are sized by counts, not estimates."""
    count_sets = getattr(stats, "count_sets", None)
    if count_sets is None:
        return
    canon = canonical_labels(lattice)
    sets = {canonical(a.columns, canon) for a in asks}
    top = frozenset(canon.values())
    wanted = sorted((s for s in sets if s and s != top), key=lambda s: (len(s), sorted(s)))
    if wanted:
        count_sets(wanted)


def unused_tiles(lattice: Lattice, queries: Sequence[ParsedQuery]) -> tuple[TileSpec, ...]:
    """Declared tiles that no logged query could read: none of the queries' columns fit."""
    canon = canonical_labels(lattice)
    wanted = [canonical(a.columns, canon) for a in lattice_asks(lattice, queries)]
    return tuple(
        tile
        for tile in lattice.tiles
        if not any(w <= canonical(tile.dimensions, canon) for w in wanted)
    )


def _view(lattice: Lattice, aliases: frozenset[str]) -> Lattice:
    """The lattice restricted to some of its nodes (labels unchanged)."""
    if aliases >= {n.alias for n in lattice.nodes}:
        return lattice
    return replace(
        lattice,
        nodes=tuple(n for n in lattice.nodes if n.alias in aliases),
        edges=tuple(e for e in lattice.edges if e.target in aliases and e.source in aliases),
        columns=tuple(c for c in lattice.columns if c.alias is None or c.alias in aliases),
    )
