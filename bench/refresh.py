"""Benchmark refresh after appending 1 % new fact rows: incremental (aggregate only the
appended rows, merge them in) versus a full refresh of all tiles, same data, same run.

The tiles are those of `bench/materialize.py` (FoodMart's planned tiles; the synthetic star's
8 tiles, `--rows` fact rows, default 10 M). After the append, every tile is refreshed
incrementally and timed; then every tile is rebuilt in full (the best full path: the finest
from the star, the others rolled up) and timed, and also every tile from the star. The
contents after the incremental refresh must equal the full rebuild's.

    python bench/refresh.py [--rows N] [--max-tiles K] [--skip-foodmart] [--skip-synthetic]
                            [--warehouse DIR] [--keep]
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# `python bench/x.py` makes bench/ sys.path[0], where bench/profile.py would shadow the stdlib
# `profile` that pyspark imports (through cProfile): put the repository root there instead.
if Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import argparse
import shutil
import tempfile
import time

from mvlattice.jobs.batch import BatchResult, run_batch
from mvlattice.jobs.context import JobContext
from mvlattice.jobs.planning import planned_tiles
from mvlattice.jobs.targets import declared_targets
from mvlattice.workspace import Workspace

_spec = importlib.util.spec_from_file_location("bench_materialize", HERE / "materialize.py")
assert _spec is not None and _spec.loader is not None
bench_materialize = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_materialize)
REPO, ROWS, checksums = bench_materialize.REPO, bench_materialize.ROWS, bench_materialize.checksums
fact_sql, session = bench_materialize.fact_sql, bench_materialize.session
synthetic_star = bench_materialize.synthetic_star


def timed(label: str, run) -> tuple[BatchResult, float]:
    t0 = time.perf_counter()
    result = run()
    seconds = time.perf_counter() - t0
    if not result.ok:
        raise SystemExit(f"{label} failed: {result.failed[0].target}: {result.failed[0].error}")
    return result, seconds


def compare(spark, ctx: JobContext, targets, append, title: str) -> float:
    """Build, append 1 %, then time incremental, full and star-only refreshes."""
    timed("materialize", lambda: run_batch(ctx, targets))
    appended = append()
    incremental, t_inc = timed("incremental", lambda: run_batch(ctx, targets))
    paths = {r.path for r in incremental.results}
    if paths != {"incremental"}:
        raise SystemExit(f"expected only incremental refreshes, got {paths}")
    merged = checksums(spark, incremental)
    full, t_full = timed("full", lambda: run_batch(ctx, targets, full=True))
    if checksums(spark, full) != merged:
        raise SystemExit("incremental and full refreshes differ")
    star, t_star = timed("star", lambda: run_batch(ctx, targets, full=True, rollup=False))
    print(f"\n{title}: {len(targets)} tiles, {appended:,} rows appended (contents equal)")
    print(f"  {'tile':<72} {'incr s':>7} {'full s':>7} {'star s':>7}")
    for a, b, c in zip(incremental.results, full.results, star.results, strict=True):
        print(f"  {a.target:<72} {a.seconds:7.2f} {b.seconds:7.2f} {c.seconds:7.2f}")
    print(
        f"  incremental {t_inc:.1f} s; full (with rollups) {t_full:.1f} s; "
        f"full (all from the star) {t_star:.1f} s"
    )
    print(f"  RATIO full / incremental = {t_full / t_inc:.2f}x")
    print(f"  RATIO star-only full / incremental = {t_star / t_inc:.2f}x")
    return t_full / t_inc


def foodmart(spark, warehouse: Path, max_tiles: int) -> float:
    from mvlattice.datasets import foodmart as dataset

    dataset.load(spark, str(warehouse), progress=lambda _line: None)
    ws = Workspace(REPO / "models" / "foodmart.yaml", warehouse=str(warehouse))
    ctx = JobContext.open(ws.spark, ws.model, ws.warehouse, trigger="bench")
    targets = planned_tiles(ctx, ws.model.lattices[0], max_tiles=max_tiles)
    fact = str(warehouse / "foodmart" / "sales_fact_1997")

    def append() -> int:  # 1 %: copies of existing rows
        spark.read.format("delta").load(fact).limit(868).write.format("delta").mode("append").save(
            fact
        )
        return 868

    return compare(spark, ctx, targets, append, f"FoodMart planned tiles (max {max_tiles})")


def synthetic(spark, warehouse: Path, rows: int) -> float:
    model = synthetic_star(spark, warehouse / "synth", rows)
    ws = Workspace(model, warehouse=str(warehouse))
    ctx = JobContext.open(ws.spark, ws.model, ws.warehouse, trigger="bench")
    targets = declared_targets(ws.model, ws.warehouse)
    extra = max(1, rows // 100)

    def append() -> int:
        fact = str(warehouse / "synth" / "fact")
        spark.sql(fact_sql(rows, extra)).write.format("delta").mode("append").save(fact)
        return extra

    return compare(spark, ctx, targets, append, f"synthetic star, {rows:,} rows")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=ROWS, help="synthetic fact rows")
    parser.add_argument("--max-tiles", type=int, default=8, help="FoodMart planned tiles")
    parser.add_argument("--skip-foodmart", action="store_true")
    parser.add_argument("--skip-synthetic", action="store_true")
    parser.add_argument("--warehouse", help="where to write (default: a temporary directory)")
    parser.add_argument("--keep", action="store_true", help="keep the warehouse afterwards")
    args = parser.parse_args(argv)
    warehouse = Path(args.warehouse or tempfile.mkdtemp(prefix="mvlattice-bench-"))
    spark = session(warehouse)
    try:
        if not args.skip_foodmart:
            foodmart(spark, warehouse, args.max_tiles)
        if not args.skip_synthetic:
            synthetic(spark, warehouse, args.rows)
    finally:
        spark.stop()
        if not args.keep and not args.warehouse:
            shutil.rmtree(warehouse, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
