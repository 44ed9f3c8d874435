"""`mvlattice profile MODEL`: distinct counts of a lattice's column sets, keys and FDs."""

from __future__ import annotations

import argparse
import sys
import time

from mvlattice.output import dumps, table
from mvlattice.workspace import Workspace


def register(subparsers: argparse._SubParsersAction) -> None:
    from mvlattice.cli.main import spark_options

    p = subparsers.add_parser(
        "profile",
        help="count distinct values of a lattice's column sets (cached by Delta versions)",
    )
    p.add_argument("model", help="model file (YAML or JSON)")
    p.add_argument("--lattice", help="the lattice (default: the model's only lattice)")
    p.add_argument(
        "--max-size",
        type=_size,
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
    p.add_argument("--json", action="store_true", help="print a JSON document")
    spark_options(p)
    p.set_defaults(handler=profile)


def profile(args: argparse.Namespace) -> int:
    ws = Workspace(args.model, warehouse=args.warehouse, master=args.master, conf=dict(args.conf))
    start = time.monotonic()

    def progress(line: str) -> None:
        print(f"[{time.monotonic() - start:6.1f}s] {line}", file=sys.stderr, flush=True)

    result = ws.profile(args.lattice, args.max_size, args.provider, progress=progress)
    if args.json:
        print(dumps(result.to_json()))
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


def _size(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value
