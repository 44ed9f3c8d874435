"""Parse and qualify cost (sqlglot) on FoodMart's and SSB's query sets and on the ad-hoc
traffic, and whole rewrites, in several Python interpreters side by side — e.g. one whose
sqlglot carries sqlglotc's compiled modules — with sqlglot's qualify under cheaper options.

Query sets: FoodMart, bench/rewrite.py's 50 queries (its 100 tiles for the rewrites); SSB, the
13 queries of `mvlattice.datasets.ssb_queries` (parse and qualify only); ad-hoc, 200 texts of
`mvlattice.proof.adhoc` over its model's tiles. Per set, per call, the median of:

* parse: `sql.parse.parse_query`;
* qualify: `sql.parse.qualify_query` (our naming of outputs and table check around sqlglot's
  qualify) on a fresh parse each time;
* sqlglot qualify under each option set of QUALIFY_OPTIONS (as qualify_query calls it first);
* rewrite: `mvrewrite.rewriter.rewrite(sql, context, explain=False)` from the text, as for a
  new text (the qualified trees the context keeps per text are cleared first).

Times are CPU time of the process (time.process_time), not wall time: the machine is shared and
loaded, and a waiting process would count another's work as its own. Each interpreter runs in
its own process (the repository first on its path), the interpreters taking turns --rounds
times; the table shows each one's least disturbed round (lowest median) and the ratio to the
first interpreter.

    python bench/parse_cost.py [--python NAME=PATH ...] [--rounds 3] [--repeat 3] [--json]
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
import os
import random
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# sqlglot qualify's options as qualify_query passes them, and cheaper sets to weigh against it
CURRENT = {"validate_qualify_columns": True, "identify": True}
QUALIFY_OPTIONS: dict[str, dict[str, bool]] = {
    "current": CURRENT,
    "no_quote": {**CURRENT, "quote_identifiers": False},
    "no_validate": {**CURRENT, "validate_qualify_columns": False},
    "no_quote_no_validate": {
        **CURRENT,
        "quote_identifiers": False,
        "validate_qualify_columns": False,
    },
}
# SSB's columns as mvlattice.datasets.ssb generates them: qualification resolves the queries'
# unqualified names with them (a name missing here fails the run, so the list checks itself).
SSB_COLUMNS = {
    "lineorder": "lo_orderkey lo_linenumber lo_custkey lo_partkey lo_suppkey lo_orderdate "
    "lo_orderpriority lo_shippriority lo_quantity lo_extendedprice lo_ordtotalprice lo_discount "
    "lo_revenue lo_supplycost lo_tax lo_commitdate lo_shipmode",
    "date": "d_datekey d_date d_dayofweek d_month d_year d_yearmonthnum d_yearmonth "
    "d_daynuminweek d_daynuminmonth d_daynuminyear d_monthnuminyear d_weeknuminyear "
    "d_sellingseason d_lastdayinweekfl d_lastdayinmonthfl d_holidayfl d_weekdayfl",
    "customer": "c_custkey c_name c_address c_city c_nation c_region c_phone c_mktsegment",
    "supplier": "s_suppkey s_name s_address s_city s_nation s_region s_phone",
    "part": "p_partkey p_name p_mfgr p_category p_brand1 p_color p_type p_size p_container",
}
ADHOC_TEXTS = 200


# -- the worker: one interpreter's measurement ----------------------------------------------------
def cpu_ms(run: Callable[[], object]) -> float:
    """CPU milliseconds of one call of `run`."""
    start = time.process_time()
    run()
    return (time.process_time() - start) * 1000


def query_sets(folder: Path) -> dict[str, tuple[list[str], Any, bool]]:
    """set name -> (queries, rewrite context, whether whole rewrites are timed)."""
    import yaml

    from bench.rewrite import TYPES, foodmart_model, queries, tiles
    from mvlattice.datasets import ssb_queries
    from mvlattice.datasets.foodmart import declared_types, with_columns
    from mvlattice.model.loader import load_model
    from mvlattice.mvrewrite.context import context_for
    from mvlattice.proof import adhoc

    rng = random.Random(7)  # bench/rewrite.py's seed and order: tiles, then queries
    food = context_for(foodmart_model(folder), tiles=tiles(rng), materializations=(), types=TYPES)
    food_queries = queries(rng)
    doc = yaml.safe_load((REPO / "models" / "ssb.yaml").read_text())
    for table in doc["schemas"][0]["tables"]:
        table["columns"] = SSB_COLUMNS[table["name"]].split()
    (folder / "ssb.yaml").write_text(yaml.safe_dump(doc))
    ssb = context_for(load_model(folder / "ssb.yaml", warehouse=str(folder)), tiles=(), types={})
    (folder / "adhoc.yaml").write_text(yaml.safe_dump(with_columns(adhoc.foodmart_document())))
    model = load_model(folder / "adhoc.yaml", warehouse=str(folder))
    traffic = adhoc.AdhocTraffic(adhoc.EXAMPLE_DOMAIN, seed=7)
    return {
        "foodmart": (food_queries, food, True),
        "ssb": ([sql for _, sql in ssb_queries.QUERIES], ssb, False),
        "adhoc": ([traffic.next().sql for _ in range(ADHOC_TEXTS)],
                  context_for(model, types=declared_types()), True),
    }  # fmt: skip


def measure_set(sqls: list[str], context: Any, rewrites: bool, repeat: int) -> dict[str, Any]:
    from sqlglot.optimizer.qualify import qualify

    from mvlattice.mvrewrite.rewriter import rewrite
    from mvlattice.sql.parse import DIALECT, parse_query, qualify_query

    times: dict[str, list[float]] = {}

    def add(name: str, ms: float) -> None:
        times.setdefault(name, []).append(ms)

    schema, db = context.schema, context.default_db
    for sql in sqls * repeat:
        add("parse", cpu_ms(lambda: parse_query(sql)))  # noqa: B023 - called at once
        tree = parse_query(sql)  # qualification changes the tree: a fresh one each time
        add("qualify", cpu_ms(lambda: qualify_query(tree, schema, db)))  # noqa: B023
        for name, options in QUALIFY_OPTIONS.items():
            tree = parse_query(sql)
            add(f"sqlglot_qualify_{name}", cpu_ms(
                lambda: qualify(tree, dialect=DIALECT, db=db, schema=schema, **options)  # noqa: B023
            ))  # fmt: skip
        if rewrites:  # as for a new text: the qualified trees kept per text forgotten
            context.qualified.clear()
            add("rewrite", cpu_ms(lambda: rewrite(sql, context, explain=False)))  # noqa: B023
    out: dict[str, Any] = {k: round(statistics.median(v), 4) for k, v in times.items()}
    out["queries"] = len(sqls)
    if rewrites:
        out["rewritten"] = sum(rewrite(sql, context, explain=False).rewritten for sql in sqls)
    return out


def worker(repeat: int) -> dict[str, Any]:
    import sqlglot
    import sqlglot.parser

    from mvlattice.mvrewrite.rewriter import rewrite

    with tempfile.TemporaryDirectory() as folder:
        sets = query_sets(Path(folder))
    for sqls, context, _ in sets.values():  # warm: imports and caches before any timing
        for sql in sqls:
            rewrite(sql, context, explain=False)
    return {
        "sqlglot": sqlglot.__version__,
        "compiled": Path(sqlglot.parser.__file__).suffix == ".so",  # sqlglotc's modules
        "sets": {name: measure_set(*spec, repeat) for name, spec in sets.items()},
    }


# -- the driver: interpreters side by side ---------------------------------------------------------
def run_worker(python: str, repeat: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run(
        [python, __file__, "--worker", "--repeat", str(repeat)],
        capture_output=True, text=True, env=env, cwd=REPO, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{python} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def best_rounds(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Per set and metric, the lowest median over the rounds (the least disturbed one)."""
    out = {k: v for k, v in rounds[0].items() if k != "sets"}
    out["sets"] = {
        name: {key: min(r["sets"][name][key] for r in rounds) for key in metrics}
        for name, metrics in rounds[0]["sets"].items()
    }
    return out


