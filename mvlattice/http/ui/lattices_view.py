"""The Lattices fragment: per lattice, its star/snowflake and its tile lattice (SVG) and the
planned tiles as a table — from the `GET /v1/lattices/{name}` document."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mvlattice.http.ui.html import count, esc, size, table
from mvlattice.http.ui.svg import StarTable, star_svg, tile_svg
from mvlattice.plan.render import GraphNode, TileGraph


def lattices_html(docs: Iterable[Mapping[str, Any]]) -> str:
    """One section per lattice document (with `plan`, or with `plan_error` when planning
    failed — one lattice's failure does not blank the page)."""
    sections = [_section(doc) for doc in docs]
    if not sections:
        return '<p class="empty">no lattices in the served models</p>'
    return "".join(sections)


def star_tables(doc: Mapping[str, Any]) -> tuple[StarTable, ...]:
    by_table: dict[str, list[str]] = {}
    for dim in doc.get("dimensions", ()):
        if dim.get("table"):
            by_table.setdefault(dim["table"], []).append(str(dim["label"]))
    return tuple(
        StarTable(t["alias"], t["table"], t.get("parent"), tuple(by_table.get(t["alias"], ())))
        for t in doc.get("tables", ())
    )


def graph_of(doc: Mapping[str, Any]) -> TileGraph | None:
    """The plan's tile graph (`plan.graph`), None without a plan."""
    graph = (doc.get("plan") or {}).get("graph")
    if graph is None:
        return None
    nodes = tuple(
        GraphNode(n["id"], int(n["index"]), tuple(n["dimensions"]), float(n["rows"]),
                  float(n["benefit"]), bool(n.get("declared")))
        for n in graph["nodes"]
    )  # fmt: skip
    edges = tuple((str(p), str(c)) for p, c in graph["edges"])
    return TileGraph(str(doc["name"]), nodes, edges)


def _section(doc: Mapping[str, Any]) -> str:
    name = str(doc.get("name", "?"))
    head = (
        f'<section class="lattice" data-lattice="{esc(name)}"><h2>{esc(name)}</h2>'
        f'<p class="meta">model {esc(doc.get("model", ""))} · fact {esc(doc.get("fact", ""))}'
        f" · {len(doc.get('dimensions', ()))} dimensions · {len(doc.get('measures', ()))} "
        "measures</p>"
    )
    star = f"<figure><figcaption>Star</figcaption>{star_svg(star_tables(doc))}</figure>"
    return f'{head}<div class="pictures">{star}{_plan(doc)}</div></section>'


def _coverage(plan: Mapping[str, Any]) -> str:
    """What the plan was weighed by and how much of the workload its tiles answer."""
    covered = plan.get("coverage")
    if not covered:
        return f'<p class="meta">{esc(plan.get("weighting") or "")}</p>'
    curve = ", ".join(
        f"{p['tiles']}: {p['coverage']:.0%}" for p in covered.get("curve", []) if p.get("chosen")
    )
    return (
        f'<p class="meta">coverage of the workload: {covered["share"]:.1%} of its weight '
        f"({covered['answered']} of {covered['queries']} statements); the statements read "
        f"{count(covered['rows_before'])} → {count(covered['rows_after'])} rows; "
        f"tiles take {size(plan.get('bytes'))}</p>"
        f'<p class="meta">as tiles are added: {esc(curve)}</p>'
    )


def _plan(doc: Mapping[str, Any]) -> str:
    if doc.get("plan_error"):
        return f'<p class="error">no plan: {esc(doc["plan_error"])}</p>'
    if doc.get("planning"):
        return (
            f'<p class="meta planning">planning its tiles, {esc(doc["planning"])} '
            "(the plan shows here when it is ready)</p>"
        )
    graph = graph_of(doc)
    if graph is None:
        return '<p class="empty">no plan</p>'
    plan = doc["plan"]
    cost = (
        f'<p class="meta">{count(plan.get("rows"))} rows at full detail; the planned-for '
        f"group-bys read {count(plan.get('cost_before'))} → {count(plan.get('cost_after'))} "
        "rows</p>"
    )
    cost += _coverage(plan)
    rows = [
        (
            f"#{n.index}" + (" (declared)" if n.declared else ""),
            esc(", ".join(n.dimensions) or "()"),
            count(round(n.rows)),
            count(round(n.benefit)),
        )
        for n in graph.nodes
        if n.id != "star"
    ]
    tiles = table(("tile", "dimensions", "rows", "HRU benefit"), rows, "plan", "no tiles planned")
    return f"<figure><figcaption>Tile lattice</figcaption>{tile_svg(graph)}{cost}{tiles}</figure>"
