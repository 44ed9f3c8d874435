"""Pictures of a lattice as inline SVG, laid out here (no Spark, no JavaScript, no Graphviz):
the star/snowflake (fact in the middle, dimension tables on arms, snowflaked tables further out
on the same arm) and the tile lattice (the plan's views by level, circles sized by rows, an
arrow from each view to the views computable from it — the graph `plan --format dot` draws).

Every text goes through `esc`: names come from user models and must not become markup.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html import escape

from mvlattice.plan.render import GraphNode, TileGraph

CHAR_WIDTH = 7.0  # px per character of 12px sans-serif, near enough to size boxes
LINE_HEIGHT = 15.0
STAR_RADIUS = 190.0  # distance between a table and the table it joins to, at least
SPREAD = 1.15  # the star's distances grow by this factor until no two boxes overlap
GAP = 12.0  # the least room between two boxes or two labels
MAX_COLUMNS = 5  # columns listed in a table's box; the rest are counted
LEVEL_GAP = 120.0  # vertical distance between levels of the tile lattice
SLOT_WIDTH = 170.0  # horizontal room for one view of the tile lattice, at least
MIN_R, MAX_R = 8.0, 30.0  # circle radii of the smallest and the largest view
PAD = 20.0
TITLE = ' class="title"'

Point = tuple[float, float]


def esc(text: object) -> str:
    return escape(str(text), quote=True)


# -- the star ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class StarTable:
    alias: str
    table: str
    parent: str | None  # the alias it joins to (many-to-one); None for the fact table
    columns: tuple[str, ...] = ()  # dimension labels read from this table


def star_layout(tables: Iterable[StarTable], distance: float = STAR_RADIUS) -> dict[str, Point]:
    """Centre of each table's box: the fact at (0, 0), its dimension tables evenly around it,
    and each further table on its parent's arm, inside the parent's share of the circle (so
    arms never cross); `distance` between a table and its parent."""
    items = tuple(tables)
    children: dict[str | None, list[str]] = {}
    for t in items:
        children.setdefault(t.parent, []).append(t.alias)
    roots = children.get(None, [])
    out: dict[str, Point] = {}
    for root in roots:
        _place(root, 0, (0.0, 2 * math.pi), children, out, distance)
    return out


def _place(
    alias: str,
    depth: int,
    sector: tuple[float, float],
    children: Mapping[str | None, list[str]],
    out: dict[str, Point],
    distance: float,
) -> None:
    low, high = sector
    angle = (low + high) / 2
    out[alias] = (depth * distance * math.cos(angle), depth * distance * math.sin(angle))
    kids = children.get(alias, [])
    if depth == 0:  # the fact's arms: evenly around the whole circle, first one pointing up
        share = 2 * math.pi / max(1, len(kids))
        low = -math.pi / 2 - share / 2
    else:
        share = (high - low) / max(1, len(kids))
    for i, kid in enumerate(kids):
        _place(kid, depth + 1, (low + i * share, low + (i + 1) * share), children, out, distance)


def star_svg(tables: Iterable[StarTable]) -> str:
    items = tuple(tables)
    if not items:
        return '<p class="empty">no tables</p>'
    boxes = {t.alias: box_size(t) for t in items}
    where = spread_star(items, boxes)
    edges = [
        f'<line class="join" x1="{_n(where[t.parent][0])}" y1="{_n(where[t.parent][1])}" '
        f'x2="{_n(where[t.alias][0])}" y2="{_n(where[t.alias][1])}"/>'
        for t in items
        if t.parent in where and t.alias in where
    ]
    nodes = [_table_box(t, where[t.alias], boxes[t.alias]) for t in items if t.alias in where]
    return _svg("star", where, boxes, edges + nodes)


def spread_star(tables: tuple[StarTable, ...], boxes: Mapping[str, Point]) -> dict[str, Point]:
    """The star laid out with its arms long enough that no two tables' boxes overlap (wide
    names on many arms need more than STAR_RADIUS; the picture scales to its container)."""
    distance = STAR_RADIUS
    where = star_layout(tables, distance)
    for _ in range(40):  # 1.15**40: ~270 times the distance, far beyond any real box
        if not overlapping(where, boxes):
            break
        distance *= SPREAD
        where = star_layout(tables, distance)
    return where


def overlapping(where: Mapping[str, Point], boxes: Mapping[str, Point]) -> list[tuple[str, str]]:
    """Pairs of boxes (centred at `where`, of size `boxes`) closer than GAP to each other."""
    names = sorted(k for k in where if k in boxes)
    return [
        (a, b)
        for i, a in enumerate(names)
        for b in names[i + 1 :]
        if abs(where[a][0] - where[b][0]) < (boxes[a][0] + boxes[b][0]) / 2 + GAP
        and abs(where[a][1] - where[b][1]) < (boxes[a][1] + boxes[b][1]) / 2 + GAP
    ]


def box_size(table: StarTable) -> Point:
    lines = _box_lines(table)
    width = max(len(line) for line in lines) * CHAR_WIDTH + 16
    return width, len(lines) * LINE_HEIGHT + 10


def _box_lines(table: StarTable) -> list[str]:
    shown = list(table.columns[:MAX_COLUMNS])
    more = len(table.columns) - len(shown)
    return [f"{table.table} ({table.alias})", *shown, *([f"+{more} more"] if more else [])]


def _table_box(table: StarTable, at: Point, size: Point) -> str:
    (x, y), (w, h) = at, size
    kind = "fact" if table.parent is None else "dim"
    lines = _box_lines(table)
    texts = "".join(
        f'<text x="{_n(x - w / 2 + 8)}" y="{_n(y - h / 2 + 5 + (i + 0.8) * LINE_HEIGHT)}"'
        f"{TITLE if i == 0 else ''}>{esc(line)}</text>"
        for i, line in enumerate(lines)
    )
    return (
        f'<g class="table {kind}" data-alias="{esc(table.alias)}">'
        f"<title>{esc(table.table)}: {esc(', '.join(table.columns) or 'no dimensions')}</title>"
        f'<rect x="{_n(x - w / 2)}" y="{_n(y - h / 2)}" width="{_n(w)}" height="{_n(h)}" '
        f'rx="6"/>{texts}</g>'
    )


# -- the tile lattice ----------------------------------------------------------------------------
def tile_layout(graph: TileGraph, slot: float = SLOT_WIDTH) -> dict[str, Point]:
    """Centre of each view: the star on top, then one row per number of dimensions (widest
    first), each row centred and ordered by where its parents sit (fewer crossings); `slot`:
    the distance between neighbours in a row."""
    levels = sorted({_level(n) for n in graph.nodes}, reverse=True)
    parents: dict[str, list[str]] = {}
    for parent, child in graph.edges:
        parents.setdefault(child, []).append(parent)
    out: dict[str, Point] = {}
    for row, level in enumerate(levels):
        members = [n for n in graph.nodes if _level(n) == level]
        members.sort(key=lambda n: (_mean_x(parents.get(n.id, []), out), n.index))
        for i, node in enumerate(members):
            out[node.id] = ((i - (len(members) - 1) / 2) * slot, row * LEVEL_GAP)
    return out


def radius(rows: float, largest: float) -> float:
    """Circle radius on a log scale of rows: the largest view gets MAX_R, one row MIN_R."""
    if largest <= 1 or rows <= 1:
        return MIN_R
    share = math.log(rows) / math.log(largest)
    return MIN_R + (MAX_R - MIN_R) * min(1.0, share)


def tile_svg(graph: TileGraph) -> str:
    if not graph.nodes:
        return '<p class="empty">no plan</p>'
    labels = {n.id: view_label(n, graph.lattice) for n in graph.nodes}
    wide = {k: max(text_width(line) for line in lines) for k, lines in labels.items()}
    # Neighbours in a row stand as far apart as the widest label needs (labels never overlap)
    widest = max((w for k, w in wide.items() if k != "star"), default=0.0)  # alone in its row
    where = tile_layout(graph, max(SLOT_WIDTH, widest + GAP))
    largest = max(n.rows for n in graph.nodes)
    sizes = {n.id: radius(n.rows, largest) for n in graph.nodes}
    boxes = {k: (max(wide[k], 2 * sizes[k]), 2 * sizes[k] + 3 * LINE_HEIGHT) for k in where}
    edges = [_arrow(where[p], where[c], sizes[p], sizes[c]) for p, c in graph.edges]
    nodes = [_view(n, where[n.id], sizes[n.id], labels[n.id]) for n in graph.nodes]
    return _svg("tiles", where, boxes, edges + nodes, arrows=True)


def _level(node: GraphNode) -> int:
    return 1 << 30 if node.id == "star" else len(node.dimensions)


def _mean_x(names: list[str], placed: Mapping[str, Point]) -> float:
    xs = [placed[n][0] for n in names if n in placed]
    return sum(xs) / len(xs) if xs else 0.0


def _arrow(start: Point, end: Point, r_start: float, r_end: float) -> str:
    """From under the parent's label (labels hang below circles) to the child's circle."""
    x1, y1 = start[0], start[1] + r_start + 2 * LINE_HEIGHT + 6
    x2, y2 = end
    length = math.hypot(x2 - x1, y2 - y1) or 1.0
    dx, dy = (x2 - x1) / length, (y2 - y1) / length
    return (
        f'<line class="edge" x1="{_n(x1)}" y1="{_n(y1)}" '
        f'x2="{_n(x2 - dx * (r_end + 3))}" y2="{_n(y2 - dy * (r_end + 3))}" '
        'marker-end="url(#arrow)"/>'
    )


def view_label(node: GraphNode, lattice: str) -> list[str]:
    """The lines under a view's circle (its title holds every dimension)."""
    if node.id == "star":
        return [f"{_clip(lattice, 40)} (full detail)", f"{_count(node.rows)} rows"]
    dims = ", ".join(node.dimensions) or "()"
    return [f"#{node.index} {_clip(dims)}",
            f"{_count(node.rows)} rows, benefit {_count(node.benefit)}"]  # fmt: skip


