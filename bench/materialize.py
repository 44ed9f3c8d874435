"""Benchmark building tiles: each from its smallest current finer tile (rollup) versus every
tile from the star, same tiles, same data, same run.

1. FoodMart: the planned tiles (HRU96, `--max-tiles`) of the documentation's lattice.
2. A synthetic star: a fact table of `--rows` rows (default 10 M) joined to date (2,557 days),
   product (20,000; 500 brands, 50 categories, 10 departments; brand -> category ->
   department) and store (200; 50 cities, 5 regions; city -> region) dimensions, with 8
   declared tiles of the kind HRU96 picks: the finest carries the columns its brand determines
   (no extra rows), so coarser tiles can roll up from it; (the_date, city) needs the star.

Both modes rebuild every tile (`full`), star-only first; the contents of each tile are checked
equal between the modes. Prints per-tile times and the ratio star-only / rollup.

    python bench/materialize.py [--rows N] [--max-tiles K] [--skip-foodmart]
                                [--skip-synthetic] [--warehouse DIR] [--keep]
"""

from __future__ import annotations

import sys
from pathlib import Path

# `python bench/x.py` makes bench/ sys.path[0], where bench/profile.py would shadow the stdlib
# `profile` that pyspark imports (through cProfile): put the repository root there instead.
if Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import argparse
import shutil
import tempfile
import textwrap
import time

from mvlattice.jobs.batch import BatchResult, run_batch
from mvlattice.jobs.context import JobContext
from mvlattice.jobs.planning import planned_tiles
from mvlattice.jobs.targets import declared_targets
from mvlattice.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
ROWS = 10_000_000

SYNTHETIC_MODEL = """
version: "1.0"
defaultSchema: synth
schemas:
  - name: synth
    type: delta
    location: {location}
    tables:
      - name: fact
        foreignKeys:
          - {{columns: [date_id], references: dates}}
          - {{columns: [product_id], references: product}}
          - {{columns: [store_id], references: store}}
      - {{name: dates, primaryKey: [date_id]}}
      - {{name: product, primaryKey: [product_id]}}
      - {{name: store, primaryKey: [store_id]}}
    lattices:
      - name: synth
        sql:
          - select 1 from synth.fact as f
          - join synth.dates as d using (date_id)
          - join synth.product as p using (product_id)
          - join synth.store as s using (store_id)
        algorithm: false
        defaultMeasures:
          - agg: count
          - {{agg: sum, args: quantity}}
          - {{agg: sum, args: revenue}}
          - {{agg: min, args: price}}
          - {{agg: max, args: price}}
        tiles:
          - dimensions: [the_year, the_month, brand, category, department, region]
          - dimensions: [the_year, the_month, category, region]
          - dimensions: [the_date, city]
          - dimensions: [the_year, brand]
          - dimensions: [the_year, the_month]
          - dimensions: [category, region]
          - dimensions: [department]
          - dimensions: []
"""


def session(warehouse: Path):  # a SparkSession
    from mvlattice.spark import build_session, spark_conf

    conf = spark_conf("local[2]", str(warehouse), ({"spark.sql.shuffle.partitions": "8"},))
    return build_session("local[2]", str(warehouse), conf, app_name="mvlattice-bench")


def fact_sql(first: int, count: int) -> str:
    """Fact rows `first` .. `first + count - 1`, deterministic from their id."""
    return f"""
        select id as sale_id,
               cast(pmod(xxhash64(id, 1), 2557) as int) as date_id,
               cast(pmod(xxhash64(id, 2), 20000) as int) as product_id,
               cast(pmod(xxhash64(id, 3), 200) as int) as store_id,
               cast(1 + pmod(xxhash64(id, 4), 9) as int) as quantity,
               cast(pmod(xxhash64(id, 5), 10000) / 100 as decimal(10, 2)) as price,
               cast(pmod(xxhash64(id, 6), 100000) / 10 as decimal(12, 2)) as revenue
        from range({first}, {first + count})"""


