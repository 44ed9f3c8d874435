"""The Queries fragment: the newest requests (`GET /v1/querylog`) — SQL, rewritten or not,
the views read, the engine that answered, latency — and for a miss the nearest view and what it
lacks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mvlattice.http.ui.html import code, esc, sql_block, when
from mvlattice.mvrewrite.closest import nearest_view

Explanation = Mapping[str, Any]
ENGINE_NAMES = {"local": "tile engine", "spark": "Spark"}  # a query log entry's `engine`


def nearest(explain: Iterable[Explanation]) -> Explanation | None:
    """The explanation of the view that came closest to answering the query (None when no
    view was considered): the rule `advise` names its nearest tile by (`closest.nearest_view`)."""
    return nearest_view(explain)


def queries_html(entries: Sequence[Mapping[str, Any]]) -> str:
    if not entries:
        return ('<p class="empty">no rewrite or query requests since the service started '
                "(older ones: <code>mvlattice log MODEL</code>)</p>")  # fmt: skip
    head = "".join(
        f"<th>{h}</th>" for h in ("time", "kind", "SQL", "rewritten", "views used", "engine",
                                  "latency", "why not")
    )  # fmt: skip
    rows = "".join(_row(e) for e in entries)
    return f'<table class="queries"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'


def _sql(e: Mapping[str, Any]) -> str:
    if e.get("sql_form") == "omitted":  # --query-log-literals blank, and it did not parse
        return '<span class="empty">not shown: its literals could not be blanked</span>'
    return sql_block(e.get("sql", ""))


def _row(e: Mapping[str, Any]) -> str:
    outcome = str(e.get("outcome") or "")
    if outcome != "ok":
        verdict = f'<span class="badge status-failed">{esc(outcome)}</span>'
    elif e.get("rewritten"):
        verdict = '<span class="badge status-fresh">yes</span>'
    else:
        verdict = '<span class="badge status-stale">no</span>'
    views = ", ".join(code(v) for v in e.get("views") or ()) or "—"
    latency = e.get("latency_ms")
    cells = (
        when(e.get("time")),
        esc(e.get("kind", "")) + _small(e.get("model")),
        _sql(e),
        verdict,
        views,
        _engine(e.get("engine")),
        f"{latency:,.1f} ms" if isinstance(latency, int | float) else "—",
        _why(e),
    )
    tds = "".join(f"<td>{c}</td>" for c in cells)
    hit = "yes" if e.get("rewritten") else "no"
    engine = esc(e.get("engine") or "")
    return (f'<tr data-entry="{esc(e.get("id", ""))}" data-rewritten="{hit}" '
            f'data-engine="{engine}">{tds}</tr>')  # fmt: skip


def _engine(engine: object) -> str:
    """Who answered: the tile engine or Spark; a dash for a rewrite or a failed request."""
    if not engine:
        return "—"
    return f'<span class="engine">{esc(ENGINE_NAMES.get(str(engine), engine))}</span>'


def _small(text: object) -> str:
    return f"<br><small>{esc(text)}</small>" if text else ""


def _why(e: Mapping[str, Any]) -> str:
    if e.get("outcome") != "ok":
        return f'<span class="error">{esc(e.get("message") or e.get("outcome"))}</span>'
    if e.get("rewritten"):
        return ""
    explain = e.get("explain")
    if explain is None:
        return '<span class="empty">not explained yet</span>'
    near = nearest(explain)
    if near is None:
        first = next(iter(explain), None)
        text = first.get("message") if first else "no view covers these tables"
        return f'<span class="why">{esc(text)}</span>'
    later = " <small>(explained after the request)</small>" if e.get("explained_later") else ""
    return (
        f'<div class="why">nearest: {code(near.get("view"))} '
        f'<span class="reason">{esc(near.get("reason") or near.get("outcome"))}</span>{later}'
        f"<br>{esc(near.get('message', ''))}</div>{explanations_html(explain)}"
    )


def explanations_html(explain: Iterable[Explanation]) -> str:
    """Every view considered, in a collapsed list."""
    items = "".join(
        f"<li>{code(e.get('view') or '(query)')} {esc(e.get('outcome', ''))} "
        f"{esc(e.get('reason') or '')}: {esc(e.get('message', ''))}</li>"
        for e in explain
    )
    return f"<details><summary>every view</summary><ul>{items}</ul></details>" if items else ""
