"""The tile engine on FoodMart: a tile-answerable query end to end through `Workspace.query`
(rewrite, freshness, execution), answered in the driver versus on Spark, and rewriting alone.

Loads FoodMart into the warehouse (or reuses it), plans tiles (HRU96) with the demo's three
queries as the workload and builds them (fresh ones are skipped), then for each query:

* base: `ws.query(sql, rewrite=False)` on Spark, median of --spark-runs after one warm-up;
* spark: `ws.query(sql, engine="spark")`, rewritten and run on Spark, the same;
* tile engine: `ws.query(sql)` (engine "auto"), p50/p99 of --runs after --warm-up runs; it must
  be answered by the tile engine ("local"), else the reason Spark answered is printed; after
  its first run, the answer kept for the query text is served (freshness still decided);
* new text: the same with a numbering comment each run, so each run is parsed, rewritten,
  checked and run by the tile engine — the end-to-end time the goal is about;
* rewrite: `ws.rewrite(sql, explain=False)` alone (the workspace's tiles and freshness), p50.

The rows of all three must be the same (multisets). Then rewriting alone against 100 views:
`bench/rewrite.py`'s 100 seeded FoodMart tiles prepared once, its 50 queries and the demo's
three, `rewrite(sql, context, explain=False)` from SQL text, p50. Prints everything side by
side in one run, with the ratios. Goals (issue 19): tile engine p50 <= 15 ms end to end;
rewrite alone p50 <= 2 ms with 100 views.

    python bench/tile_engine.py [--warehouse DIR] [--runs 200] [--warm-up 3]
                                [--spark-runs 5] [--repeat 5] [--json]
"""

from __future__ import annotations

import sys
from pathlib import Path

# `python bench/x.py` makes bench/ sys.path[0], where bench/profile.py would shadow the stdlib
# `profile` that pyspark imports (through cProfile): put the repository root there instead.
if Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import argparse
import json
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

from mvlattice.cli.commands import DEMO_QUERIES
from mvlattice.mvrewrite.rewriter import QueryResult
from mvlattice.proof.comparison import same_rows
from mvlattice.settings import resolve_warehouse
from mvlattice.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
LOCAL_GOAL_MS = 15.0
REWRITE_GOAL_MS = 2.0


def timings(run: Callable[[], object], warm_up: int, runs: int) -> list[float]:
    """Milliseconds of `runs` calls after `warm_up` unmeasured ones."""
    for _ in range(warm_up):
        run()
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        out.append((time.perf_counter() - start) * 1000)
    return out


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def workspace(warehouse: str) -> Workspace:
    """FoodMart loaded and the demo's tiles built (both reused when already there)."""
    from mvlattice.datasets import foodmart
    from mvlattice.plan.workload import workload_from_sql
    from mvlattice.spark import build_session, resolve_master, spark_conf

    # Loaded with a plain session first: the model's columns come from the tables' Delta logs.
    master = resolve_master(None)
    foodmart.load(build_session(master, warehouse, spark_conf(master, warehouse, ())), warehouse)
    ws = Workspace(REPO / "models" / "foodmart.yaml", warehouse=warehouse, master=master)
    lattice = ws.model.lattices[0]
    work = workload_from_sql(((sql, 1.0) for _, sql in DEMO_QUERIES), lattice)
    built = ws.materialize(lattice.name, workload=work)
    if not built.ok:
        raise SystemExit(f"building the tiles failed: {built.results}")
    return ws


def per_query(ws: Workspace, name: str, sql: str, args: argparse.Namespace) -> dict[str, Any]:
    last: dict[str, QueryResult] = {}

    def run(key: str, **options: Any) -> Callable[[], None]:
        def once() -> None:
            last[key] = ws.query(sql, **options)

        return once

    base = timings(run("base", rewrite=False, engine="spark"), 1, args.spark_runs)
    spark = timings(run("spark", engine="spark"), 1, args.spark_runs)
    local = timings(run("auto"), args.warm_up, args.runs)
    texts = iter(range(10**9))

    def new_text() -> None:  # no answer kept for an earlier text serves it
        last["new"] = ws.query(f"/* run {next(texts)} */ {sql}")

    fresh = timings(new_text, args.warm_up, args.runs)
    rewrite = timings(lambda: ws.rewrite(sql, explain=False), args.warm_up, args.runs)
    auto = last["auto"]
    same = all(same_rows(last["base"].rows, last[k].rows) for k in ("spark", "auto", "new"))
    return {
        "name": name,
        "engine": str(auto.engine),
        "engine_reason": auto.engine_reason,
        "tiles": list(auto.rewrite.materializations),
        "same_result": same,
        "base_p50_ms": statistics.median(base),
        "spark_p50_ms": statistics.median(spark),
        "local_p50_ms": statistics.median(local),
        "local_p99_ms": percentile(local, 0.99),
        "new_text_p50_ms": statistics.median(fresh),
        "new_text_p99_ms": percentile(fresh, 0.99),
        "new_text_engine": str(last["new"].engine),
        "rewrite_p50_ms": statistics.median(rewrite),
    }


