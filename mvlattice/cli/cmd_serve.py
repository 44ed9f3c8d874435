"""`mvlattice serve MODEL...` (the HTTP API with the refresh scheduler inside) and
`mvlattice log MODEL` (the query log)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from mvlattice.cli import params
from mvlattice.cli.steps import Steps, start_spark
from mvlattice.errors import UsageError
from mvlattice.output import json_document, table
from mvlattice.querylog.retention import DEFAULT_RETENTION, FOREVER, retention_argument
from mvlattice.spark import DEFAULT_MASTER
from mvlattice.workspace import Workspace

SQL_WIDTH = 80  # the log's SQL column in text output


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve", help="the HTTP API (rewrite, query, tiles, refresh) with the refresh scheduler"
    )
    p.add_argument("models", nargs="+", metavar="MODEL", help="model files to serve")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=params.port, default=8765, help="port (default 8765)")
    p.add_argument(
        "--token-file",
        help="file holding the bearer token clients must send; required off loopback",
    )
    p.add_argument(
        "--max-body-bytes",
        type=params.whole_number,
        default=1 << 20,
        help="request body limit (1 MiB)",
    )
    p.add_argument(
        "--max-rows", type=params.whole_number, default=10_000, help="row limit of /v1/query"
    )
    p.add_argument(
        "--max-response-bytes",
        type=params.whole_number,
        default=16 << 20,
        help="byte limit of a /v1/query answer (16 MiB); rows beyond it are cut",
    )
    p.add_argument(
        "--query-timeout",
        type=_seconds,
        default=60.0,
        help="seconds a query may run before it is cancelled (60)",
    )
    p.add_argument(
        "--max-queries",
        type=params.whole_number,
        default=4,
        help="queries running at once (4); more wait",
    )
    p.add_argument(
        "--max-waiting",
        type=params.whole_number,
        default=64,
        help="queries waiting for a slot (64); beyond: 503 with Retry-After",
    )
    p.add_argument(
        "--header-timeout",
        type=_seconds,
        default=10.0,
        help="seconds a client has to send a request's headers (10); then it is disconnected",
    )
    p.add_argument(
        "--body-timeout",
        type=_seconds,
        default=30.0,
        help="seconds a client has to send a body after its headers (30); then it is disconnected",
    )
    p.add_argument(
        "--max-connections",
        type=params.at_least_one,
        default=1024,
        help="connections open at once (1024; at most half the open-file limit); at the limit a "
        "new one closes the oldest idle or half-sent one",
    )
    p.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name clients may use besides loopback (repeatable)",
    )
    p.add_argument("--tls-cert", help="PEM certificate file: serve HTTPS (needed off loopback)")
    p.add_argument("--tls-key", help="PEM private key file of --tls-cert")
    p.add_argument("--no-scheduler", action="store_true", help="do not run scheduled refreshes")
    params.engine_option(p)
    p.add_argument(
        "--query-log-retention",
        type=retention_argument,
        default=DEFAULT_RETENTION,
        metavar="DURATION",
        help=f"keep query-log records this long ('30d', '12h') or '{FOREVER}' "
        f"(default {DEFAULT_RETENTION}); small files are compacted either way",
    )
    p.add_argument(
        "--query-log-literals",
        choices=("keep", "blank"),
        default="keep",
        help="'blank' stores and shows SQL with its literals replaced by ? (default keep)",
    )
    params.spark_options(p)
    p.set_defaults(handler=serve)

    p = subparsers.add_parser("log", help="the query log: requests, fingerprints, rewrites")
    params.model_argument(p, "model file (its warehouse holds the log)")
    p.add_argument("--since", help="only since then: a duration ago ('2h', '7d') or ISO time")
    p.add_argument("--limit", type=params.whole_number, help="only the last N entries")
    params.json_option(p)
    p.add_argument(
        "--prune",
        type=lambda text: (text, retention_argument(text)),  # None is "forever", not unset
        metavar="DURATION",
        help=f"instead: delete records older than DURATION ('30d', or '{FOREVER}': none) "
        "and compact the log's files",
    )
    params.spark_options(p)
    p.set_defaults(handler=log)


def serve(args: argparse.Namespace) -> int:
    from mvlattice.http import server
    from mvlattice.http.security import check_binding, check_tls, read_token
    from mvlattice.http.service import Settings
    from mvlattice.jobs.vacuum import QUERY_TIMEOUT_CONF
    from mvlattice.querylog.writer import LogOptions

    token = read_token(args.token_file)
    tls = check_tls(args.tls_cert, args.tls_key)
    check_binding(args.host, token, tls is not None)  # before loading anything: fail fast
    named = _named(args.models)
    server.check_port(args.host, args.port)
    # Builds here vacuum no file a query this service allows could still be reading.
    conf = {**SERVE_CONF, QUERY_TIMEOUT_CONF: str(args.query_timeout)}
    workspaces = {name: _workspace(args, path, conf) for name, path in named}
    settings = Settings(
        token=token,
        max_body_bytes=args.max_body_bytes,
        max_rows=args.max_rows,
        allowed_hosts=tuple(args.allowed_host),
        bind_host=args.host,
        query_timeout=args.query_timeout,
        max_queries=max(1, args.max_queries),
        max_waiting=args.max_waiting,
        max_response_bytes=args.max_response_bytes,
        engine=args.engine,
        header_timeout=args.header_timeout,
        body_timeout=args.body_timeout,
        max_connections=args.max_connections,
        literals=args.query_log_literals,
    )
    log_options = LogOptions(retention=args.query_log_retention, literals=args.query_log_literals)
    server.serve(workspaces, host=args.host, port=args.port, settings=settings,
                 schedule=not args.no_scheduler, tls=tls, log_options=log_options)  # fmt: skip
    return 0


def log(args: argparse.Namespace) -> int:
    from mvlattice.querylog.log import parse_since, read_log

    since = parse_since(args.since)
    ws = _workspace(args, args.model)
    steps = Steps()  # on stderr: stdout is the log (one JSON document with --json)
    start_spark(steps, ws)
    if args.prune is not None:
        from mvlattice.querylog.retention import prune

        with steps.step(f"pruning and compacting the query log ({args.prune[0]})"):
            pruned = prune(ws.spark, ws.warehouse, args.prune[1])
        print(f"query log: {pruned.describe()}")
        return 0
    with steps.step("reading the query log") as say:
        records = read_log(ws.warehouse, since, spark=ws.spark)
        say(f"{len(records):,} entries" + (f" since {args.since}" if args.since else ""))
    if args.limit is not None:
        records = records[len(records) - args.limit :] if args.limit else ()
    if args.json:
        print(json_document({"entries": [r.to_json() for r in records]}))
        return 0
    columns = [
        "time",
        "source",
        "kind",
        "outcome",
        "rewritten",
        "views",
        "engine",
        "ms",
        "fingerprint",
        "sql",
    ]
    rows = [
        (
            r.time.strftime("%Y-%m-%d %H:%M:%S"),
            r.source,
            r.kind,
            r.outcome,
            "yes" if r.rewritten else "no",
            ",".join(r.views),
            r.engine,
            round(r.latency_ms, 1),
            r.fingerprint,
            r.sql if len(r.sql) <= SQL_WIDTH else r.sql[: SQL_WIDTH - 1] + "…",
        )
        for r in records
    ]
    print(table(columns, rows))
    return 0


def _workspace(
    args: argparse.Namespace, path: str, defaults: dict[str, str] | None = None
) -> Workspace:
    ws = params.workspace(args, path, defaults=defaults)
    if defaults is not None and ws.master == DEFAULT_MASTER:
        ws.master = SERVE_MASTER  # (Spark starts on first use, after this)
    return ws


# The service's Spark: jobs of concurrent queries share the cores (each query thread has its
# own pool). Client SQL runs in the sandbox's own session, where SQL on file paths is off.
SERVE_CONF = {
    "spark.scheduler.mode": "FAIR",
    # A query's answer is fetched a partition at a time (`sandbox.execution`); one partition
    # larger than this is refused (413), never held whole in the driver's heap.
    "spark.driver.maxResultSize": "256m",
    # Spark keeps each finished job's, stage's and SQL execution's status (plans and metrics:
    # the `long[]`/`SQLPlanMetric` seen filling a long-running driver's heap) up to these counts;
    # a service runs millions of queries and needs no more than the recent ones.
    "spark.sql.ui.retainedExecutions": "50",
    "spark.ui.retainedJobs": "100",
    "spark.ui.retainedStages": "100",
    "spark.ui.retainedTasks": "2000",
}
# Embedded, the service runs twice as many task slots as cores: a query whose few long tasks
# hold their slots (a cross join until its deadline) leaves slots for the next query, and the
# operating system shares the cores between them.
SERVE_MASTER = f"local[{2 * (os.cpu_count() or 1)}]"


def _named(paths: list[str]) -> list[tuple[str, str]]:
    """Each model under its file name's stem (a repeated stem gets -2, -3, …)."""
    out: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for path in paths:
        if not Path(path).is_file():
            raise UsageError(f"model file not found: {path}")
        stem = Path(path).stem
        seen[stem] = seen.get(stem, 0) + 1
        out.append((stem if seen[stem] == 1 else f"{stem}-{seen[stem]}", path))
    return out


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of seconds") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return value
