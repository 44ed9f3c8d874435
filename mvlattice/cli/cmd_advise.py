"""`mvlattice advise MODEL`: the query log's misses, why, and the tile changes that answer them."""

from __future__ import annotations

import argparse

from mvlattice.cli import params
from mvlattice.output import json_document


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "advise",
        help="queries the tiles missed (from the query log), grouped by the nearest tile (as the "
        "status page names it) and what it lacks, with one tile element to add to the model per "
        "tile that answers them",
    )
    params.model_argument(p, "model file (its warehouse holds the query log)")
    p.add_argument("--since", help="only since then: a duration ago ('2h', '7d') or ISO time")
    params.json_option(p)
    params.spark_options(p)
    p.set_defaults(handler=advise)


def advise(args: argparse.Namespace) -> int:
    from mvlattice.advise.advisor import advise as run
    from mvlattice.querylog.log import parse_since

    since = parse_since(args.since)  # a bad --since fails before Spark starts
    advice = run(params.workspace(args, built=True), since)
    if args.json:
        print(json_document(advice.to_json()))
    else:
        print("\n".join(advice.lines()))
    return 0