def rewrite_100_views(seed: int, repeat: int) -> dict[str, Any]:
    """bench/rewrite.py's 100 FoodMart tiles and 50 queries, plus the demo's queries."""
    from bench.rewrite import TYPES, foodmart_model, queries, tiles
    from mvlattice.mvrewrite.context import context_for
    from mvlattice.mvrewrite.rewriter import rewrite

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as folder:
        model = foodmart_model(Path(folder))
        context = context_for(model, tiles=tiles(rng), materializations=(), types=TYPES)
    mix = queries(rng)
    demo = [sql for _, sql in DEMO_QUERIES]

    def p50(sqls: list[str]) -> tuple[float, int]:
        times, rewritten = [], 0
        for sql in sqls:
            times += timings(lambda sql=sql: rewrite(sql, context, explain=False), 1, repeat)
            rewritten += rewrite(sql, context, explain=False).rewritten
        return statistics.median(times), rewritten

    mix_ms, mix_rewritten = p50(mix)
    demo_ms, demo_rewritten = p50(demo)
    return {
        "views": len(context.views),
        "mix_queries": len(mix),
        "mix_rewritten": mix_rewritten,
        "mix_p50_ms": mix_ms,
        "demo_queries": len(demo),
        "demo_rewritten": demo_rewritten,
        "demo_p50_ms": demo_ms,
    }


def render(queries: list[dict[str, Any]], views: dict[str, Any], cache: dict[str, int]) -> str:
    lines = [
        "FoodMart, end to end through Workspace.query (rewrite + freshness + run), ms",
        "(local: after its first run, the answer kept for the query text; new text: a numbering"
        " comment each run, so each run is parsed, rewritten, checked and run by the tile engine)",
        f"{'query':<20} {'base p50':>9} {'spark p50':>9} {'local p50':>9} {'local p99':>9} "
        f"{'new p50':>8} {'new p99':>8} {'rewrite':>8} {'base/new':>9} {'spark/new':>9}  "
        "engine  same",
    ]
    for q in queries:
        lines.append(
            f"{q['name']:<20} {q['base_p50_ms']:>9.1f} {q['spark_p50_ms']:>9.1f} "
            f"{q['local_p50_ms']:>9.2f} {q['local_p99_ms']:>9.2f} "
            f"{q['new_text_p50_ms']:>8.2f} {q['new_text_p99_ms']:>8.2f} "
            f"{q['rewrite_p50_ms']:>8.2f} "
            f"{q['base_p50_ms'] / q['new_text_p50_ms']:>8.1f}x "
            f"{q['spark_p50_ms'] / q['new_text_p50_ms']:>8.1f}x  {q['new_text_engine']:<6}  "
            f"{'yes' if q['same_result'] else 'NO'}"
        )
        if q["engine_reason"]:
            lines.append(f"  Spark answered: {q['engine_reason']}")
    worst = max(q["new_text_p50_ms"] for q in queries)  # the goal's path: run end to end
    lines += [
        f"tile cache: {cache['bytes'] / 1e6:.2f} MB (peak {cache['peak_bytes'] / 1e6:.2f} MB) of "
        f"{cache['budget_bytes'] / 1e6:.0f} MB; {cache['hits']} hits, {cache['misses']} misses",
        f"rewrite alone, {views['views']} views prepared once: p50 {views['mix_p50_ms']:.2f} ms "
        f"over bench/rewrite.py's {views['mix_queries']} queries ({views['mix_rewritten']} "
        f"rewritten), p50 {views['demo_p50_ms']:.2f} ms over the demo's "
        f"{views['demo_queries']} ({views['demo_rewritten']} rewritten)",
        f"goal tile engine p50 <= {LOCAL_GOAL_MS:g} ms: "
        f"{'met' if worst <= LOCAL_GOAL_MS else 'NOT met'} (worst query {worst:.2f} ms)",
        f"goal rewrite p50 <= {REWRITE_GOAL_MS:g} ms with 100 views: "
        f"{'met' if views['mix_p50_ms'] <= REWRITE_GOAL_MS else 'NOT met'} (the 50 queries), "
        f"{'met' if views['demo_p50_ms'] <= REWRITE_GOAL_MS else 'NOT met'} (the demo's)",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--warehouse", default="warehouse-bench", help="default ./warehouse-bench")
    p.add_argument("--runs", type=int, default=200, help="tile engine and rewrite runs")
    p.add_argument("--warm-up", type=int, default=3, help="unmeasured runs first")
    p.add_argument("--spark-runs", type=int, default=5, help="runs on Spark (median)")
    p.add_argument("--repeat", type=int, default=5, help="rewrites per query, 100 views")
    p.add_argument("--seed", type=int, default=7, help="bench/rewrite.py's views and queries")
    p.add_argument("--json", action="store_true", help="also print the JSON report last")
    args = p.parse_args(argv)
    views = rewrite_100_views(args.seed, args.repeat)  # before Spark: a quiet process
    ws = workspace(resolve_warehouse(args.warehouse))
    try:
        queries = [per_query(ws, name, sql, args) for name, sql in DEMO_QUERIES]
        c = ws.tile_engine.cache
        cache = {"bytes": c.bytes, "peak_bytes": c.peak_bytes, "budget_bytes": c.budget_bytes,
                 "hits": c.hits, "misses": c.misses}  # fmt: skip
    finally:
        ws.close()
    print(render(queries, views, cache))
    if args.json:
        print(json.dumps({"queries": queries, "rewrite_100_views": views, "tile_cache": cache}))
    ok = all(q["same_result"] and q["engine"] == "local" for q in queries)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
