"""`mvlattice materialize | tiles | refresh | schedule | gc`: tiles as Delta tables."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mvlattice.cli import params
from mvlattice.cli.cmd_plan import _rows, budget_options, limits, query_log_option
from mvlattice.errors import UsageError
from mvlattice.model.durations import parse_duration
from mvlattice.output import json_document, table


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "materialize", help="build declared materializations and planned tiles as Delta tables"
    )
    _common(p, lattice=True)
    p.add_argument("--full", action="store_true", help="rebuild even what is fresh")
    p.add_argument(
        "--max-tiles", type=params.whole_number, metavar="K", help="plan at most K tiles"
    )
    p.add_argument("--max-rows", type=_rows, metavar="N", help="budget: tiles hold at most N rows")
    budget_options(p)
    p.add_argument(
        "--workload",
        metavar="FILE",
        help="queries to weight the plan by (as for plan); default: the query log, if any",
    )
    query_log_option(p)
    p.set_defaults(handler=materialize)

    p = subparsers.add_parser("tiles", help="the tile catalog: status, rows, versions, hits")
    _common(p, lattice=True)
    p.set_defaults(handler=tiles)

    p = subparsers.add_parser("refresh", help="bring tiles up to date (incremental when it can)")
    _common(p, lattice=True)
    p.add_argument("--tile", help="only this tile or materialization (table name)")
    p.add_argument("--full", action="store_true", help="rebuild in full, never incrementally")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="only show what each would do: the path, why, and incremental vs full estimates",
    )
    p.set_defaults(handler=refresh)

    p = subparsers.add_parser("schedule", help="refresh on the model's cron schedules (Ctrl-C)")
    _common(p, lattice=False)
    p.add_argument("--list", action="store_true", help="show the schedule and exit")
    p.add_argument("--grace", type=_duration, default=3600.0, help="misfire grace (default 1h)")
    p.add_argument("--retries", type=params.whole_number, default=3, help="retries of a failed run")
    p.add_argument("--backoff", type=_duration, default=60.0, help="first retry delay")
    p.set_defaults(handler=schedule)

    p = subparsers.add_parser("gc", help="remove tiles dropped from the plan or long unused")
    _common(p, lattice=False)
    p.add_argument("--dry-run", action="store_true", help="only list what would be removed")
    p.add_argument(
        "--unused-for", type=_duration, metavar="DURATION", help="also tiles unused this long"
    )
    p.set_defaults(handler=gc)


def _common(p: argparse.ArgumentParser, *, lattice: bool) -> None:
    params.model_argument(p)
    if lattice:
        p.add_argument("--lattice", help="only this lattice")
    params.json_option(p)
    params.spark_options(p)


# -- materialize / refresh -------------------------------------------------------------------
def materialize(args: argparse.Namespace) -> int:
    if args.workload is not None and not Path(args.workload).is_file():
        raise UsageError(f"--workload: no such file: {args.workload}")
    ws = params.workspace(args)
    result = ws.materialize(
        args.lattice,
        full=args.full,
        max_tiles=args.max_tiles,
        workload=args.workload,
        progress=None if args.json else _progress_bar(),
        say=lambda line: print(line, file=sys.stderr, flush=True),
        limits=limits(args),
        query_log=not args.no_query_log,
    )
    if args.workload is None:
        return _report(args, result)
    coverage = ws.coverage(args.workload, args.lattice)  # what the rewriter answers now
    return _report(args, result, coverage)


def refresh(args: argparse.Namespace) -> int:
    from mvlattice.jobs.catalog import check_target_name

    ws = params.workspace(args, built=True)
    if args.tile is not None:  # a misspelt name costs a second, not Spark's start-up
        check_target_name(ws.model, ws.warehouse, args.tile, args.lattice)
    if args.dry_run:
        result = ws.refresh(args.lattice, args.tile, full=args.full, dry_run=True)
        if args.json:
            print(json_document(result.to_json()))
        else:
            print(_plan_table(result))
        return 0
    progress = None if args.json else _progress_bar()
    result = ws.refresh(args.lattice, args.tile, full=args.full, progress=progress)
    return _report(args, result)


WHY_WIDTH = 100  # the dry run's reasons, wrapped under its table


def _plan_table(result) -> str:  # a BatchResult of a dry run
    """What each target's refresh would do: a table of the paths and the rows each would read,
    then each target's reason under it, wrapped (a reason in the table made 400-column rows)."""
    import textwrap

    def rows(n: int | None) -> str:
        return "" if n is None else f"{n:,}"

    columns = ["#", "name", "path", "incremental rows", "partition rows", "full rows",
               "full from"]  # fmt: skip
    lines, reasons = [], []
    for number, r in enumerate(result.results, 1):
        e = r.estimate
        path = "fresh" if r.status == "skipped" else r.path
        lines.append(
            (
                str(number),
                r.target,
                path,
                rows(e.incremental_rows) if e else "",
                rows(e.partition_rows) if e and e.partitions else "",
                rows(e.full_rows) if e else "",
                e.full_from if e else "",
            )
        )
        if r.reason:
            reasons.append(textwrap.fill(f"{number}. {r.reason}", width=WHY_WIDTH,
                                         subsequent_indent="   "))  # fmt: skip
    if not reasons:
        return table(columns, lines)
    return table(columns, lines) + "\n\nwhy:\n" + "\n".join(reasons)


