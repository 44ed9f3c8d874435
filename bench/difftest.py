"""Differential test of the rewriter: random queries over FoodMart, SSB (SF 0.001) and a
synthetic star with NULLs and duplicates, each run as written and as rewritten onto random
tiles and materializations; results must be equal as multisets. Every rewritten query the tile
engine answers in the driver must give Spark's answer exactly, Python types included: Spark's
on the base tables and Spark's on the same rewritten SQL.

    python bench/difftest.py [--queries N] [--seed S] [--star foodmart|ssb|synthetic|all]
                             [--corpus random|rejected] [--driver-memory 4g] [--json]

--queries is per star. Each star's line is followed by a table per construct the generator
tags (querygen.constructs: or, in, time_grain, outer_join, grouping_sets, approx_distinct,
unnamed_outputs, nested_mv, ...; a query has one or more): queries, rewritten and share,
answered by the tile engine, mismatches, local mismatches, errors, and the reason codes of
the closest miss of those not rewritten. With --json the last line is
{"queries": N, "rewritten": N, "mismatches": N, "errors": N, "local": N,
"local_vs_base_mismatches": N, "local_vs_tiles_mismatches": N, "refusals": {reason: N},
"constructs": {construct: {"queries", "rewritten", "share", "local", "mismatches",
"local_mismatches", "errors", "not_rewritten": {reason: N}}}, "stars": {star: the same}}:
`local` counts the rewritten queries the tile engine answered, `refusals` why it did not answer
the others. Every mismatch and error is printed with its star, query seed and constructs.
SIGUSR1 ends the current star early (its report covers the queries checked so far, and says
so); the next star runs as asked.

--corpus rejected checks near misses instead (`proof.rejected`): each generated query the tiles
answer, changed by one quirk of another dialect or one mistake (double-quoted names, LIMIT 0, 5,
CAST AS TEXT, functions Spark lacks, a column left out of the GROUP BY, ...) into a query Spark
rejects. None may be answered: each must fail in the workspace (query and rewrite) with Spark's
own error. The tables are per quirk; "rewritten" counts near misses answered (0 expected), and
"not rewritten" shows how many near misses Spark accepted (not checked).
"""

# bench/ holds profile.py, which would shadow the standard library's `profile` (pyspark
# imports cProfile, which imports it) if this script's folder stayed first on sys.path.
import sys
from pathlib import Path

if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path.pop(0)
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse
import json
import signal
import tempfile
import time

from mvlattice.proof import difftest
from mvlattice.proof.stars import STARS
from mvlattice.spark import build_session, spark_conf

DEFAULT_WAREHOUSE = Path(tempfile.gettempdir()) / "mvlattice-difftest"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=200, help="queries per star")
    parser.add_argument("--seed", type=int, default=0, help="seeds the views and the queries")
    parser.add_argument("--star", choices=[*STARS, "all"], default="all")
    parser.add_argument("--corpus", choices=["random", "rejected"], default="random",
                        help="random queries compared, or near misses Spark rejects")  # fmt: skip
    parser.add_argument("--tiles", type=int, default=8)
    parser.add_argument("--mvs", type=int, default=8)
    parser.add_argument("--batch", type=int, default=40, help="query pairs per Spark job")
    parser.add_argument("--warehouse", default=str(DEFAULT_WAREHOUSE),
                        help="kept between runs: data is loaded once")  # fmt: skip
    parser.add_argument("--driver-memory", default="4g", help="the local Spark JVM's heap")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    warehouse = Path(args.warehouse).resolve()
    warehouse.mkdir(parents=True, exist_ok=True)
    settings = {
        "spark.sql.shuffle.partitions": "2",
        "spark.driver.memory": args.driver_memory,
        # Keep Spark's status store small: every comparison is one job over a UNION of ~120
        # queries. The 5000-query runs ran with these and --driver-memory 8g; at 4g without
        # them the JVM ran out of heap (its owner not found: see the closing note of stop 27).
        "spark.sql.ui.retainedExecutions": "20",
        "spark.ui.retainedJobs": "50",
        "spark.ui.retainedStages": "50",
    }
    conf = spark_conf("local[2]", str(warehouse), (settings,))
    spark = build_session("local[2]", str(warehouse), conf, app_name="mvlattice-difftest")
    names = list(STARS) if args.star == "all" else [args.star]
    stopping = [False]
    signal.signal(signal.SIGUSR1, lambda *_: stopping.__setitem__(0, True))
    total = difftest.Report()
    stars: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="difftest-models-") as folder:
        for name in names:
            start = time.perf_counter()
            prepared = difftest.prepare(spark, STARS[name], str(warehouse), Path(folder),
                                        args.seed, args.tiles, args.mvs, say=print)  # fmt: skip
            for problem in prepared.problems:
                print(f"  view not built: {problem}")
            setup = time.perf_counter() - start
            seeds = range(args.seed * 1_000_000, args.seed * 1_000_000 + args.queries)
            stopping[0] = False
            if args.corpus == "rejected":
                report = difftest.run_rejected(prepared, seeds, on_finding=print,
                                               stop=lambda: stopping[0])  # fmt: skip
            else:
                report = difftest.run(prepared, seeds, batch=args.batch, on_finding=print,
                                      stop=lambda: stopping[0])  # fmt: skip
            if stopping[0]:
                print(
                    f"{name}: stopped by SIGUSR1 after {report.queries} of {args.queries} queries"
                )
            total += report
            stars[name] = report.summary()
            _line(name, report, setup)
            _constructs(report)
    if len(names) > 1:
        _line("all", total, None)
        _constructs(total)
    for reason, count in total.refusal_histogram().items():
        print(f"  {count:>6}  not answered locally: {reason}")
    if args.json:
        print(json.dumps({**total.summary(), "stars": stars}))
    failed = total.mismatches or total.errors or any(total.local_mismatches.values())
    return 1 if failed else 0


def _line(name: str, report: difftest.Report, setup: float | None) -> None:
    share = report.rewritten / report.queries if report.queries else 0.0
    per = report.seconds / report.queries * 1000 if report.queries else 0.0
    setup_text = f", setup {setup:.0f}s" if setup is not None else ""
    local = report.local_mismatches
    print(f"{name:<10} queries {report.queries}  rewritten {report.rewritten} ({share:.0%})  "
          f"mismatches {report.mismatches}  errors {report.errors}  "
          f"{report.seconds:.1f}s ({per:.0f} ms/query){setup_text}\n"
          f"{'':<10} answered locally {report.local}  local mismatches: "
          f"vs base {local[difftest.LOCAL_VS_BASE]}, "
          f"vs tiles {local[difftest.LOCAL_VS_TILES]}")  # fmt: skip


def _constructs(report: difftest.Report) -> None:
    print(
        f"{'':<10} {'construct':<16} {'queries':>7} {'rewritten':>9} {'share':>6} "
        f"{'local':>6} {'mismatch':>8} {'local-mm':>8} {'errors':>6}  not rewritten (closest)"
    )
    for tag, row in report.by_construct().items():
        reasons = ", ".join(f"{r} {n}" for r, n in list(row["not_rewritten"].items())[:3])
        print(f"{'':<10} {tag:<16} {row['queries']:>7} {row['rewritten']:>9} "
              f"{row['share']:>6.0%} {row['local']:>6} {row['mismatches']:>8} "
              f"{row['local_mismatches']:>8} {row['errors']:>6}  {reasons}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