def synthetic_star(spark, base: Path, rows: int) -> Path:
    """Write the synthetic star's tables under `base` and its model; returns the model path."""
    tables = {
        "dates": "select cast(id as int) as date_id, date_add(date'2018-01-01', cast(id as int))"
        " as the_date, year(date_add(date'2018-01-01', cast(id as int))) as the_year,"
        " month(date_add(date'2018-01-01', cast(id as int))) as the_month from range(2557)",
        "product": "select cast(id as int) as product_id, concat('brand', id % 500) as brand,"
        " concat('cat', id % 50) as category, concat('dept', id % 10) as department"
        " from range(20000)",
        "store": "select cast(id as int) as store_id, concat('city', id % 50) as city,"
        " concat('region', id % 5) as region from range(200)",
        "fact": fact_sql(0, rows),
    }
    for name, sql in tables.items():
        spark.sql(sql).write.format("delta").mode("overwrite").save(str(base / name))
    model = base / "synth.yaml"
    model.write_text(textwrap.dedent(SYNTHETIC_MODEL).format(location=base), encoding="utf-8")
    return model


def checksums(spark, result: BatchResult) -> dict[str, tuple]:
    return {
        r.target: tuple(spark.sql(f"select count(*), sum(hash(*)) from {r.target}").first())
        for r in result.results
    }


def compare(spark, ctx: JobContext, targets, title: str, warmup: str) -> float:
    """Rebuild every target star-only, then with rollups; print both, return the ratio.
    `warmup` (a scan of the fact table) runs first so both modes read warm files."""
    spark.sql(warmup).collect()
    t0 = time.perf_counter()
    star = run_batch(ctx, targets, full=True, rollup=False)
    t1 = time.perf_counter()
    expected = checksums(spark, star)
    t2 = time.perf_counter()
    rolled = run_batch(ctx, targets, full=True, rollup=True)
    t3 = time.perf_counter()
    for batch in (star, rolled):
        if not batch.ok:
            raise SystemExit(f"build failed: {batch.failed[0].target}: {batch.failed[0].error}")
    if checksums(spark, rolled) != expected:
        raise SystemExit("rollup and star builds differ")
    print(f"\n{title}: {len(targets)} tiles (contents equal in both modes)")
    print(f"  {'tile':<72} {'star s':>8} {'rollup s':>9}  source")
    for a, b in zip(star.results, rolled.results, strict=True):
        src = "star" if b.built_from == "star" else b.built_from.split("__", 1)[-1]
        print(f"  {a.target:<72} {a.seconds:8.2f} {b.seconds:9.2f}  {src}")
    ratio = (t1 - t0) / (t3 - t2)
    print(f"  all tiles from the star: {t1 - t0:.1f} s; from the cheapest source: {t3 - t2:.1f} s")
    print(f"  RATIO star-only / rollup = {ratio:.2f}x")
    return ratio


def foodmart(spark, warehouse: Path, max_tiles: int) -> float:
    from mvlattice.datasets import foodmart as dataset

    dataset.load(spark, str(warehouse), progress=lambda _line: None)
    ws = Workspace(REPO / "models" / "foodmart.yaml", warehouse=str(warehouse))
    ctx = JobContext.open(ws.spark, ws.model, ws.warehouse, trigger="bench")
    targets = planned_tiles(ctx, ws.model.lattices[0], max_tiles=max_tiles)
    title = f"FoodMart planned tiles (max {max_tiles})"
    return compare(
        spark, ctx, targets, title, "select sum(unit_sales) from foodmart.sales_fact_1997"
    )


def synthetic(spark, warehouse: Path, rows: int) -> float:
    t0 = time.perf_counter()
    model = synthetic_star(spark, warehouse / "synth", rows)
    print(f"\nsynthetic star: {rows:,} fact rows written in {time.perf_counter() - t0:.1f} s")
    ws = Workspace(model, warehouse=str(warehouse))
    ctx = JobContext.open(ws.spark, ws.model, ws.warehouse, trigger="bench")
    targets = declared_targets(ws.model, ws.warehouse)
    title = f"synthetic star, {rows:,} rows"
    return compare(spark, ctx, targets, title, "select sum(quantity) from synth.fact")


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
