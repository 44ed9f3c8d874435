"""Templates (issue 31): the cost of one request through `Workspace.query`, in process, for a text
of a template answered before (its literals bound into the kept decision) and for a text of a
template never seen (parsed, accepted, rewritten, described, transpiled, then filed), side by
side in one run, with the Python steps of a known template's request timed one by one.

Loads FoodMart into the warehouse and builds `mvlattice.proof.adhoc`'s tiles (both reused when
already there), warms the template entries with --warm texts of the ad-hoc traffic, then times
--runs new texts of those templates (every one answered from a template, else it is counted as a
miss) and --runs texts of templates never seen (another traffic seed). The DuckDB run is timed
apart: it is the engine's work, not the request's Python. Goals (issue 31): a known template's
Python p50 <= 1.5 ms; a never-seen template's <= 6 ms.

    python bench/templates.py [--warehouse DIR] [--warm 6000] [--runs 1000] [--json]
"""

from __future__ import annotations

import sys
from pathlib import Path

if Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import argparse
import json
import statistics
import tempfile
import time
from typing import Any

import yaml

from mvlattice.proof import adhoc
from mvlattice.serving import template_step
from mvlattice.serving.request import Request
from mvlattice.sql.slots import bind
from mvlattice.sql.transpile import Transpiled
from mvlattice.workspace import Workspace

KNOWN_GOAL_MS, NEW_GOAL_MS = 1.5, 6.0


def workspace(warehouse: str) -> Workspace:
    from mvlattice.datasets import foodmart
    from mvlattice.spark import build_session, spark_conf

    master = "local[2]"
    foodmart.load(build_session(master, warehouse, spark_conf(master, warehouse, ())), warehouse)
    model = Path(warehouse) / "foodmart_adhoc.yaml"
    model.write_text(yaml.safe_dump(adhoc.foodmart_document()))
    ws = Workspace(model, warehouse=warehouse, master=master)
    assert ws.materialize().ok
    return ws


def domain(ws: Workspace) -> adhoc.Domain:
    found: dict[str, list[Any]] = {}
    first = last = None
    for name, sql in adhoc.DOMAIN_SQL.items():
        rows = ws.spark.sql(sql).collect()
        if name == "the_date":
            first, last = rows[0][0].date(), rows[0][1].date()
        else:
            found[name] = [r[0] for r in rows]
    assert first is not None and last is not None
    return adhoc.Domain.of(found, first, last)


def steps(ws: Workspace, sql: str) -> dict[str, float] | None:
    """A known template's request, step by step (ms), or None when its entry is missing."""
    t0 = time.perf_counter()
    bound = bind(sql)
    t1 = time.perf_counter()
    if bound is None:
        return None
    context, availability = ws.serving.catalog.rewrite_views()
    templates = ws.serving.templates
    key = templates.key(template_step._owner(ws, Request(sql=sql)), context, bound)
    t2 = time.perf_counter()
    entry = templates.find(key, context)
    if entry is None:
        return None
    snapshots = template_step._still_approved(availability, entry)
    t3 = time.perf_counter()
    assert snapshots is not None
    duckdb_sql = entry.duckdb.bind(bound)
    entry.rewritten.bind(bound)
    t4 = time.perf_counter()
    ws.serving.tile_engine.answer_planned(Transpiled(duckdb_sql, entry.tables), entry.schema,
                                          snapshots, None)  # fmt: skip
    t5 = time.perf_counter()
    ms = 1000.0
    return {"read text": (t1 - t0) * ms, "views and guard": (t2 - t1) * ms,
            "find and freshness": (t3 - t2) * ms, "bind": (t4 - t3) * ms,
            "duckdb": (t5 - t4) * ms}  # fmt: skip


def timed(ws: Workspace, texts: list[str]) -> tuple[list[float], int, int]:
    """Milliseconds per `Workspace.query`, and how many were template hits and misses."""
    out = []
    templates = ws.serving.templates
    hits, misses = templates.hits, templates.misses
    for sql in texts:
        start = time.perf_counter()
        ws.query(sql)
        out.append((time.perf_counter() - start) * 1000.0)
    return out, templates.hits - hits, templates.misses - misses


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warehouse", default=None)
    parser.add_argument("--warm", type=int, default=6000)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    warehouse = args.warehouse or tempfile.mkdtemp(prefix="bench_templates_")
    ws = workspace(warehouse)
    values = domain(ws)
    known = adhoc.AdhocTraffic(values, 31, 64)
    for _ in range(args.warm):
        ws.query(known.next().sql)
    hit_texts = [known.next().sql for _ in range(args.runs)]
    detail = [s for s in (steps(ws, sql + " ") for sql in hit_texts) if s is not None]
    known_ms, known_hits, known_misses = timed(ws, hit_texts)
    fresh = adhoc.AdhocTraffic(values, 97, 64)
    new_ms, _, _ = timed(ws, [fresh.next().sql for _ in range(args.runs)])
    python = [sum(v for k, v in d.items() if k != "duckdb") for d in detail]
    report = {
        "known_template": {"p50_ms": statistics.median(known_ms), "hits": known_hits,
                           "misses": known_misses, "python_p50_ms": statistics.median(python),
                           "duckdb_p50_ms": statistics.median(d["duckdb"] for d in detail),
                           "steps_p50_ms": {k: statistics.median(d[k] for d in detail)
                                            for k in detail[0]}},
        "new_template": {"p50_ms": statistics.median(new_ms)},
        "goals_ms": {"known_python": KNOWN_GOAL_MS, "new": NEW_GOAL_MS},
    }  # fmt: skip
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        k, n = report["known_template"], report["new_template"]
        print(f"known template: p50 {k['p50_ms']:.2f} ms end to end ({k['hits']} hits, "
              f"{k['misses']} misses); Python p50 {k['python_p50_ms']:.2f} ms "
              f"(goal {KNOWN_GOAL_MS}), DuckDB p50 {k['duckdb_p50_ms']:.2f} ms")  # fmt: skip
        for name, value in k["steps_p50_ms"].items():
            print(f"  {name:<20} p50 {value:.3f} ms")
        print(f"never-seen template: p50 {n['p50_ms']:.2f} ms end to end (goal {NEW_GOAL_MS})")
    ws.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
