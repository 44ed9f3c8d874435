"""The Tiles fragment: the catalog (`GET /v1/tiles`) as a table with a refresh button per tile,
and the refresh schedule (`GET /v1/schedule`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mvlattice.http.ui.html import code, count, esc, seconds, size, table, when

STATUSES = ("fresh", "stale", "building", "failed", "missing")
HEADERS = ("tile", "status", "source versions (built → now)", "rows", "size", "last refresh",
           "hits", "last used", "next refresh", "")  # fmt: skip

Entry = Mapping[str, Any]


def tiles_html(entries: Iterable[Entry], runs: Sequence[Entry]) -> str:
    rows = [_row(e, runs) for e in entries]
    if not rows:
        body = '<p class="empty">no tiles or materializations in the served models</p>'
    else:
        head = "".join(f"<th>{esc(h)}</th>" for h in HEADERS)
        body = (f'<table class="tiles"><thead><tr>{head}</tr></thead>'
                f"<tbody>{''.join(rows)}</tbody></table>")  # fmt: skip
    return body + "<h2>Schedule</h2>" + schedule_html(runs)


def schedule_html(runs: Iterable[Entry]) -> str:
    rows = [
        (esc(r.get("model", "")), esc(r.get("kind", "")), code(r.get("name", "")),
         code(r.get("cron", "")), when(r.get("next_run")))
        for r in runs
    ]  # fmt: skip
    empty = "no scheduled refreshes (no refresh: {cron: …} in the models, or --no-scheduler)"
    return table(("model", "kind", "target", "cron", "next run"), rows, "schedule", empty)


def next_run(entry: Entry, runs: Iterable[Entry]) -> str | None:
    """When the scheduler next refreshes this entry: its lattice's job for a tile, its own job
    for a materialization; the earliest when several apply."""
    if entry.get("kind") == "tile":
        kind, name = "lattice", entry.get("lattice")
    else:
        kind, name = "materialization", entry.get("name")
    found = sorted(
        str(r["next_run"])
        for r in runs
        if r.get("kind") == kind and r.get("name") == name and r.get("next_run")
        and r.get("model") in (None, entry.get("model"))
    )  # fmt: skip
    return found[0] if found else None


def _row(e: Entry, runs: Iterable[Entry]) -> str:
    name, status = str(e.get("name", "")), str(e.get("status", "missing"))
    css = status if status in STATUSES else "other"
    cells = (
        _what(e),
        f'<span class="badge status-{css}" title="{esc(e.get("message") or "")}">'
        f"{esc(status)}</span>" + _error(e),
        _versions(e.get("source_versions") or {}, e.get("current_versions") or {}),
        count(e.get("rows")),
        size(e.get("size_bytes")),
        _refreshed(e),
        count(e.get("hits")),
        when(e.get("last_used")),
        when(next_run(e, runs)),
        f'<button type="button" class="refresh" data-tile="{esc(name)}" '
        f'data-model="{esc(e.get("model") or "")}">Refresh</button>',
    )
    tds = "".join(f"<td>{c}</td>" for c in cells)
    return f'<tr data-tile="{esc(name)}" data-status="{esc(status)}">{tds}</tr>'


def _what(e: Entry) -> str:
    dims = ", ".join(str(d) for d in e.get("dimensions") or ())
    lattice = f" of {esc(e['lattice'])}" if e.get("lattice") else ""
    detail = f"<br><small>{esc(e.get('kind', ''))}{lattice}"
    return f"{code(e.get('name', ''))}{detail}{': ' + esc(dims) if dims else ''}</small>"


def _error(e: Entry) -> str:
    error = e.get("last_error")
    shown = f'<br><small class="error">{esc(error)}</small>' if error else ""
    if e.get("dropped"):  # still answers queries, until `gc` removes it
        shown += f"<br><small>{esc(e['dropped'])}: gc removes it</small>"
    return shown


def _versions(built: Mapping[str, Any], now: Mapping[str, Any]) -> str:
    """Each source table's Delta version when built and now; a change is marked."""
    names = sorted(set(built) | set(now))
    if not names:
        return "—"
    items = []
    for t in names:
        was, is_ = built.get(t), now.get(t)
        moved = ' class="moved"' if was != is_ else ""
        items.append(f"<li{moved}>{code(t)} {esc(_v(was))} → {esc(_v(is_))}</li>")
    return f'<ul class="versions">{"".join(items)}</ul>'


def _v(version: Any) -> str:
    return "—" if version is None else str(version)


def _refreshed(e: Entry) -> str:
    if not e.get("last_refresh"):
        return "never"
    how = e.get("refresh_path")
    took = seconds(e.get("build_seconds"))
    path = f" · {esc(how)}" if how else ""
    return f"{when(e['last_refresh'])}<br><small>took {took}{path}</small>"