def render(results: dict[str, dict[str, Any]]) -> str:
    names = list(results)
    first = names[0]
    lines = ["CPU ms per call, median (best of the rounds); ratio = first interpreter / this one"]
    lines.append("interpreters: " + ", ".join(
        f"{n} (sqlglot {r['sqlglot']}, {'compiled' if r['compiled'] else 'pure Python'})"
        for n, r in results.items()
    ))  # fmt: skip
    header = f"{'set':<9} {'metric':<36}" + "".join(f"{n:>14}" for n in names)
    lines.append(header + "".join(f"{first + '/' + n:>18}" for n in names[1:]))
    for set_name, metrics in results[first]["sets"].items():
        for key in metrics:
            if key in ("queries", "rewritten"):
                continue
            row = [results[n]["sets"][set_name][key] for n in names]
            ratios = "".join(f"{row[0] / v:>17.2f}x" if v else f"{'-':>18}" for v in row[1:])
            lines.append(f"{set_name:<9} {key:<36}" + "".join(f"{v:>14.3f}" for v in row) + ratios)
        counts = {n: results[n]["sets"][set_name].get("rewritten") for n in names}
        lines.append(f"{set_name:<9} queries {metrics['queries']}, rewritten {counts}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--python", action="append", default=[], metavar="NAME=PATH",
                   help="an interpreter to measure (default: this one, as 'this')")  # fmt: skip
    p.add_argument("--rounds", type=int, default=3, help="turns each interpreter takes")
    p.add_argument("--repeat", type=int, default=3, help="calls per query and metric")
    p.add_argument("--json", action="store_true")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.repeat)))
        return 0
    pythons = dict(item.split("=", 1) for item in args.python) or {"this": sys.executable}
    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in pythons}
    for i in range(args.rounds):
        for name, python in pythons.items():
            print(f"[parse_cost] round {i + 1}: {name} ({python}) …", file=sys.stderr, flush=True)
            rounds[name].append(run_worker(python, args.repeat))
    results = {name: best_rounds(found) for name, found in rounds.items()}
    print(render(results))
    if args.json:
        print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
