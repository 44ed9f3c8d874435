"""`mvlattice plan`: choose the tiles to materialize for a lattice (HRU96 greedy)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mvlattice.cli import params
from mvlattice.errors import NotFoundError
from mvlattice.output import json_document
from mvlattice.plan.render import plan_document, plan_dot, plan_text


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "plan", help="choose tiles for a lattice (HRU96 greedy, weighted by a workload)"
    )
    params.model_argument(p)
    p.add_argument("--lattice", help="the lattice to plan (needed when the model has several)")
    p.add_argument(
        "--max-tiles", type=params.whole_number, metavar="K", help="choose at most K tiles"
    )
    p.add_argument(
        "--max-rows", type=_rows, metavar="N", help="budget: chosen tiles hold at most N rows"
    )
    budget_options(p)
    p.add_argument(
        "--workload",
        metavar="FILE",
        help='queries to weight by: a SQL log (.sql, or JSON lines with "sql") '
        "or a list of {dimensions, weight} (.yaml/.json)",
    )
    query_log_option(p)
    p.add_argument(
        "--provider", choices=("exact", "profiler"), help="how to count rows of group-bys"
    )
    p.add_argument(
        "--max-size",
        type=params.whole_number,
        metavar="K",
        help="profile column sets of up to K columns before planning (default 1; "
        "the sets the plan needs most are counted anyway)",
    )
    params.json_option(p)
    p.add_argument(
        "--format", choices=("text", "json", "dot"), default="text", help="dot: Graphviz DOT"
    )
    params.spark_options(p)
    p.set_defaults(handler=plan)


def plan(args: argparse.Namespace) -> int:
    if args.workload is not None and not Path(args.workload).is_file():  # before Spark starts
        raise NotFoundError(f"workload file not found: {args.workload}")
    ws = params.workspace(args)
    result = ws.plan(
        lattice=args.lattice,
        max_tiles=args.max_tiles,
        max_rows=args.max_rows,
        workload=args.workload,
        provider=args.provider,
        max_size=args.max_size,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
        limits=limits(args),
        query_log=not args.no_query_log,
    )
    if args.json or args.format == "json":
        print(json_document(plan_document(result)))
    elif args.format == "dot":
        print(plan_dot(result))
    else:
        print(plan_text(result))
    return 0


def query_log_option(p: argparse.ArgumentParser) -> None:
    """--no-query-log, for `plan` and `materialize`: the same model, the same plan."""
    p.add_argument(
        "--no-query-log",
        action="store_true",
        help="without --workload, plan by the lattice alone (by default the queries of the "
        "warehouse's query log weigh the plan, so it moves as the log grows)",
    )


def budget_options(p: argparse.ArgumentParser) -> None:
    """--max-bytes and --max-share, for `plan` and `materialize`."""
    p.add_argument(
        "--max-bytes",
        type=_size,
        metavar="SIZE",
        help="budget: chosen tiles take at most SIZE bytes (500MB, 2GiB; estimated rows × "
        "bytes per value measured on built tiles, else 8)",
    )
    p.add_argument(
        "--max-share",
        type=_share,
        metavar="PCT",
        help="budget: chosen tiles take at most this share of the fact table's bytes (5%%)",
    )


def limits(args: argparse.Namespace):  # a plan.budget.Limits
    from mvlattice.plan.budget import Limits

    return Limits(
        max_rows=getattr(args, "max_rows", None),
        max_bytes=args.max_bytes,
        max_share=args.max_share,
    )


def _size(text: str) -> float:
    from mvlattice.errors import UsageError
    from mvlattice.plan.budget import parse_bytes

    try:
        return parse_bytes(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _share(text: str) -> float:
    from mvlattice.errors import UsageError
    from mvlattice.plan.budget import parse_share

    try:
        return parse_share(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _rows(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("must be a finite number, zero or more")
    return value
