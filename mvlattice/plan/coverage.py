"""How much of a workload a set of tiles answers: the weighted share of queries answered from
tiles, the rows they read before (the star, for every query) and after (the tile answering
each), statement by statement, and the curve of coverage and bytes as tiles are added.

The plan predicts it (`predicted_coverage`: a query is answered when a chosen tile groups by
its columns and stores its measures, `plan.assign`); after `materialize`, the real rewriter
decides (`rewriter_coverage`, given a function that says which tiles the rewriter reads for a
statement). Coverage is over the statements that read the lattice's fact table; of a declared
list of group-bys (no SQL), over its entries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from mvlattice.lattice.lattice import Lattice
from mvlattice.plan.assign import TileFacts, answering, with_workload_measures
from mvlattice.plan.budget import stored_width, tile_bytes
from mvlattice.plan.candidates import canonical_labels
from mvlattice.plan.workload import Workload, WorkloadQuery


@dataclass(frozen=True, slots=True)
class QueryCoverage:
    """One statement (or declared entry): answered from tiles or not, by which tiles, and the
    rows it reads before and after."""

    sql: str | None
    weight: float
    answered: bool
    tiles: tuple[tuple[str, ...], ...]  # dimensions of the tiles read (predicted), or names
    rows_before: float
    rows_after: float


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """After the first `tiles` tiles: the weighted share answered and the bytes they take;
    `chosen` is False for the pick past the budget (what one more tile would buy)."""

    tiles: int
    added: tuple[str, ...]
    coverage: float
    bytes: float
    rows_after: float
    chosen: bool


@dataclass(frozen=True, slots=True)
class Coverage:
    source: str  # "plan" (predicted) or "rewriter" (what the rewriter answers over built tiles)
    queries: tuple[QueryCoverage, ...]
    curve: tuple[CurvePoint, ...] = ()

    @property
    def weight(self) -> float:
        return sum(q.weight for q in self.queries)

    @property
    def answered_weight(self) -> float:
        return sum(q.weight for q in self.queries if q.answered)

    @property
    def share(self) -> float:
        return self.answered_weight / self.weight if self.weight else 0.0

    @property
    def rows_before(self) -> float:
        return sum(q.weight * q.rows_before for q in self.queries)

    @property
    def rows_after(self) -> float:
        return sum(q.weight * q.rows_after for q in self.queries)


@dataclass(frozen=True, slots=True)
class _Item:
    sql: str | None
    weight: float
    asks: tuple[WorkloadQuery, ...]
    mapped: bool


def _items(workload: Workload) -> list[_Item]:
    if workload.sql:
        return [_Item(s.sql, s.weight, s.asks, s.mapped) for s in workload.sql if s.reads_fact]
    return [_Item(None, q.weight, (q,), True) for q in workload.queries]


def predicted_coverage(
    lattice: Lattice,
    picks: Sequence[TileFacts],
    keep: int,
    workload: Workload | None,
    top_rows: float,
    bytes_per_value: float,
) -> Coverage | None:
    """Coverage of the first `keep` of greedy's `picks` (with the workload's measures), and
    the curve over every pick; None without a workload."""
    if workload is None or not workload.queries:
        return None
    items = _items(workload)
    queries = workload.queries
    curve = []
    for n in range(1, len(picks) + 1):
        tiles = with_workload_measures(lattice, picks[:n], queries)
        measured = _measure(lattice, tiles, items, top_rows)
        size = sum(_bytes(t, bytes_per_value) for t in tiles)
        share = _share(measured)
        rows = sum(q.weight * q.rows_after for q in measured)
        curve.append(CurvePoint(n, picks[n - 1].dimensions, share, size, rows, n <= keep))
    final = with_workload_measures(lattice, picks[:keep], queries)
    return Coverage("plan", tuple(_measure(lattice, final, items, top_rows)), tuple(curve))


def _bytes(tile: TileFacts, bytes_per_value: float) -> float:
    width = stored_width(tile.dimensions, tile.measures)
    return tile_bytes(tile.rows, width, bytes_per_value)


def _share(queries: Sequence[QueryCoverage]) -> float:
    total = sum(q.weight for q in queries)
    return sum(q.weight for q in queries if q.answered) / total if total else 0.0


def _measure(
    lattice: Lattice, tiles: Sequence[TileFacts], items: Iterable[_Item], top_rows: float
) -> list[QueryCoverage]:
    canon = canonical_labels(lattice)
    out = []
    for item in items:
        found = [answering(tiles, ask, canon) for ask in item.asks]
        answered = item.mapped and bool(found) and all(t is not None for t in found)
        used = tuple(dict.fromkeys(t.dimensions for t in found if t is not None))
        before = top_rows * max(1, len(item.asks))
        after = sum(t.rows if t is not None else top_rows for t in found) if found else before
        out.append(QueryCoverage(item.sql, item.weight, answered, used, before, after))
    return out


def rewriter_coverage(
    workload: Workload,
    read_tiles: Callable[[str], tuple[str, ...] | None],
    tile_rows: Callable[[str], float | None],
    top_rows: float,
) -> Coverage | None:
    """Coverage decided by the rewriter: `read_tiles(sql)` names the tiles the rewritten
    statement reads (None: not rewritten onto tiles); `tile_rows(name)` their rows. Only a SQL
    workload can be checked so (a declared list has no statements)."""
    if not workload.sql:
        return None
    out = []
    for item in _items(workload):
        before = top_rows * max(1, len(item.asks))
        names = read_tiles(item.sql) if item.sql is not None else None
        if not names:
            out.append(QueryCoverage(item.sql, item.weight, False, (), before, before))
            continue
        rows = [tile_rows(n) for n in names]
        after = sum(r if r is not None else top_rows for r in rows)
        out.append(QueryCoverage(item.sql, item.weight, True, tuple((n,) for n in names),
                                 before, after))  # fmt: skip
    return Coverage("rewriter", tuple(out))
