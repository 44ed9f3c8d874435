"""The suggestion as plain data (for `--json` and the HTTP API)."""

from __future__ import annotations

from typing import Any

from mvlattice.suggest.merge import describe_measure
from mvlattice.suggest.suggester import LatticeSuggestion, Suggestion, describe

MAX_IDS = 50


def as_json(result: Suggestion, output: str | None = None, model: str | None = None) -> dict:
    s = result.summary
    return {
        "summary": {
            "queries_read": s.read,
            "queries_parsed": s.parsed,
            "queries_used": s.used,
            "skipped": [
                {"reason": k.reason, "count": k.count, "examples": list(k.examples)}
                for k in s.skipped
            ],
            "blocks": s.blocks,
            "blocks_used": s.blocks_used,
            "join_directions": dict(s.directions),
            "lattices": s.lattices,
            "merged": result.merged,
            "lattices_without_merging": s.lattices_without_merging,
            "lattices_with_merging": s.lattices_with_merging,
            "window": list(s.window) if s.window else None,
            "statistics": s.statistics,
        },
        "lattices": [lattice_json(item) for item in result.lattices],
        "drop_candidates": [
            {"lattice": d.lattice, "dimensions": list(d.tile.dimensions)}
            for d in result.drop_candidates
        ],
        "output": output,
        "model": model,
    }


def lattice_json(item: LatticeSuggestion) -> dict[str, Any]:
    s = item.suggested
    out: dict[str, Any] = {
        "name": item.name,
        "evolves": item.evolves,
        "graph": describe(item),
        "queries": len(s.queries),
        "query_ids": list(s.queries[:MAX_IDS]),
        "weight": s.weight,
        "join_graphs": s.graphs,
        "measures": [{"measure": describe_measure(s.shape, m), "weight": w} for m, w in s.measures],
        "joins": [
            {"from": item.aliases[p[:-1]], "to": item.aliases[p], "decided_by": source}
            for p, source in s.decided.items()
        ],
        "aggregates_not_held": [{"call": t, "count": n} for t, n in s.unheld],
        "problem": item.problem,
        "note": item.note,
    }
    if item.lattice is not None:
        out["sql"] = item.lattice.sql
    plan = item.tiles
    if plan is not None:
        out["tiles"] = [
            {
                "dimensions": list(t.planned.dimensions),
                "rows": t.planned.rows,
                "benefit": t.planned.benefit,
                "queries": len(t.queries),
                "query_ids": list(t.queries[:MAX_IDS]),
                "weight": t.weight,
            }
            for t in plan.tiles
        ]
        out["star_only_queries"] = len(plan.star_only)
        out["unmapped_queries"] = len(plan.unmapped)
        out["tile_statistics"] = plan.statistics
    return out
