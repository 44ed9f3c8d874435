"""`mvlattice profile MODEL`: distinct counts of a lattice's column sets, keys and FDs."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any

from mvlattice.cli import params
from mvlattice.output import json_document, plural, table


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
    p.add_argument(
        "--all",
        action="store_true",
        help="list every column set counted and every approximate dependency (default: single "
        "columns, keys and exact dependencies, with how many more there are)",
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
    for line in profile_lines(doc, result.dependencies, show_all=args.all):
        print(line)
    return 0


def profile_lines(doc: dict, dependencies: Sequence[Any], show_all: bool) -> list[str]:
    """A profile for reading: single columns, keys and exact dependencies; the rest counted
    (a lattice of 20 columns has over a thousand counted sets). Dependencies the sketches'
    error cannot tell from violations are never listed, only counted (`statistics.support`)."""
    shown = [d for d in doc["distinct"] if show_all or len(d["columns"]) == 1]
    rows = [(", ".join(d["columns"]), d["count"], "yes" if d["exact"] else "~") for d in shown]
    lines = [table(["columns", "distinct", "exact"], rows)]
    hidden = len(doc["distinct"]) - len(shown)
    if hidden:
        lines.append(f"(and {plural(hidden, 'set')} of several columns: --all or --json)")
    keys = [", ".join(k) for k in doc["unique_keys"]]
    lines.append("unique keys: " + ("; ".join(f"({k})" for k in keys) if keys else "none found"))
    near = doc.get("unsupported_keys", 0)
    if near:
        lines[-1] += f" (not claimed: {plural(near, 'set')} unique only within the sketches' error)"
    exact = [d for d in dependencies if d.exact]
    approximate = [d for d in dependencies if not d.exact]
    listed = exact + (approximate if show_all else [])
    lines.append(f"functional dependencies ({len(exact)} exact, {len(approximate)} approximate):")
    lines += [f"  {d}" + ("" if d.exact else "  (approximate)") for d in listed]
    if approximate and not show_all:
        lines.append(f"  ({plural(len(approximate), 'approximate one')}, from sketches: --all)")
    unsupported = doc.get("unsupported_dependencies", 0)
    if unsupported:
        lines.append(
            f"  (not claimed: {plural(unsupported, 'dependency', 'dependencies')} that hold "
            "only within the sketches' error, where a violation would not show; --provider "
            "exact counts them)"
        )
    return lines
