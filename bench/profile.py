"""Benchmark the profiler: one sketch pass over all column sets of size ≤ 3 versus Calcite's way,
one exact count-distinct query per set; same data, same run. Also the estimator's error on 4-
and 5-column sets nobody counted.

Data: a synthetic star, fact `--rows` rows (default 10 M) joined to product (20,000 rows;
800 brands, 45 categories) and day (1,095 days; month, year) — 12 lattice columns, so
12 + 66 + 220 = 298 column sets of size ≤ 3. Skewed keys; promo_id is NULL on ~30 % of rows;
store_id follows the customer 90 % of the time (a near-FD); promotions run by month; the
quantity depends on the category.

1. Profiler: `SketchCounter.count(all 298 sets)` — one Spark job, one scan of the star: each
   column hashed once, every set's HyperLogLog built from those hashes in numpy (statistics.hll).
2. Exact, Calcite's way: `SELECT count(*) FROM (SELECT cols FROM star GROUP BY cols)` per set
   (NULL-correct; Calcite's `count(DISTINCT a, b)` would also drop NULL rows). This machine is
   small and shared, so only `--sample-sets` sets (default 20, seeded) are timed and the mean
   is EXTRAPOLATED to all 298; the report says so. The profiler's error is measured on them.
3. Estimator: `--estimate-sets` random 4-column and as many 5-column sets (seeded; among sets
   whose independence estimate is under half the rows — the others are ~all rows), counted
   exactly (one batched `ExactCounter` job), against the estimate from the ≤3-column profile
   (ours: keys, FDs, counted subsets, Cardenas) and Calcite's plain independence.

    python bench/profile.py [--rows N] [--sample-sets N] [--estimate-sets N] [--seed N]
                            [--lg-config-k K] [--warehouse DIR] [--keep]
"""

from __future__ import annotations

import sys
from pathlib import Path

# This file is named profile.py, like the standard library's `profile` (which pyspark imports
# through cProfile); running it puts bench/ first on sys.path, so take bench/ off before any
# import can find this file under that name.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse
import itertools
import random
import shutil
import statistics
import tempfile
import textwrap
import time

from mvlattice.statistics.estimate import independence, relative_error
from mvlattice.statistics.exact import ExactCounter
from mvlattice.statistics.profile import build_profile
from mvlattice.statistics.sketch import TOLERANCE, SketchCounter
from mvlattice.workspace import Workspace

ROWS = 10_000_000

MODEL = """
version: "1.0"
schemas:
  - name: bprof
    type: delta
    location: {location}
    tables:
      - name: sales
      - name: product
        primaryKey: [product_id]
      - name: day
        primaryKey: [day_id]
    lattices:
      - name: sales
        sql:
          - select 1 from bprof.sales as s
          - join bprof.product as p using (product_id)
          - join bprof.day as d using (day_id)
"""

TABLES = {
    "product": "select cast(id + 1 as int) as product_id, concat('brand', id % 800) as brand,"
    " concat('cat', id % 800 % 45) as category from range(20000)",
    "day": "select cast(id + 1 as int) as day_id, cast(id div 30 % 12 + 1 as int) as month,"
    " cast(2020 + id div 365 as int) as year from range(1095)",
    "sales": """
        select cast(1 + floor(pow(rand(1), 2) * 20000) as int) as product_id,
               cast(1 + floor(rand(2) * 1095) as int) as day_id,
               cast(1 + floor(pow(rand(3), 1.5) * 500000) as int) as customer_id,
               cast(case when rand(4) < 0.9 then 0 else 1 end as int) as _wander,
               rand(5) as _p,
               rand(6) as _q
        from range({rows})""",
}


def session(warehouse: Path):  # a SparkSession
    from mvlattice.spark import build_session, spark_conf

    conf = spark_conf("local[2]", str(warehouse), ({"spark.sql.shuffle.partitions": "8"},))
    return build_session("local[2]", str(warehouse), conf, app_name="mvlattice-bench-profile")


def make_star(spark, base: Path, rows: int) -> Path:
    for name, sql in TABLES.items():
        frame = spark.sql(sql.format(rows=rows))
        if name == "sales":  # store_id follows the customer, except when the customer wanders
            frame = frame.selectExpr(
                "product_id", "day_id", "customer_id",
                "cast(case when _wander = 0 then customer_id % 100 + 1"
                " else 1 + floor(rand(8) * 100) end as int) as store_id",
                # promotions run by month (~5 a month), none on 30 % of sales
                "cast(case when _p < 0.3 then null"
                " else 1 + ((day_id - 1) div 30 * 5 + floor(_p * 5)) % 300 end as int)"
                " as promo_id",
                # the quantity depends on the category (3 likely values each)
                "cast(1 + ((product_id - 1) % 800 % 45 + floor(_q * 3)) % 10 as int) as qty",
            )  # fmt: skip
        frame.write.format("delta").mode("overwrite").save(str(base / name))
    model = base / "bprof.yaml"
    model.write_text(textwrap.dedent(MODEL).format(location=base), encoding="utf-8")
    return model


