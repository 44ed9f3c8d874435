"""Benchmark HRU96 tile planning on a 30-column lattice: lazy versus plain greedy, and the whole
plan, on the product's own candidates.

A seeded workload of 500 distinct weighted group-bys (1–6 columns each) over a 30-column star
of 10 M rows (column cardinalities 2 .. 100 k). Candidates come from the planner's generator
(`mvlattice.plan.candidates`: asked sets, singles and pairs of dimension-like columns,
bounded unions) and rows from the dict-backed statistics provider (singles counted, everything
else estimated: independence capped by Cardenas). Lazy and plain greedy then run on the same
views and weights and must pick the same tiles. `plan_lattice` is also timed end to end:
without round tables, with each round's 10 best candidates (the CLI's default, found lazily)
and with HRU96's full Fig. 8 table (every candidate, every round).
Times are the best of --repeat runs.

    python bench/hru.py [--json] [--seed N] [--k N] [--repeat N]
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
import math
import random
import time
from collections.abc import Callable
from typing import TypeVar

from mvlattice.lattice.lattice import Lattice, LatticeColumn, Node
from mvlattice.plan.candidates import candidate_sets
from mvlattice.plan.hru import greedy_over_sets
from mvlattice.plan.planner import plan_lattice
from mvlattice.plan.sizing import sizes
from mvlattice.plan.workload import Workload, WorkloadQuery, merge
from mvlattice.statistics.dict_provider import DictStatisticProvider

ROWS = 10_000_000
COLUMNS = 30
QUERIES = 500

T = TypeVar("T")


def make_lattice(rng: random.Random) -> tuple[Lattice, Callable[[], DictStatisticProvider]]:
    """The lattice and a factory of fresh providers (each run pays for its own estimates)."""
    labels = [f"c{i:02d}" for i in range(COLUMNS)]
    columns = tuple(LatticeColumn(c, "f", c, f"`f`.`{c}`") for c in labels)
    lattice = Lattice(
        "bench", "b", "select 1 from b.fact f", (Node("f", "b", "fact"),), (), columns,
        algorithm=True,
    )  # fmt: skip
    cardinality = {c: round(10 ** rng.uniform(0.3, 5)) for c in labels}  # 2 .. 100k values
    return lattice, lambda: DictStatisticProvider(ROWS, cardinality)


def make_workload(rng: random.Random, lattice: Lattice) -> Workload:
    weights: dict[frozenset[str], float] = {}
    while len(weights) < QUERIES:
        query = frozenset(rng.sample(lattice.labels, rng.randint(1, 6)))
        weights[query] = weights.get(query, 0) + rng.randint(1, 100)
    queries = merge(WorkloadQuery(d, frozenset(), w) for d, w in weights.items())
    return Workload(queries, QUERIES)


def timed(run: Callable[[], T], repeat: int) -> tuple[T, float]:
    best, result = math.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    assert result is not None
    return result, best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print a final JSON line")
    parser.add_argument("--seed", type=int, default=1996)
    parser.add_argument("--k", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3, help="runs per variant; best counts")
    args = parser.parse_args(argv)

    rng = random.Random(args.seed)
    lattice, fresh = make_lattice(rng)
    workload = make_workload(rng, lattice)
    asked = workload.weights()

    cands, candidates_s = timed(lambda: candidate_sets(lattice, fresh(), asked), args.repeat)
    views, sizing_s = timed(lambda: sizes(cands.sets, cands.top, lattice, fresh()), args.repeat)

    def run(lazy: bool) -> Callable:
        return lambda: greedy_over_sets(
            views, args.k, weights=cands.asked, lazy=lazy, record_rounds=False
        )

    lazy, lazy_s = timed(run(True), args.repeat)
    plain, plain_s = timed(run(False), args.repeat)

    def plan(rounds: int | None) -> Callable:
        return lambda: plan_lattice(
            lattice, fresh(), workload=workload, max_tiles=args.k, rounds=rounds
        )

    product, plan_s = timed(plan(0), args.repeat)
    explained, explained_s = timed(plan(10), args.repeat)
    full_table, full_table_s = timed(plan(None), args.repeat)
    identical = lazy == plain
    same_plan = product.tiles == explained.tiles == full_table.tiles
    report = {
        "columns": COLUMNS,
        "workload_group_bys": len(asked),
        "candidates": len(cands.sets),
        "candidates_truncated": cands.truncated,
        "k": args.k,
        "picked": len(lazy.picks),
        "candidates_seconds": round(candidates_s, 4),
        "sizing_seconds": round(sizing_s, 4),
        "lazy_seconds": round(lazy_s, 4),
        "plain_seconds": round(plain_s, 4),
        "lazy_speedup": round(plain_s / lazy_s, 2),
        "identical": identical,
        "plan_seconds": round(plan_s, 4),
        "plan_top10_rounds_seconds": round(explained_s, 4),
        "plan_full_rounds_seconds": round(full_table_s, 4),
        "cost_before": lazy.costs[0],
        "cost_after": lazy.costs[-1],
        "cost_reduction": round(1 - lazy.costs[-1] / lazy.costs[0], 6),
    }
    width = max(map(len, report))
    for key, value in report.items():
        print(f"{key:<{width}}  {value}")
    print("first picks:", ", ".join(f"{name} ({benefit:.3g})" for name, benefit in lazy.picks[:5]))
    if args.json:
        print(json.dumps(report))
    if not identical or not same_plan:
        print("lazy and plain greedy disagree", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
