"""A tile plan for people (a table), for programs (JSON) and as a picture (Graphviz DOT)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mvlattice.lattice.lattice import Measure
from mvlattice.output import plural
from mvlattice.plan.candidates import canonical, canonical_labels
from mvlattice.plan.coverage import Coverage
from mvlattice.plan.hru import cube_edges
from mvlattice.plan.planner import NO_WORKLOAD, LatticePlan, PlannedTile
from mvlattice.plan.workload import Workload

ROUND_CANDIDATES = 10  # candidates listed per round in JSON, best first


def number(value: float) -> int | float:
    """Whole numbers as ints, others to 3 decimals (estimates carry float noise)."""
    nearest = round(value)
    if abs(value - nearest) <= 1e-6 * max(1.0, abs(value)):
        return int(nearest)
    return round(value, 3)


def measure_document(measure: Measure) -> dict[str, Any]:
    """A measure as the model file writes it, so a planned tile can be pasted into a model."""
    out: dict[str, Any] = {"agg": measure.agg}
    if measure.args:
        out["args"] = list(measure.args)
    if measure.distinct:
        out["distinct"] = True
    if measure.approximate:
        out["approximate"] = True
    return out


def plan_document(plan: LatticePlan) -> dict[str, Any]:
    return {
        "lattice": plan.lattice.name,
        "algorithm": plan.lattice.algorithm,
        "rows": number(plan.top_rows),
        "candidates": plan.candidates,
        "candidates_truncated": plan.truncated,
        "timed_out": plan.timed_out,
        "cost_before": number(plan.cost_before),
        "cost_after": number(plan.cost_after),
        "workload": _workload_document(plan),
        "weighting": plan.weighting,
        "dimensions": list(plan.dimensions),
        "hierarchies": {column: list(below) for column, below in plan.hierarchies},
        "budget": budget_document(plan),
        "bytes": number(plan.bytes),
        "coverage": coverage_document(plan.coverage),
        "tiles": [_tile_document(tile) for tile in plan.tiles],
        "rounds": [
            {
                "round": i,
                "chosen": list(r.chosen),
                "candidates": [
                    {"dimensions": list(dims), "benefit": number(benefit)}
                    for dims, benefit in r.benefits[:ROUND_CANDIDATES]
                ],
            }
            for i, r in enumerate(plan.rounds, 1)
        ],
    }


def _tile_document(tile: PlannedTile) -> dict[str, Any]:
    return {
        "dimensions": list(tile.dimensions),
        "measures": [measure_document(m) for m in tile.spec.measures],
        "rows": number(tile.rows),
        "benefit": number(tile.benefit),
        "cost_after": number(tile.cost_after),
        "declared": tile.declared,
        "counted": tile.counted,
        "bytes": number(tile.bytes),
    }


def budget_document(plan: LatticePlan) -> dict[str, Any]:
    b = plan.budget
    return {
        "max_bytes": None if b.max_bytes is None else number(b.max_bytes),
        "share": b.share,
        "fact_bytes": None if b.fact_bytes is None else number(b.fact_bytes),
        "bytes_per_value": number(b.bytes_per_value),
        "bytes_per_value_measured": b.measured,
    }


def coverage_document(coverage: Coverage | None) -> dict[str, Any] | None:
    """Coverage as JSON: the weighted share answered from tiles, rows read before and after,
    each statement, and the curve as tiles are added."""
    if coverage is None:
        return None
    return {
        "source": coverage.source,
        "queries": len(coverage.queries),
        "answered": sum(q.answered for q in coverage.queries),
        "weight": number(coverage.weight),
        "answered_weight": number(coverage.answered_weight),
        "share": round(coverage.share, 4),
        "rows_before": number(coverage.rows_before),
        "rows_after": number(coverage.rows_after),
        "statements": [
            {
                "sql": q.sql,
                "weight": number(q.weight),
                "answered": q.answered,
                "tiles": [list(t) for t in q.tiles],
                "rows_before": number(q.rows_before),
                "rows_after": number(q.rows_after),
            }
            for q in coverage.queries
        ],
        "curve": [
            {
                "tiles": p.tiles,
                "added": list(p.added),
                "coverage": round(p.coverage, 4),
                "bytes": number(p.bytes),
                "rows_after": number(p.rows_after),
                "chosen": p.chosen,
            }
            for p in coverage.curve
        ],
    }


def _workload_document(plan: LatticePlan) -> dict[str, Any] | None:
    work = plan.workload
    if work is None:
        return None
    return {
        "statements": work.statements,
        "queries": len(work.queries),
        "ignored": work.ignored,
        "unparsed": work.unparsed,
        "unmapped": work.unmapped,
        "unmapped_statements": list(work.unmapped_statements()),
    }


def plan_text(plan: LatticePlan) -> str:
    """The chosen tiles in order with rows, benefit and cumulative cost, then a summary."""
    head = (
        f"Lattice {plan.lattice.name}: {plan.top_rows:,.0f} rows at full detail, "
        f"{plan.candidates:,} candidate group-bys"
    )
    lines = [head + (f"; {_workload_line(plan)}" if plan.workload is not None else "")]
    lines += unmapped_lines(plan.workload)
    if plan.weighting == NO_WORKLOAD:
        lines.append(f"({NO_WORKLOAD})")
    rows = [
        (
            str(i),
            ", ".join(t.dimensions) or "()",
            f"{'' if t.counted else '~'}{t.rows:,.0f}",
            size(t.bytes),
            f"{t.benefit:,.0f}",
            f"{t.cost_after:,.0f}",
            "declared" if t.declared else "",
        )
        for i, t in enumerate(plan.tiles, 1)
    ]
    header = ("#", "dimensions", "rows", "bytes", "benefit", "cost after", "")
    lines.extend(_aligned([header, *rows], right=(0, 2, 3, 4, 5)) if rows else ["(no tiles)"])
    lines += measure_lines(plan)
    lines.append(_cost_line(plan))
    lines.append(_budget_line(plan))
    if plan.coverage is not None:
        lines.extend(coverage_lines(plan.coverage))
    if any(not t.counted for t in plan.tiles):
        lines.append("(~: rows estimated from the statistics, not counted)")
    if plan.timed_out:
        lines.append("(stopped by the time limit: the best tiles found so far)")
    if not plan.lattice.algorithm:
        lines.append("(the lattice says algorithm: false, so only its declared tiles)")
    return "\n".join(lines)


def measure_lines(plan: LatticePlan) -> list[str]:
    """What the tiles can answer besides their dimensions: the measures they hold (a plan of
    `count` tiles cannot answer sum(unit_sales) by month, and that shows before building)."""
    kinds = {t.spec.measures for t in plan.tiles}
    if not kinds:
        return []
    if len(kinds) == 1:
        (measures,) = kinds
        return [f"Measures of every tile: {_measures(measures)}"]
    return [f"Measures of #{i}: {_measures(t.spec.measures)}" for i, t in enumerate(plan.tiles, 1)]


def _measures(measures: tuple[Measure, ...]) -> str:
    return ", ".join(str(m) for m in measures) or "none"


def size(value: float | None) -> str:
    """Bytes for people: 1.2 MB (powers of 1000, as --max-bytes reads MB)."""
    if value is None:
        return "-"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if value >= scale:
            return f"{value / scale:.1f} {unit}"
    return f"{value:,.0f} B"


def _budget_line(plan: LatticePlan) -> str:
    b = plan.budget
    per = "measured on built tiles" if b.measured else "default estimate"
    text = f"Tiles: {size(plan.bytes)} (~{b.bytes_per_value:.1f} bytes per value, {per})"
    if b.max_bytes is not None:
        text += f"; budget {size(b.max_bytes)}"
        if b.share is not None and b.fact_bytes is not None:
            text += f" ({b.share:.1%} of the fact table's {size(b.fact_bytes)})"
    return text


def coverage_lines(coverage: Coverage) -> list[str]:
    """The coverage summary and, for a plan, its curve: what each added tile buys."""
    what = "predicted by the plan" if coverage.source == "plan" else "answered by the rewriter"
    answered = sum(q.answered for q in coverage.queries)
    before, after = coverage.rows_before, coverage.rows_after
    lines = [
        f"Coverage ({what}): {coverage.share:.1%} of the workload's weight answered from tiles "
        f"({answered} of {plural(len(coverage.queries), 'statement')}); the statements read "
        f"{before:,.0f} -> {after:,.0f} rows"
    ]
    if coverage.curve:
        rows = [
            (
                str(p.tiles),
                f"{p.coverage:.1%}",
                size(p.bytes),
                f"{p.rows_after:,.0f}",
                "" if p.chosen else "(next pick, not chosen)",
            )
            for p in coverage.curve
        ]
        header = ("tiles", "coverage", "bytes", "rows read", "")
        lines.extend(_aligned([header, *rows], right=(0, 1, 2, 3)))
    return lines


def _aligned(rows: list[tuple[str, ...]], right: tuple[int, ...]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]

    def cell(i: int, text: str) -> str:
        return text.rjust(widths[i]) if i in right else text.ljust(widths[i])

    return ["  ".join(cell(i, text) for i, text in enumerate(row)).rstrip() for row in rows]


def _workload_line(plan: LatticePlan) -> str:
    work = plan.workload
    assert work is not None
    return (
        f"workload: {plural(work.statements, 'statement')}, "
        f"{plural(len(work.queries), 'group-by')} "
        f"({work.ignored} ignored, {work.unparsed} unparsed, {work.unmapped} unmapped)"
    )


UNMAPPED_SHOWN = 5


def unmapped_lines(work: Workload | None) -> list[str]:
    """The statements a plan could not weigh, named (a count alone says nothing to fix)."""
    unmapped = work.unmapped_statements() if work is not None else ()
    lines = [f"  unmapped: {_one_line(sql, 100)}" for sql in unmapped[:UNMAPPED_SHOWN]]
    if len(unmapped) > UNMAPPED_SHOWN:
        lines.append(f"  … and {len(unmapped) - UNMAPPED_SHOWN} more (`--json` lists them all)")
    if lines:
        lines.insert(0, "statements that read the fact table in a block the lattice cannot answer "
                     "(not an aggregate, or a column the lattice lacks):")  # fmt: skip
    return lines


def _one_line(sql: str, width: int) -> str:
    text = " ".join(sql.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _cost_line(plan: LatticePlan) -> str:
    before, after = plan.cost_before, plan.cost_after
    saved = f" ({1 - after / before:.1%} less)" if before > 0 else ""
    # HRU96's cost: what the group-bys planned for read, by weight — not the coverage line's
    # rows, which the workload's statements read (issue 36: two "rows read" totals confused)
    return f"Total cost: the planned-for group-bys read {before:,.0f} -> {after:,.0f} rows{saved}"


@dataclass(frozen=True, slots=True)
class GraphNode:
    """A view of the tile lattice: `star` (full detail) or `t<i>`, the plan's i-th tile."""

    id: str
    index: int  # 0 for the star, else the tile's place in the plan (1-based)
    dimensions: tuple[str, ...]
    rows: float
    benefit: float
    declared: bool = False


