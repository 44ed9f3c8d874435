"""Miss analytics: the query log's unanswered queries, why, and the tile changes that answer them.

The query log records whether each request was rewritten, not why not; so every distinct missed
SQL is explained again against the current catalog (`Workspace.rewrite(explain=True)`). A miss
the current tiles answer is counted as answered now. For the others, the tiles are taken nearest
first by the rule the Queries page names its nearest view by (`mvrewrite.closest`), and the
first whose rejection the rewriter can fix (MISSING_COLUMN, CANNOT_ROLL_UP: it names the
dimension or measure; STALE, NOT_AVAILABLE: it matched) and that fixes complete
(`search.Search`) is the nearest tile. When no tile can be completed, a new tile is grown from
an empty one of each lattice. Misses are grouped by the change they need, and groups one tile
answers are merged into one element (`merge`).
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from mvlattice.advise import merge
from mvlattice.advise.advice import Advice, Change
from mvlattice.advise.search import FIXABLE, Search
from mvlattice.errors import QueryTimeoutError, SqlError
from mvlattice.lattice.lattice import TileSpec
from mvlattice.mvrewrite.closest import nearest_first
from mvlattice.querylog.log import LogRecord, read_log

if TYPE_CHECKING:
    from mvlattice.model.loader import Model
    from mvlattice.mvrewrite.rewriter import Explanation, RewriteResult
    from mvlattice.workspace import Workspace

KINDS = ("rewrite", "query")
MAX_DISTINCT = 500  # distinct missed queries explained, most asked first
EXAMPLES = 3


def advise(
    ws: Workspace, since: dt.datetime | None = None, stop: Callable[[], bool] = lambda: False
) -> Advice:
    """Advice from `ws`'s query log (since a time, if given) against its current tiles;
    QueryTimeoutError as soon as `stop()` is true between two misses."""
    records = read_log(ws.warehouse, since, spark=ws.spark)
    tiles = current_tiles(ws)
    return advise_records(records, ws.model, tiles, ws.rewrite, since, stop)


def current_tiles(ws: Workspace) -> dict[str, TileSpec]:
    """Tile name -> spec for every tile the rewriter considers (declared, built, planned)."""
    from mvlattice.jobs.catalog import CatalogAvailability, model_targets

    availability = CatalogAvailability(ws.spark, ws.model, ws.warehouse)
    targets = model_targets(availability.ctx)
    return {t.name: t.spec for t in targets if t.spec is not None}


def advise_records(
    records: Iterable[LogRecord],
    model: Model,
    tiles: Mapping[str, TileSpec],
    explain: Callable[[str, bool], RewriteResult],
    since: dt.datetime | None = None,
    stop: Callable[[], bool] = lambda: False,
) -> Advice:
    requests = [r for r in records if r.kind in KINDS]
    misses = Counter(r.sql for r in requests if is_miss(r))
    search = Search(model)
    reasons: Counter[str] = Counter()
    grouped: dict[Change, list[tuple[str, int]]] = defaultdict(list)
    answered = unadvised = 0
    for sql, times in misses.most_common(MAX_DISTINCT):
        if stop():
            raise QueryTimeoutError("advice cancelled: nobody waits for it any more")
        try:
            result = explain(sql, True)
        except SqlError:  # Spark rejects it as written (logged before that was checked)
            unadvised += times
            continue
        if result.rewritten:
            answered += times
            continue
        change = nearest(sql, result.explain, tiles, model, search)
        reasons[_reason(result.explain, tiles, change)] += times
        if change is None:
            unadvised += times
        else:
            grouped[change].append((sql, times))
    buckets = merge.merge(grouped, search.answers)
    return Advice(
        since=since.isoformat() if since else None,
        requests=len(requests),
        misses=sum(misses.values()),
        answered_now=answered,
        reasons=tuple(reasons.most_common()),
        groups=merge.groups(buckets, EXAMPLES),
        unadvised=unadvised
        + sum(n for _, n in misses.most_common()[MAX_DISTINCT:]),  # not explained: too many
    )


def is_miss(record: LogRecord) -> bool:
    """A request that succeeded (or would have) without a view, with its SQL stored whole."""
    return (
        not record.rewritten
        and record.outcome == "ok"
        and record.sql_form == "full"  # blanked SQL does not parse back into the same query
        and bool(record.sql)
    )


def nearest(
    sql: str,
    explanations: tuple[Explanation, ...],
    tiles: Mapping[str, TileSpec],
    model: Model,
    search: Search,
) -> Change | None:
    """The change to the nearest tile (`closest.nearest_first`: the Queries page's nearest view
    when it is a tile) the rewriter rejected with a fixable reason and fixes complete; else a new
    tile grown from each lattice's empty tile, the one needing the fewest fixes."""
    for note in nearest_first(explanations):
        spec = tiles.get(note.view or "")
        if spec is None or note.reason not in FIXABLE:
            continue
        fixes = search.complete(sql, spec)
        if fixes is not None:
            return _change(model, spec, note.view, fixes, str(note.reason))
    found: list[Change] = []
    for lattice in model.lattices:
        empty = TileSpec(lattice.name, (), lattice.default_measures)
        fixes = search.complete(sql, empty)
        if fixes:
            found.append(_change(model, empty, None, fixes))
    if not found:
        return None
    return min(found, key=lambda c: (len(c.fixes), len(c.spec.dimensions), c.spec.lattice))


def _change(
    model: Model, spec: TileSpec, base: str | None, fixes: tuple, reason: str = ""
) -> Change:
    for fix in fixes:
        spec = fix.apply(spec)
    defaults = next(lat.default_measures for lat in model.lattices if lat.name == spec.lattice)
    return Change(spec=spec, base=base, fixes=fixes, defaults=defaults, matched_reason=reason)


def _reason(
    explanations: tuple[Explanation, ...], tiles: Mapping[str, TileSpec], change: Change | None
) -> str:
    """The reason shown for a miss: the reason of the tile its change extends, else the nearest
    tile's, else the query's own (unsupported SQL), else the nearest view's."""
    if change is not None and change.matched_reason:
        return change.matched_reason
    notes = [e for e in explanations if e.reason]
    ranked = (
        nearest_first(e for e in notes if e.view in tiles)
        or [e for e in notes if e.view is None]
        or nearest_first(notes)
    )
    return str(ranked[0].reason) if ranked else "NO_VIEWS"
