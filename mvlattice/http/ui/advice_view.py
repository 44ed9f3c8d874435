"""The Advice fragment: the query log's misses by reason, grouped by the nearest tile and what
it lacks, each with the tile element to add to the model (`GET /v1/advice`, `mvlattice
advise`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mvlattice.http.ui.html import code, count, esc, sql_block, table


def advice_html(models: Sequence[Mapping[str, Any]]) -> str:
    if not models:
        return '<p class="empty">no models served</p>'
    return "".join(_model(m) for m in models)


def _model(doc: Mapping[str, Any]) -> str:
    head = (
        f"<h2>{esc(doc.get('model', ''))}</h2>"
        f"<p>{count(doc.get('misses'))} of {count(doc.get('requests'))} logged requests were "
        f"not rewritten; {count(doc.get('answered_now'))} of them are answered by the tiles "
        f"now; {count(doc.get('unadvised'))} no tile change would answer.</p>"
    )
    reasons = table(
        ["reason", "misses"],
        ([code(r.get("reason")), count(r.get("queries"))] for r in doc.get("reasons") or ()),
        "reasons",
        "no misses",
    )
    groups = "".join(_group(g) for g in doc.get("groups") or ())
    return f'<section class="advice">{head}{reasons}{groups}</section>'


def _group(g: Mapping[str, Any]) -> str:
    change = g.get("change") or {}
    examples = "".join(sql_block(sql) for sql in g.get("examples") or ())
    distinct = g.get("distinct")
    return (
        f'<div class="advice-group"><h3>{esc(g.get("headline", ""))}</h3>{_parts(g)}'
        f"<p>{esc(change.get('action', ''))}: add under lattice "
        f"{code(change.get('lattice', ''))} <code>tiles:</code></p>"
        f'<pre class="yaml">{esc(change.get("yaml", ""))}</pre>'
        f"<details><summary>{count(distinct)} distinct "
        f"{'query' if distinct == 1 else 'queries'}</summary>{examples}</details></div>"
    )


def _parts(g: Mapping[str, Any]) -> str:
    """The groups one element answers together (`advise` merges groups for one tile)."""
    parts = g.get("parts") or ()
    if len(parts) < 2:
        return ""
    items = "".join(f"<li>{esc(p.get('headline', ''))}</li>" for p in parts)
    return f'<ul class="parts">{items}</ul>'