@dataclass(frozen=True, slots=True)
class TileGraph:
    """The star and the chosen tiles with the covering edges of "computable from" — what both
    the DOT picture and the status page's SVG draw."""

    lattice: str
    nodes: tuple[GraphNode, ...]
    edges: tuple[tuple[str, str], ...]  # (parent, child): child is computable from parent


def tile_graph(plan: LatticePlan) -> TileGraph:
    canon = canonical_labels(plan.lattice)
    views = {"star": frozenset(canon.values())}
    nodes = [GraphNode("star", 0, (), plan.top_rows, 0.0)]
    for i, tile in enumerate(plan.tiles, 1):
        columns = canonical(tile.dimensions, canon)
        if columns not in views.values():  # a declared tile as wide as the star: draw it once
            views[f"t{i}"] = columns
            nodes.append(
                GraphNode(f"t{i}", i, tile.dimensions, tile.rows, tile.benefit, tile.declared)
            )
    return TileGraph(plan.lattice.name, tuple(nodes), cube_edges(views))


def plan_dot(plan: LatticePlan) -> str:
    """The star and the chosen tiles, each box with its dimensions, rows and benefit, an arrow
    from every view to the views computable from it (covering edges of the subset order)."""
    graph = tile_graph(plan)
    star = f"{_escape(plan.lattice.name)} (full detail)\\n{plan.top_rows:,.0f} rows"
    lines = [
        f"digraph {_quote(plan.lattice.name)} {{",
        "  rankdir=TB;",
        '  node [shape=box, style=rounded, fontname="Helvetica"];',
        f'  star [label="{star}", style="rounded,bold"];',
        *(f'  {n.id} [label="{_tile_label(n)}"];' for n in graph.nodes if n.id != "star"),
        *(f"  {parent} -> {child};" for parent, child in graph.edges),
        "}",
    ]
    return "\n".join(lines)


def _tile_label(node: GraphNode) -> str:
    """'#1\\nthe_year\\nthe_month\\n24 rows, benefit 1,234' (DOT's escaped newlines)."""
    dims = "\\n".join(_escape(d) for d in node.dimensions) or "()"
    extra = " (declared)" if node.declared else ""
    return f"#{node.index}{extra}\\n{dims}\\n{node.rows:,.0f} rows, benefit {node.benefit:,.0f}"


def _quote(text: str) -> str:
    return f'"{_escape(text)}"'


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')
