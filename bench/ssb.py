"""The Star Schema Benchmark: its 13 queries on the base tables versus rewritten onto tiles.

Generates SSB at scale factor `--sf` into the warehouse (or reuses it), profiles the lineorder
lattice, plans tiles (HRU96) with the 13 queries as the workload, materializes them, then runs
every query on the base tables, rewritten and run on Spark, and rewritten by default (the tile
engine in the driver when the tiles it reads are small and fresh, else Spark), each end to end
through `Workspace.query` (rewrite, freshness, execution), a first (cold) run then the median of
`--runs` runs, one SparkSession, and checks all give the same rows (multisets, floats to a
relative tolerance). Prints a table (query, base s, rewritten on Spark s, rewritten s, speedups,
engine, first runs, tile used), why Spark answered where it did, the profile/plan/materialize
times, tile storage versus lineorder's (bytes of the Delta tables) and the geometric-mean
speedups. Goals at SF 1: all 13 rewritten, same results, geomean speedup (tile engine over base
Spark) >= 50x, tiles <= 5 % of lineorder.

    python bench/ssb.py --sf 1 [--json] [--warehouse DIR] [--master URL] [--conf k=v]...
                        [--runs 3] [--max-tiles K] [--profile-size 1]
                        [--cluster WORKERS] [--generate-only] [--reuse-statistics]

`--cluster 2` starts a standalone master and two one-core workers on loopback (the test
suite's `tests/integration/standalone.py`) and runs everything there. With `--json` the last
line is `{"sf", "queries": [{"name", "base_s", "rewritten_s", "rewritten", "same_result",
"rewritten_spark_s", "engine", "engine_reason", "base_cold_s", "rewritten_cold_s",
"rewritten_spark_cold_s", "tiles", "rows"}], "geomean_speedup", "geomean_speedup_spark",
"tile_bytes", "fact_bytes", "tile_cache": {"bytes", "peak_bytes", "budget_bytes", "hits",
"misses"}}`: `rewritten_s` and `geomean_speedup` are the default path's (engine "auto").
"""

from __future__ import annotations

import sys
from pathlib import Path

# `python bench/x.py` makes bench/ sys.path[0], where bench/profile.py would shadow the stdlib
# `profile` that pyspark imports (through cProfile): put the repository root there instead.
if Path(sys.path[0] or ".").resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parents[1])

import argparse
import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

from mvlattice.datasets import ssb
from mvlattice.datasets.ssb_queries import QUERIES, workload
from mvlattice.proof.comparison import Comparison, compare, geomean
from mvlattice.settings import join_location, resolve_warehouse
from mvlattice.spark import build_session, resolve_master, spark_conf
from mvlattice.workspace import Workspace

LATTICE = "lineorder"


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    warehouse = resolve_warehouse(args.warehouse)
    conf = dict(args.conf)
    with _master(args, conf) as master:
        report = run(args.sf, warehouse, master, conf, args.runs, args.max_tiles,
                     args.profile_size, args.generate_only, args.reuse_statistics)  # fmt: skip
    if report is None:
        return 0
    print(render(report))
    if args.json:
        print(json.dumps(_json(report)))
    ok = all(q.rewritten and q.same_result for q in report["queries"])
    return 0 if ok else 1


