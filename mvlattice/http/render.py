"""The API's JSON documents for rewrites, query answers, lattices and plans."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from mvlattice.http.backend import Answer
from mvlattice.lattice.lattice import Lattice, TileSpec
from mvlattice.plan.render import TileGraph, measure_document, number, tile_graph


def rewrite_document(result: Any, explain: bool) -> dict[str, Any]:
    """The CLI's rewrite JSON: rewritten, sql, materializations, explain (when asked)."""
    doc = _as_dict(result)
    for key in ("rewritten", "sql", "materializations", "explain"):
        if key not in doc:
            doc[key] = _field(result, key)
    doc["rewritten"] = bool(doc["rewritten"])
    doc["materializations"] = [str(m) for m in doc["materializations"] or ()]
    doc["explain"] = [_plain(e) for e in doc["explain"] or ()] if explain else None
    return doc


def answer_of(model: str, result: Any, limit: int) -> Answer:
    """A `Workspace.query` QueryResult (asked for limit + 1 rows) as an Answer of at most
    `limit` rows; what ran and which views it read come from its RewriteResult, who answered
    from its `engine` (a result without one: Spark)."""
    rows = [tuple(r) for r in _field(result, "rows")]
    how = _field(result, "rewrite") or result
    return Answer(
        model=model,
        columns=tuple(str(c) for c in _field(result, "columns")),
        rows=tuple(rows[:limit]),
        truncated=len(rows) > limit,
        rewritten=bool(_field(how, "rewritten")),
        materializations=tuple(str(m) for m in _field(how, "materializations") or ()),
        sql=str(_field(how, "sql")),
        rewrite_seconds=None,
        engine=str(_field(result, "engine") or "spark"),
        engine_reason=str(_field(result, "engine_reason") or ""),
    )


def lattice_document(lattice: Lattice, model: str) -> dict[str, Any]:
    return {
        "name": lattice.name,
        "model": model,
        "schema": lattice.schema,
        "fact": lattice.root.qualified_table,
        "tables": [
            {"alias": n.alias, "table": n.qualified_table, "parent": n.parent}
            for n in lattice.nodes
        ],
        "dimensions": [
            {"label": c.label, "expression": c.expression, "derived": c.derived, "table": c.alias}
            for c in lattice.columns
        ],
        "measures": [measure_document(m) | {"name": m.name} for m in lattice.default_measures],
        "tiles": [_tile(t) for t in lattice.tiles],
        "auto": lattice.auto,
        "algorithm": lattice.algorithm,
        "refresh": {
            "cron": lattice.refresh.cron,
            "max_staleness_seconds": lattice.refresh.max_staleness_seconds,
        },
    }


def plan_summary(plan: Any) -> dict[str, Any]:
    """The planned tiles of a LatticePlan (HRU96), with the cost before and after."""
    return {
        "rows": number(plan.top_rows),
        "cost_before": number(plan.cost_before),
        "cost_after": number(plan.cost_after),
        "tiles": [
            {
                "dimensions": list(t.dimensions),
                "measures": [measure_document(m) for m in t.spec.measures],
                "rows": number(t.rows),
                "benefit": number(t.benefit),
                "declared": t.declared,
            }
            for t in plan.tiles
        ],
        "graph": graph_document(tile_graph(plan)),
        "weighting": plan.weighting,
        "bytes": number(plan.bytes),
        "coverage": _coverage(plan.coverage),
    }


def _coverage(coverage: Any) -> dict[str, Any] | None:
    """The plan's predicted coverage of its workload, without the statements."""
    from mvlattice.plan.render import coverage_document

    doc = coverage_document(coverage)
    if doc is not None:
        del doc["statements"]
    return doc


def graph_document(graph: TileGraph) -> dict[str, Any]:
    """The tile lattice as `plan --format dot` draws it: views and "computable from" edges."""
    return {
        "nodes": [
            {
                "id": n.id,
                "index": n.index,
                "dimensions": list(n.dimensions),
                "rows": number(n.rows),
                "benefit": number(n.benefit),
                "declared": n.declared,
            }
            for n in graph.nodes
        ],  # fmt: skip
        "edges": [list(edge) for edge in graph.edges],
    }


def _tile(spec: TileSpec) -> dict[str, Any]:
    return {
        "dimensions": list(spec.dimensions),
        "measures": [measure_document(m) for m in spec.measures],
    }


def _field(result: Any, name: str) -> Any:
    if isinstance(result, Mapping):
        return result.get(name)
    return getattr(result, name, None)


def _as_dict(item: Any) -> dict[str, Any]:
    for method in ("to_json", "to_dict"):
        if callable(getattr(item, method, None)):
            return dict(getattr(item, method)())
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return dataclasses.asdict(item)
    return dict(item) if isinstance(item, Mapping) else {}


def _plain(item: Any) -> Any:
    return _as_dict(item) or item
