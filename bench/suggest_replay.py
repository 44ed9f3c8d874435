"""Suggest, materialize, replay: the FoodMart query set through the whole loop (issue 9).

1. `suggest` reads the FoodMart query set (`mvlattice datasets foodmart-queries`) and evolves
   `models/foodmart.yaml` into a model with lattices and HRU-chosen tiles for that workload
   (join directions from the model's keys, tile sizes from the data).
2. `materialize` builds every suggested tile as a Delta table.
3. Every query of the log is rewritten against those tiles (nothing runs); the report gives the
   share answered from a tile, overall and among the queries the suggester used. A seeded sample
   of the rewritten ones is run both ways and compared as multisets.

    python bench/suggest_replay.py [--warehouse DIR] [--check N] [--seed S] [--json]

With `--json` the last line is `{"queries": N, "used": N, "rewritten": N,
"rewritten_used": N, "tiles": N, "checked": N, "mismatches": N}`.
"""

from __future__ import annotations

import sys
from pathlib import Path

# `python bench/x.py` puts bench/ first on sys.path, where bench/profile.py would shadow the
# standard library's `profile` (which pyspark imports through cProfile).
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))

import argparse
import json
import random
import time
from collections import Counter

import sqlglot

from mvlattice.datasets import foodmart
from mvlattice.datasets.foodmart_queries import ensure_queries
from mvlattice.document import read_document
from mvlattice.errors import MvlatticeError
from mvlattice.proof.comparison import same_rows
from mvlattice.suggest.data import data_statistics, data_uniqueness
from mvlattice.suggest.emit import emit_model
from mvlattice.suggest.logs import LogEntry, read_logs
from mvlattice.suggest.suggester import suggest
from mvlattice.workspace import Workspace

REPO = HERE.parent
MODEL = REPO / "models" / "foodmart.yaml"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warehouse", default=str(REPO / "warehouse-bench" / "suggest"))
    parser.add_argument("--check", type=int, default=40, help="rewritten queries run both ways")
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    base = Workspace(MODEL, warehouse=args.warehouse)
    foodmart.load(base.spark, base.warehouse)
    entries = read_logs([ensure_queries()])
    result = suggest(
        entries,
        model=base.model,
        uniqueness=data_uniqueness(base.spark, base.model),
        stats_for=data_statistics(base.spark, base.model, None),
        statistics="data",
    )
    suggested = Path(args.warehouse) / "suggested.yaml"
    suggested.write_text(emit_model(result, read_document(MODEL), ["queries.json"]))
    used = {q for item in result.lattices if item.lattice for q in item.suggested.queries}
    print(f"1. suggest: {len(entries)} queries, {len(result.lattices)} lattices "
          f"({time.perf_counter() - t0:.0f}s) -> {suggested}")  # fmt: skip

    t1 = time.perf_counter()
    ws = Workspace(suggested, warehouse=args.warehouse)
    batch = ws.materialize()
    failed = [r for r in batch.results if r.status == "failed"]
    tiles = [e for e in ws.tiles() if e.status == "fresh"]
    print(f"2. materialize: {len(tiles)} tiles fresh, {len(failed)} failed "
          f"({time.perf_counter() - t1:.0f}s)")  # fmt: skip
    for r in failed:
        print(f"   FAILED {r.target}: {r.error}")

    t2 = time.perf_counter()
    outcomes = replay(ws, entries)
    rewritten = [e for e, (ok, _) in outcomes.items() if ok]
    rewritten_used = [e for e in rewritten if e.id in used]
    reasons = Counter(reason for ok, reason in outcomes.values() if not ok)
    share, share_used = len(rewritten) / len(entries), len(rewritten_used) / max(len(used), 1)
    print(f"3. replay: {len(rewritten)} of {len(entries)} queries answered from a tile "
          f"({share:.1%}); of the {len(used)} the suggester used: {len(rewritten_used)} "
          f"({share_used:.1%}) ({time.perf_counter() - t2:.0f}s)")  # fmt: skip
    for reason, n in reasons.most_common(8):
        print(f"   not rewritten, {reason}: {n}")

    sample = random.Random(args.seed).sample(rewritten, min(args.check, len(rewritten)))
    mismatches = check(ws, sample)
    print(f"4. checked {len(sample)} rewritten queries on the data: {mismatches} mismatches")
    if args.json:
        print(json.dumps({
            "queries": len(entries), "used": len(used), "rewritten": len(rewritten),
            "rewritten_used": len(rewritten_used), "tiles": len(tiles),
            "checked": len(sample), "mismatches": mismatches,
        }))  # fmt: skip
    return 1 if mismatches else 0


def spark_sql(entry: LogEntry) -> str | None:
    """The logged query in Spark's dialect, or None when it does not transpile."""
    try:
        (text,) = sqlglot.transpile(entry.sql, read=entry.dialect or "", write="spark")
    except (sqlglot.errors.SqlglotError, ValueError):
        return None
    return text


def replay(ws: Workspace, entries: tuple[LogEntry, ...]) -> dict[LogEntry, tuple[bool, str]]:
    """Per entry: (answered from a tile, why not)."""
    out: dict[LogEntry, tuple[bool, str]] = {}
    for entry in entries:
        sql = spark_sql(entry)
        if sql is None:
            out[entry] = (False, "does not transpile")
            continue
        try:
            result = ws.rewrite(sql, explain=False)
        except MvlatticeError as exc:
            out[entry] = (False, type(exc).__name__)
            continue
        out[entry] = (result.rewritten, "" if result.rewritten else "no view matched")
    return out


def check(ws: Workspace, sample: list[LogEntry]) -> int:
    mismatches = 0
    for entry in sample:
        sql = spark_sql(entry)
        assert sql is not None
        rewritten = ws.rewrite(sql, explain=False).sql
        base = ws.collect(ws.sql(sql))[1]
        tiled = ws.collect(ws.sql(rewritten))[1]
        if not same_rows(base, tiled):
            mismatches += 1
            print(f"   MISMATCH query {entry.id}:\n   {sql}\n   -> {rewritten}")
    return mismatches


if __name__ == "__main__":
    sys.exit(main())
