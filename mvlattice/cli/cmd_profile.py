"""`mvlattice profile MODEL`: distinct counts of a lattice's column sets, keys and FDs."""

from __future__ import annotations

import argparse
import sys
import time

from mvlattice.cli import params
from mvlattice.output import json_document, table


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "profile",
        help="count distinct values of a lattice's column sets (cached by Delta versions)",
    )
    params.model_argument(p)
    p.add_argument("--lattice", help="the lattice (default: the model's only lattice)")
    p.add_argument(
        "--max-size",
        type=params.at_least_one,
        default=3,
        metavar="K",
        help="count sets of up to K columns (sets above 2 only where surprising; default 3)",
    )
    p.add_argument(
        "--provider",
        choices=["exact", "profiler"],
        help="exact counts or HLL sketches (default: the lattice's statisticProvider, "
        "else profiler)",
    )
    params.json_option(p)
    params.spark_options(p)
    p.set_defaults(handler=profile)


def profile(args: argparse.Namespace) -> int:
    ws = params.workspace(args)
    start = time.monotonic()

    def progress(line: str) -> None:
        print(f"[{time.monotonic() - start:6.1f}s] {line}", file=sys.stderr, flush=True)

    result = ws.profile(args.lattice, args.max_size, args.provider, progress=progress)
    if args.json:
        print(json_document(result.to_json()))
        return 0
    doc = result.to_json()
    print(f"lattice {doc['lattice']}: {doc['rows']} rows; {doc['method']}")
    rows = [
        (", ".join(d["columns"]), d["count"], "yes" if d["exact"] else "~") for d in doc["distinct"]
    ]
    print(table(["columns", "distinct", "exact"], rows))
    keys = [", ".join(k) for k in doc["unique_keys"]]
    print("unique keys: " + ("; ".join(f"({k})" for k in keys) if keys else "none found"))
    print(f"functional dependencies ({len(result.dependencies)}):")
    for dep in result.dependencies:
        print(f"  {dep}" + ("" if dep.exact else "  (approximate)"))
    return 0
