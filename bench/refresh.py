"""Benchmark refresh after changing 1 % of the fact rows: a refresh (incremental where the
cost choice takes it: the change aggregated once, each tile's delta rolled up from it; rollups
from a just-refreshed finer tile where that reads fewer rows) versus a full refresh of all
tiles, same data, same run.

The tiles are those of `bench/materialize.py` (FoodMart's planned tiles; the synthetic star's
8 tiles, `--rows` fact rows, default 10 M). Three changes: a 1 % append (FoodMart and the
synthetic star), and a 1 % delete + update through Delta's change data feed (the synthetic
star, its measures COUNT, SUM and AVG: what retractions maintain). After each change, every
tile is refreshed and timed; then every tile is rebuilt in full (the best full path: the
finest from the star, the others rolled up) and timed, and for appends also every tile from
the star. The contents after the refresh must equal the full rebuild's.

    python bench/refresh.py [--rows N] [--max-tiles K] [--skip-foodmart] [--skip-synthetic]
                            [--skip-feed] [--warehouse DIR] [--keep]
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


def compare(spark, ctx: JobContext, targets, change, title: str, star: bool = True) -> float:
    """Build, change 1 %, then time the refresh, full and (with `star`) star-only refreshes."""
    timed("materialize", lambda: run_batch(ctx, targets))
    what = change()
    incremental, t_inc = timed("incremental", lambda: run_batch(ctx, targets))
    paths = {r.path for r in incremental.results}
    if "incremental" not in paths:
        raise SystemExit(f"expected incremental refreshes, got {paths}")
    merged = checksums(spark, incremental)
    full, t_full = timed("full", lambda: run_batch(ctx, targets, full=True))
    if checksums(spark, full) != merged:
        raise SystemExit("incremental and full refreshes differ")
    stars = full.results
    t_star = None
    if star:
        from_star, t_star = timed("star", lambda: run_batch(ctx, targets, full=True, rollup=False))
        stars = from_star.results
    print(f"\n{title}: {len(targets)} tiles, {what} (contents equal)")
    print(f"  {'tile':<60} {'path':<11} {'est. incr':>10} {'est. full':>10} {'refr s':>7} "
          f"{'full s':>7} {'star s':>7}")  # fmt: skip
    for a, b, c in zip(incremental.results, full.results, stars, strict=True):
        e = a.estimate
        inc = f"{e.incremental_rows:,}" if e and e.incremental_rows is not None else ""
        fr = f"{e.full_rows:,}" if e and e.full_rows is not None else ""
        star_s = f"{c.seconds:7.2f}" if star else f"{'':>7}"
        print(f"  {a.target[-60:]:<60} {a.path:<11} {inc:>10} {fr:>10} {a.seconds:7.2f} "
              f"{b.seconds:7.2f} {star_s}")  # fmt: skip
    print(f"  refresh {t_inc:.1f} s; full (with rollups) {t_full:.1f} s" + (
        f"; full (all from the star) {t_star:.1f} s" if t_star is not None else ""))  # fmt: skip
    print(f"  RATIO full / refresh = {t_full / t_inc:.2f}x")
    if t_star is not None:
        print(f"  RATIO star-only full / refresh = {t_star / t_inc:.2f}x")
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
        return "868 rows appended"

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
        return f"{extra:,} rows appended"

    return compare(spark, ctx, targets, append, f"synthetic star, {rows:,} rows")


# SUM/COUNT/AVG: the measures retractions maintain (MIN/MAX tiles are rebuilt: `retraction`).
FEED_MEASURES = """          - agg: count
          - {agg: avg, args: quantity}
          - {agg: avg, args: revenue}
"""


def affected(frame) -> str:  # what DELETE/UPDATE return: num_affected_rows
    row = frame.first()
    return f"{row[0]:,}" if row is not None and isinstance(row[0], int) else "?"


def feed(spark, warehouse: Path, rows: int) -> float:
    """A 1 % delete + update of the synthetic star's fact table, read from its change feed."""
    base = warehouse / "synth"
    if not (base / "fact").exists():
        synthetic_star(spark, base, rows)
    fact = str(base / "fact")
    spark.sql(f"ALTER TABLE delta.`{fact}` SET TBLPROPERTIES (delta.enableChangeDataFeed = true)")
    text = (base / "synth.yaml").read_text(encoding="utf-8")
    head, rest = text.split("        defaultMeasures:\n", 1)
    tail = rest[rest.index("        tiles:") :]
    model = base / "synth_feed.yaml"
    model.write_text(head + "        defaultMeasures:\n" + FEED_MEASURES + tail, encoding="utf-8")
    ws = Workspace(model, warehouse=str(warehouse))
    ctx = JobContext.open(ws.spark, ws.model, ws.warehouse, trigger="bench")
    targets = declared_targets(ws.model, ws.warehouse)

    def change() -> str:  # 0.5 % deleted, 0.5 % updated (quantity, and a move to a product)
        deleted = spark.sql(f"DELETE FROM delta.`{fact}` WHERE pmod(sale_id, 200) = 0")
        updated = spark.sql(
            f"UPDATE delta.`{fact}` SET quantity = quantity + 1, "
            "product_id = pmod(product_id + 7, 20000) WHERE pmod(sale_id, 200) = 1"
        )
        return f"{affected(deleted)} rows deleted, {affected(updated)} updated"

    title = f"synthetic star, {rows:,} rows, change data feed (COUNT, SUM, AVG)"
    return compare(spark, ctx, targets, change, title, star=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=ROWS, help="synthetic fact rows")
    parser.add_argument("--max-tiles", type=int, default=8, help="FoodMart planned tiles")
    parser.add_argument("--skip-foodmart", action="store_true")
    parser.add_argument("--skip-synthetic", action="store_true")
    parser.add_argument("--skip-feed", action="store_true", help="no delete/update run")
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
        if not args.skip_feed:
            feed(spark, warehouse, args.rows)
    finally:
        spark.stop()
        if not args.keep and not args.warehouse:
            shutil.rmtree(warehouse, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