def run(
    sf: float,
    warehouse: str,
    master: str,
    conf: dict[str, str],
    runs: int,
    max_tiles: int | None,
    profile_size: int = 1,
    generate_only: bool = False,
    reuse_statistics: bool = False,
) -> dict[str, Any] | None:
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731 - stdout is the report
    say(f"SSB SF {sf:g} in {warehouse} on {master}")
    # Generate with a plain session first: the model's columns come from the tables' Delta logs.
    spark = build_session(master, warehouse, spark_conf(master, warehouse, (conf,)))
    generate_s = _timed(lambda: ssb.generate(spark, warehouse, sf, progress=say))
    if generate_only:
        return None
    model = ssb.model_file(sf, join_location(warehouse, "_bench"))
    ws = Workspace(model, warehouse=warehouse, master=master, conf=conf)
    lattice = ws.model.lattice(LATTICE)
    times = {"generate": generate_s}
    if not reuse_statistics:
        _forget_statistics(warehouse)
    # Singles only, up front: on SSB's 60 columns the pairs alone are 1,830 sketches per row.
    # The planner then counts what the workload asks and what it chooses.
    times["profile"] = _timed(lambda: ws.profile(LATTICE, max_size=profile_size, progress=say))
    work = workload(lattice)
    plans: list[Any] = []
    times["plan"] = _timed(
        lambda: plans.append(
            ws.plan(LATTICE, max_tiles, workload=work, max_size=profile_size, progress=say)
        )
    )
    for tile in plans[0].tiles:
        say(f"  tile {', '.join(tile.dimensions)}: ~{tile.rows:,.0f} rows")
    built: list[Any] = []
    # full: rebuilt even when fresh from an earlier run, so the time is a build's.
    times["materialize"] = _timed(lambda: built.append(ws.materialize_plan(plans[0], full=True)))
    for result in built[0].results:
        say(f"  {result.status:<9} {result.target} {result.reason} {result.error or ''}")
    queries = []
    for name, sql in QUERIES:
        queries.append(compare(ws, name, sql, runs))
        q = queries[-1]
        say(f"  {name}: {q.base_s:.3f}s -> {q.rewritten_spark_s:.3f}s on Spark, "
            f"{q.rewritten_s:.3f}s {q.engine}")  # fmt: skip
    cache = ws.tile_engine.cache
    tiles = {r.target: _bytes(ws, _tile_location(warehouse, r.target)) for r in built[0].results}
    fact = join_location(ssb.location(warehouse, sf), "lineorder")
    report = {
        "sf": sf,
        "master": master,
        "queries": queries,
        "times": times,
        "tiles": sorted(tiles.items(), key=lambda item: -item[1]),
        "tile_bytes": sum(tiles.values()),
        "fact_bytes": _bytes(ws, fact),
        "geomean_speedup": geomean(q.speedup for q in queries),
        "geomean_speedup_spark": geomean(q.speedup_spark for q in queries),
        "geomean_speedup_new_text": geomean(q.speedup_new_text for q in queries),
        "tile_cache": {
            "bytes": cache.bytes,
            "peak_bytes": cache.peak_bytes,
            "budget_bytes": cache.budget_bytes,
            "hits": cache.hits,
            "misses": cache.misses,
        },
    }
    ws.close()
    return report


def render(report: dict[str, Any]) -> str:
    queries: list[Comparison] = report["queries"]
    lines = [
        f"SSB SF {report['sf']:g} on {report['master']}; median of runs after a first (cold) one;"
        " each end to end (rewrite, freshness, run); 'spark': rewritten, run on Spark; 'auto':"
        " rewritten, the default engine (a kept answer after the first run); 'new': the default"
        " engine with a new query text each run (rewritten and run each time)",
        f"{'query':<6} {'base s':>8} {'spark s':>8} {'auto s':>8} {'x spark':>8} {'x auto':>8}"
        f" {'new s':>8} {'x new':>8}"
        f"  {'engine':<6}  {'first runs s (base/spark/auto)':<31}  same  tile used",
    ]
    for q in queries:
        tile = ", ".join(t.split("__", 1)[-1] for t in q.tiles) if q.rewritten else "NOT REWRITTEN"
        cold = f"{q.base_cold_s:.3f}/{q.rewritten_spark_cold_s:.3f}/{q.rewritten_cold_s:.3f}"
        lines.append(
            f"{q.name:<6} {q.base_s:>8.3f} {q.rewritten_spark_s:>8.3f} {q.rewritten_s:>8.4f} "
            f"{q.speedup_spark:>7.1f}x {q.speedup:>7.1f}x {q.rewritten_new_text_s:>8.4f} "
            f"{q.speedup_new_text:>7.1f}x  {q.engine:<6}  {cold:<31}  "
            f"{'yes ' if q.same_result else 'NO  '}  {tile}"
        )
    lines += [f"  {q.name}: Spark answered: {q.engine_reason}" for q in queries if q.engine_reason]
    times = report["times"]
    fact, tiles = report["fact_bytes"], report["tile_bytes"]
    lines += [
        "",
        "times: " + ", ".join(f"{k} {v:.1f}s" for k, v in times.items()),
        f"tiles: {len(report['tiles'])}, {tiles / 1e6:.2f} MB = {100 * tiles / fact:.2f} % of "
        f"lineorder ({fact / 1e6:.1f} MB)",
    ]
    for name, size in report["tiles"]:
        lines.append(f"  {size / 1e6:8.2f} MB  {name}")
    rewritten = sum(q.rewritten for q in queries)
    same = sum(q.same_result for q in queries)
    local = sum(q.engine == "local" for q in queries)
    cache = report["tile_cache"]
    lines += [
        f"tile cache: {cache['bytes'] / 1e6:.2f} MB held (peak {cache['peak_bytes'] / 1e6:.2f} "
        f"MB) of a {cache['budget_bytes'] / 1e6:.0f} MB budget; {cache['hits']} hits, "
        f"{cache['misses']} misses",
        f"rewritten {rewritten}/{len(queries)}, same result {same}/{len(queries)}, answered by "
        f"the tile engine {local}/{len(queries)}; geomean speedup {report['geomean_speedup']:.1f}x"
        f" (auto), {report['geomean_speedup_new_text']:.1f}x (auto, a new text each run: no"
        f" kept answer), {report['geomean_speedup_spark']:.1f}x (rewritten on Spark)",
    ]
    return "\n".join(lines)