def text_width(line: str) -> float:
    """An estimate of a line's width in 12px sans-serif (no font metrics on the server)."""
    return len(line) * CHAR_WIDTH


def _view(node: GraphNode, at: Point, r: float, lines: list[str]) -> str:
    x, y = at
    kind = "view star" if node.id == "star" else "view tile"
    if node.declared:
        kind += " declared"
    texts = "".join(
        f'<text x="{_n(x)}" y="{_n(y + r + (i + 1) * LINE_HEIGHT)}" text-anchor="middle">'
        f"{esc(line)}</text>"
        for i, line in enumerate(lines)
    )
    tip = f"{node.id}: {', '.join(node.dimensions) or 'all columns'}; {_count(node.rows)} rows"
    return (
        f'<g class="{kind}" data-view="{esc(node.id)}"><title>{esc(tip)}</title>'
        f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(r)}"/>{texts}</g>'
    )


def _clip(text: str, width: int = 22) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _count(value: float) -> str:
    return f"{value:,.0f}"


# -- shared ----------------------------------------------------------------------------------------
def _svg(
    kind: str,
    where: Mapping[str, Point],
    boxes: Mapping[str, Point],
    parts: list[str],
    arrows: bool = False,
) -> str:
    """The picture with a viewBox around every box (so it scales to its container)."""
    left = min(where[k][0] - boxes[k][0] / 2 for k in where) - PAD
    right = max(where[k][0] + boxes[k][0] / 2 for k in where) + PAD
    top = min(where[k][1] - boxes[k][1] / 2 for k in where) - PAD
    bottom = max(where[k][1] + boxes[k][1] / 2 for k in where) + PAD
    if kind == "tiles":  # labels hang below the circles
        top = min(where[k][1] for k in where) - MAX_R - PAD
        bottom = max(where[k][1] + boxes[k][1] for k in where) + PAD
    width, height = right - left, bottom - top
    defs = (
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker>'
        "</defs>"
        if arrows
        else ""
    )
    return (
        f'<svg class="{kind}" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'viewBox="{_n(left)} {_n(top)} {_n(width)} {_n(height)}" width="{_n(width)}" '
        f'height="{_n(height)}">{defs}{"".join(parts)}</svg>'
    )


def _n(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".") if value != 0 else "0"
