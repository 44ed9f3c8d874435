"""Benchmark HRU96 greedy tile selection: lazy versus plain greedy on a 30-column lattice.

A seeded workload of 500 distinct weighted group-bys (1–6 columns each) over 30 columns;
candidate views are the workload's column sets, their pairwise unions of up to 8 columns
(capped), and the top (all columns). Sizes come from an independence estimate capped by
Cardenas' formula. Both variants run on the same input and must pick the same views. Times
are best of --repeat runs and include indexing the lattice, also timed alone (k=0, "setup").

    python bench/hru.py [--json] [--seed N] [--k N] [--cap N] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mvlattice.lattice.hru import GreedyResult, greedy_over_sets

ROWS = 10_000_000
COLUMNS = 30
QUERIES = 500
MAX_UNION = 8


@dataclass(frozen=True, slots=True)
class Workload:
    sizes: Mapping[frozenset[str], float]
    weights: Mapping[frozenset[str], float]


def cardenas(distinct: float, rows: int) -> float:
    """Expected distinct groups when `rows` rows fall among `distinct` equally likely values:
    N·(1 − ((N − 1)/N)^rows), written with log1p/expm1 so that huge N stays accurate."""
    if distinct <= 1:
        return 1.0
    return -distinct * math.expm1(rows * math.log1p(-1 / distinct))


def make_workload(seed: int, cap: int) -> Workload:
    rng = random.Random(seed)
    columns = [f"c{i:02d}" for i in range(COLUMNS)]
    cardinality = {c: round(10 ** rng.uniform(0.3, 5)) for c in columns}  # 2 .. 100k values
    weights: dict[frozenset[str], float] = {}
    while len(weights) < QUERIES:
        query = frozenset(rng.sample(columns, rng.randint(1, 6)))
        weights[query] = weights.get(query, 0) + rng.randint(1, 100)
    candidates = set(weights)
    asked = sorted(weights, key=sorted)
    pairs = list(range(len(asked) * len(asked)))
    rng.shuffle(pairs)
    for pair in pairs:
        if len(candidates) >= cap:
            break
        union = asked[pair // len(asked)] | asked[pair % len(asked)]
        if len(union) <= MAX_UNION:
            candidates.add(union)
    candidates.add(frozenset(columns))

    def size(view: frozenset[str]) -> float:
        return cardenas(math.prod(cardinality[c] for c in view), ROWS)

    return Workload({view: size(view) for view in candidates}, weights)


def timed(run: Callable[[], GreedyResult], repeat: int) -> tuple[GreedyResult, float]:
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
    parser.add_argument("--cap", type=int, default=3000, help="most candidate views")
    parser.add_argument("--repeat", type=int, default=3, help="runs per variant; best counts")
    args = parser.parse_args(argv)

    workload = make_workload(args.seed, args.cap)

    def run(lazy: bool, k: int = args.k) -> Callable[[], GreedyResult]:
        return lambda: greedy_over_sets(
            workload.sizes, k, weights=workload.weights, lazy=lazy, record_rounds=False
        )

    _, setup_s = timed(run(True, k=0), args.repeat)  # indexing the lattice only
    lazy, lazy_s = timed(run(True), args.repeat)
    plain, plain_s = timed(run(False), args.repeat)
    identical = lazy == plain
    report = {
        "columns": COLUMNS,
        "workload_group_bys": len(workload.weights),
        "views": len(workload.sizes),
        "k": args.k,
        "picked": len(lazy.picks),
        "setup_seconds": round(setup_s, 4),
        "lazy_seconds": round(lazy_s, 4),
        "plain_seconds": round(plain_s, 4),
        "speedup": round(plain_s / lazy_s, 2),
        "search_speedup": round((plain_s - setup_s) / (lazy_s - setup_s), 2),
        "identical": identical,
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
    if not identical:
        print("lazy and plain greedy disagree", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