def exact_one(spark, lattice, columns: tuple[str, ...]) -> float:
    cols = ", ".join(f"`{c}`" for c in columns)
    star = lattice.star_sql(columns)
    text = f"SELECT count(*) AS n FROM (SELECT {cols} FROM ({star}) AS star GROUP BY {cols}) g"
    return float(spark.sql(text).first()["n"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=ROWS)
    parser.add_argument("--sample-sets", type=int, default=20)
    parser.add_argument("--estimate-sets", type=int, default=8)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--lg-config-k", type=int, default=16, help="HLL sketch size")
    parser.add_argument("--warehouse", help="default: a temporary directory")
    parser.add_argument("--keep", action="store_true", help="keep the generated data")
    args = parser.parse_args(argv)
    warehouse = Path(args.warehouse or tempfile.mkdtemp(prefix="mvlattice-bench-profile-"))
    try:
        run(args, warehouse)
    finally:
        if not args.keep and not args.warehouse:
            shutil.rmtree(warehouse, ignore_errors=True)
    return 0


def run(args: argparse.Namespace, warehouse: Path) -> None:
    spark = session(warehouse)
    t0 = time.perf_counter()
    model = make_star(spark, warehouse / "bprof", args.rows)
    print(f"data: {args.rows:,} fact rows written in {time.perf_counter() - t0:.1f}s")
    ws = Workspace(model, warehouse=str(warehouse))
    lattice = ws.model.lattice("sales")
    labels = lattice.labels
    sets = [frozenset(c) for k in (1, 2, 3) for c in itertools.combinations(labels, k)]
    print(f"lattice: {len(labels)} columns {labels}; {len(sets)} column sets of size <= 3")
    ws.spark.sql(f"SELECT count(*) FROM ({lattice.star_sql()}) AS s").first()  # warm-up

    sketch = SketchCounter(ws.spark, lattice, lg_config_k=args.lg_config_k)
    t = time.perf_counter()
    approx = sketch.count(sets)
    profiler_s = time.perf_counter() - t
    print(f"\n1. profiler ({sketch.description}): {len(sets)} sets in ONE pass "
          f"({sketch.jobs} Spark job; {sketch.sketched} sketched, the others fixed by the "
          f"joins' keys): {profiler_s:.1f}s")  # fmt: skip

    rng = random.Random(args.seed)
    sample = rng.sample(sets, min(args.sample_sets, len(sets)))
    times, errors = [], []
    for columns in sample:
        ordered = tuple(c for c in labels if c in columns)
        t = time.perf_counter()
        exact = exact_one(ws.spark, lattice, ordered)
        times.append(time.perf_counter() - t)
        errors.append(relative_error(approx.distinct[columns], exact))
        print(f"   exact {', '.join(ordered):44s} {exact:>12,.0f}  {times[-1]:6.1f}s  "
              f"sketch {approx.distinct[columns]:>12,.0f}  err {errors[-1]:.3%}")  # fmt: skip
    mean = statistics.fmean(times)
    print(f"\n2. exact, one query per set (Calcite's way): timed {len(sample)} of {len(sets)} "
          f"sets (seed {args.seed}); measured mean {mean:.2f}s per query")  # fmt: skip
    print(f"   EXTRAPOLATED to all {len(sets)} sets: {mean * len(sets):.0f}s")
    print(f"   ratio exact (extrapolated) / profiler: {mean * len(sets) / profiler_s:.1f}x "
          f"(goal >= 10x)")  # fmt: skip
    print(f"   profiler worst relative error on the {len(sample)} exact sets: {max(errors):.3%} "
          f"(mean {statistics.fmean(errors):.3%}; goal <= 2%)")  # fmt: skip
    if args.estimate_sets:
        estimator_errors(ws.spark, lattice, approx, sets, rng, args.estimate_sets)


def estimator_errors(spark, lattice, approx, sets, rng, n: int) -> None:
    labels = lattice.labels
    profile = build_profile(lattice.name, labels, approx, "sketch", tolerance=TOLERANCE)
    fds = [str(f) for f in profile.dependencies]
    print(f"\n3. estimator: profile of {len(sets)} sketched sets; "
          f"{len(profile.unique_keys)} (near-)key(s), {len(fds)} FD(s): "
          + "; ".join(fds[:12]) + ("; …" if len(fds) > 12 else ""))  # fmt: skip
    targets = []
    for k in (4, 5):
        # Sets whose columns could make nearly every row unique are trivially ~rows; sample
        # among the others, where an estimator can be wrong.
        open_sets = [
            frozenset(c)
            for c in itertools.combinations(labels, k)
            if independence(approx.rows, (approx.distinct[frozenset({x})] for x in c))
            < approx.rows / 2
        ]
        targets += rng.sample(open_sets, min(n, len(open_sets)))
    print(f"   {len(targets)} random 4- and 5-column sets among those whose independence "
          "estimate is under half the rows (the rest are ~all rows, trivially)")  # fmt: skip
    t = time.perf_counter()
    exact = ExactCounter(spark, lattice, batch_size=len(targets)).count(targets)
    print(f"   exact counts of {len(targets)} sets (one batched job): "
          f"{time.perf_counter() - t:.1f}s")  # fmt: skip
    for k in (4, 5):
        ours, calcite = [], []
        for columns in (s for s in targets if len(s) == k):
            actual = exact.distinct[columns]
            est = profile.estimator.estimate(columns)
            indep = independence(approx.rows, (approx.distinct[frozenset({c})] for c in columns))
            ours.append(relative_error(est, actual))
            calcite.append(relative_error(indep, actual))
            names = ", ".join(c for c in labels if c in columns)
            print(f"   {names:52s} exact {actual:>12,.0f}  ours {est:>12,.0f}  "
                  f"independence {indep:>12,.0f}")  # fmt: skip
        if not ours:
            print(f"   {k}-column sets: none under half the rows at this size")
            continue
        print(f"   {k}-column sets: ours mean error {statistics.fmean(ours):.1%}, "
              f"worst {max(ours):.1%}; Calcite's independence mean "
              f"{statistics.fmean(calcite):.1%}, worst {max(calcite):.1%}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
