"""`mvlattice suggest`: lattices and tiles from query logs, as a model file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from mvlattice.cli import params
from mvlattice.errors import UsageError


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "suggest",
        help="suggest lattices and tiles from query logs",
        description="Read query logs (.sql, JSON lines with 'sql', the FoodMart query set) and "
        "write a model with lattices and the tiles the logged workload needs.",
    )
    p.add_argument(
        "--log",
        nargs="+",
        action="extend",
        required=True,
        metavar="FILE",
        help="query log(s): .sql, JSON lines, the FoodMart query set, a query-log Delta table",
    )
    p.add_argument("--model", help="an existing model to evolve (its keys direct joins)")
    p.add_argument(
        "--dialect",
        help="SQL dialect of the logs (sqlglot's names; 'ansi' for \"quoted\" identifiers); "
        "default: the log's own hint, else spark",
    )
    p.add_argument("-o", "--output", metavar="OUT.yaml", help="write the model here")
    params.json_option(p)
    p.add_argument(
        "--schema",
        help="schema of unqualified tables without --model (default: the one schema the log "
        "names, else the warehouse folder holding them as Delta tables, else 'default')",
    )
    p.add_argument(
        "--no-merge", action="store_true", help="one lattice per join graph, not per fact table"
    )
    p.add_argument("--max-tiles", type=params.whole_number, help="tiles per lattice (default 8)")
    p.add_argument("--max-rows", type=float, help="space budget: summed rows of a lattice's tiles")
    p.add_argument("--no-tiles", action="store_true", help="suggest lattices only")
    p.add_argument(
        "--no-data", action="store_true", help="with --model: read no data; guess tile sizes"
    )
    params.spark_options(p)
    p.set_defaults(handler=suggest_command)


def suggest_command(args: argparse.Namespace) -> int:
    from mvlattice.suggest.logs import read_logs
    from mvlattice.suggest.suggester import suggest

    dialect = _dialect(args.dialect)
    from mvlattice.querylog.log import table_records

    entries = read_logs(args.log, table_reader=table_records)  # the service's query-log table
    model, data = _model_and_data(args)
    if model is None:
        data["locate"] = _locator(args)
    result = suggest(
        entries,
        model=model,
        dialect=dialect,
        evolve=not args.no_merge,
        default_schema=args.schema,
        max_tiles=args.max_tiles,
        max_rows=args.max_rows,
        tiles=not args.no_tiles,
        **data,
    )
    text, headed = _model_text(args, result, model)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    if args.json:
        from mvlattice.output import json_document
        from mvlattice.suggest.report import as_json

        print(json_document(as_json(result, args.output, None if args.output else text)))
        return 0
    from mvlattice.suggest.emit import header

    summary = "\n".join(header(result, [Path(p).name for p in args.log]))
    if args.output:
        print(summary)
        print(f"Wrote {args.output}")
    else:
        if not headed:  # a kept or JSON model has no header: it goes beside, to stderr
            print(summary, file=sys.stderr)
        sys.stdout.write(text)
    return 0


def _model_text(args: argparse.Namespace, result: Any, model: Any) -> tuple[str, bool]:
    """The model's text, and whether it carries the summary header. Over a YAML --model the
    file's own formatting is kept where possible (else one line on stderr says why); JSON is
    written when -o names a .json file, or without -o when --model is one."""
    from mvlattice.suggest.emit import emit_json, emit_model, emit_over

    logs = [Path(p).name for p in args.log]
    where = args.output or (args.model if model is not None else None) or ""
    as_json = Path(where).suffix.lower() == ".json"
    if model is None:
        return (emit_json(result), False) if as_json else (emit_model(result, None, logs), True)
    emitted = emit_over(result, Path(model.file), logs, as_json)
    if emitted.note is not None:
        print(f"note: {emitted.note}", file=sys.stderr)
    return emitted.text, emitted.headed


def _model_and_data(args: argparse.Namespace) -> tuple[Any, dict]:
    """The model (if any) and, unless --no-data, data-backed uniqueness and statistics."""
    if args.model is None:
        return None, {}
    if args.no_data:
        from mvlattice.model.loader import load_model
        from mvlattice.settings import resolve_warehouse

        return load_model(args.model, resolve_warehouse(args.warehouse)), {}
    from mvlattice.suggest.data import data_statistics, data_uniqueness

    ws = params.workspace(args)
    say = (lambda line: print(line, file=sys.stderr)) if not args.json else None
    return ws.model, {
        "uniqueness": data_uniqueness(ws.spark, ws.model),
        "stats_for": data_statistics(ws.spark, ws.model, say),
        "statistics": "data (the lattice's statistic provider)",
    }


def _locator(args: argparse.Namespace) -> Any:
    """Without a model: finds the warehouse folder holding the log's unqualified tables."""
    from mvlattice.settings import resolve_warehouse
    from mvlattice.suggest.locate import schema_holding

    warehouse = resolve_warehouse(args.warehouse)
    return lambda names: schema_holding(warehouse, names)


def _dialect(name: str | None) -> str | None:
    if name is None:
        return None
    if name.lower() == "ansi":
        return ""
    from sqlglot.dialects.dialect import Dialect

    try:
        Dialect.get_or_raise(name)
    except ValueError:
        raise UsageError(
            f"unknown SQL dialect '{name}' (sqlglot's names, e.g. spark, mysql, postgres; or ansi)"
        ) from None
    return name