def _json(report: dict[str, Any]) -> dict[str, Any]:
    return {
        "sf": report["sf"],
        "queries": [q.to_json() for q in report["queries"]],
        "geomean_speedup": round(report["geomean_speedup"], 2),
        "geomean_speedup_spark": round(report["geomean_speedup_spark"], 2),
        "geomean_speedup_new_text": round(report["geomean_speedup_new_text"], 2),
        "tile_bytes": report["tile_bytes"],
        "fact_bytes": report["fact_bytes"],
        "tile_cache": report["tile_cache"],
    }


def _tile_location(warehouse: str, name: str) -> str:
    from mvlattice.jobs.targets import tile_location_of

    return tile_location_of(warehouse, name.split(".", 1)[-1])


def _bytes(ws: Workspace, location: str) -> int:
    """The bytes of a Delta table's current files (DESCRIBE DETAIL's sizeInBytes)."""
    row = ws.spark.sql(f"DESCRIBE DETAIL delta.`{location}`").first()
    return int(row["sizeInBytes"])


def _forget_statistics(warehouse: str) -> None:
    """Drop the lattice's cached counts, so profile and plan times are those of a first run."""
    import shutil

    from mvlattice.delta.storage import local_path

    path = local_path(join_location(warehouse, "_mvlattice", "statistics", LATTICE))
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)


def _timed(step: Any) -> float:
    start = time.perf_counter()
    step()
    return time.perf_counter() - start


@contextlib.contextmanager
def _master(args: argparse.Namespace, conf: dict[str, str]) -> Iterator[str]:
    """The master URL: a standalone cluster started here (`--cluster N`), stopped on the way
    out whatever happens, or --master / the usual defaults."""
    if not args.cluster:
        yield resolve_master(args.master)
        return
    import tempfile

    from tests.integration.standalone import StandaloneCluster

    # As local mode's defaults: few shuffle partitions for small tiles; the executors' memory
    # must fit the workers'.
    conf.setdefault("spark.sql.shuffle.partitions", "8")
    conf.setdefault("spark.executor.memory", "3g")
    workdir = Path(tempfile.mkdtemp(prefix="mvlattice-ssb-cluster-"))
    with StandaloneCluster(workdir, workers=args.cluster, cores=1, memory="4g") as cluster:
        yield cluster.master_url


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sf", type=float, default=1.0, help="scale factor (default 1)")
    p.add_argument("--json", action="store_true", help="also print the JSON report last")
    p.add_argument("--warehouse", default="warehouse-bench", help="default ./warehouse-bench")
    p.add_argument("--master", help="Spark master (default $MVLATTICE_MASTER, local[*])")
    p.add_argument("--conf", action="append", default=[], type=_pair, help="key=value")
    p.add_argument("--runs", type=int, default=3, help="runs per query; the median counts")
    p.add_argument("--max-tiles", type=int, help="tiles to plan (default: the planner's)")
    p.add_argument("--profile-size", type=int, default=1, help="largest sets profiled up front")
    cluster = "start a standalone cluster of WORKERS one-core workers on loopback"
    p.add_argument("--cluster", type=int, default=0, metavar="WORKERS", help=cluster)
    p.add_argument("--generate-only", action="store_true", help="generate the data and stop")
    reuse = "keep counts cached by an earlier run (default: count again, to time it)"
    p.add_argument("--reuse-statistics", action="store_true", help=reuse)
    return p


def _pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected key=value, got {text!r}")
    return key, value


if __name__ == "__main__":
    sys.exit(main())