def _report(args: argparse.Namespace, result, coverage=None) -> int:  # a BatchResult
    from mvlattice.jobs.api import summarize
    from mvlattice.plan.render import coverage_document, coverage_lines

    if args.json:
        document = result.to_json()
        if coverage is not None:
            document["coverage"] = coverage_document(coverage)
        print(json_document(document))
    else:
        for r in result.results:
            if r.kind == "plan":
                print(f"FAILED {r.target}: {r.error} ({r.reason})")
        print(summarize(result))
        if coverage is not None:
            print("\n".join(coverage_lines(coverage)))
    for r in result.results:
        if r.warning:
            print(f"mvlattice: warning: {r.target}: {r.warning}", file=sys.stderr)
    for r in result.failed:
        print(f"mvlattice: error: {r.target}: {r.error}", file=sys.stderr)
    return 0 if result.ok else 1


def _progress_bar():  # a jobs.batch.Progress
    """A line per target as it starts and ends, stamped with the seconds since the batch began
    (as `cli.steps` stamps its lines), with a bar of the targets finished."""
    import time

    width = 20
    began = time.monotonic()

    def show(event) -> None:  # a ProgressEvent
        done = event.index - (event.result is None)
        bar = "#" * (width * done // event.total) + "." * (width - width * done // event.total)
        stamp = f"[{time.monotonic() - began:6.1f}s]"
        head = f"{stamp} [{bar}] {event.index}/{event.total} {event.target.name}"
        if event.result is None:
            print(f"{head} …", flush=True)
            return
        r = event.result
        if r.status == "failed":
            print(f"{head}: FAILED ({r.path}) {r.error}", flush=True)
            return
        if r.status == "busy":  # "skipped: being built by <host> pid <pid> since <time>"
            print(f"{head}: {r.reason}", flush=True)
            return
        rows = f", {r.rows:,} rows" if r.rows is not None else ""
        where = ", in-process" if r.engine == "local" else ""
        print(
            f"{head}: {r.status} ({r.path}{where}{rows}, {r.seconds:.1f} s) — {r.reason}",
            flush=True,
        )

    return show


# -- tiles -----------------------------------------------------------------------------------
def tiles(args: argparse.Namespace) -> int:
    from mvlattice.cli.commands import feed_lines

    ws = params.workspace(args, built=True)
    entries = ws.tiles(args.lattice)
    feeds = ws.change_feeds()
    if args.json:
        print(json_document({"tiles": [e.to_json() for e in entries], "change_data_feed": feeds}))
        return 0
    columns = ["name", "status", "rows", "bytes", "path", "last refresh", "hits", "note"]
    rows = [
        (
            e.name,
            e.status,
            e.rows,
            e.size_bytes,
            e.refresh_path,
            e.to_json()["last_refresh"],
            e.hits,
            _note(e),
        )
        for e in entries
    ]
    print(table(columns, rows))
    for line in feed_lines(feeds):
        print(line)
    return 0


def _note(e) -> str:  # a CatalogEntry
    note = e.last_error or (e.message if e.status != "fresh" else "")
    if e.dropped:
        return "; ".join(filter(None, (f"{e.dropped}: `gc` removes it", note)))
    return note


# -- schedule --------------------------------------------------------------------------------
def schedule(args: argparse.Namespace) -> int:
    from mvlattice.jobs.cron import scheduled_targets

    ws = params.workspace(args)
    targets = scheduled_targets(ws.model)
    if not targets:
        raise UsageError(
            f"{ws.model.file}: no lattice or materialization has `refresh: {{cron: …}}`"
        )
    if args.list:
        return _list_schedule(args, targets)
    from mvlattice.jobs.scheduler import for_model

    scheduler = for_model(
        ws.spark,
        ws.model,
        ws.warehouse,
        say=_stamped,
        grace_seconds=args.grace,
        retries=args.retries,
        backoff_seconds=args.backoff,
    )
    for target in targets:
        _stamped(
            f"scheduled: refresh {target.kind} {target.name} at '{target.cron}' "
            f"(next run {_next_run(target.cron)})"
        )
    _stamped("running; Ctrl-C stops")
    scheduler.run_forever()
    return 0


def _stamped(line: str) -> None:
    """A running scheduler's line, with the local time it was said at (a log read later)."""
    import datetime as dt

    print(f"{dt.datetime.now().astimezone():%Y-%m-%d %H:%M:%S%z} {line}", flush=True)


def _next_run(cron: str) -> str:
    import datetime as dt

    from mvlattice.jobs.scheduler import trigger_for

    return str(trigger_for(cron).get_next_fire_time(None, dt.datetime.now().astimezone()))


def _list_schedule(args: argparse.Namespace, targets) -> int:
    rows = [(t.kind, t.name, t.cron, _next_run(t.cron)) for t in targets]
    if args.json:
        keys = ("kind", "name", "cron", "next_run")
        print(json_document({"schedule": [dict(zip(keys, r, strict=True)) for r in rows]}))
    else:
        print(table(["kind", "name", "cron", "next run"], rows))
    return 0


# -- gc --------------------------------------------------------------------------------------
def gc(args: argparse.Namespace) -> int:
    from mvlattice.jobs.api import collect_garbage

    ws = params.workspace(args, built=True)
    removed = collect_garbage(
        ws.spark, ws.model, ws.warehouse, unused_seconds=args.unused_for, dry_run=args.dry_run
    )
    verb = "would remove" if args.dry_run else "removed"
    failed = [g for g in removed if g.error]
    if args.json:
        keys = ("name", "reason", "location", "error")
        items = [{k: getattr(g, k) for k in keys} for g in removed]
        document = {"dry_run": args.dry_run, "ok": not failed, verb.replace(" ", "_"): items}
        print(json_document(document))
    else:
        for g in removed:
            print(f"{'FAILED to remove' if g.error else verb} {g.name}: {g.reason}")
        tail = f", {len(failed)} failed" if failed else ""
        print(f"{len(removed) - len(failed)} tile(s) {verb}{tail}")
    for g in failed:
        print(f"mvlattice: error: {g.name}: {g.error}", file=sys.stderr)
    return 1 if failed else 0


def _duration(text: str) -> float:
    try:
        return parse_duration(float(text) if text.replace(".", "", 1).isdigit() else text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
