"""`mvlattice rewrite` and `mvlattice query`: queries onto tiles and materialized views."""

from __future__ import annotations

import argparse
import time

from mvlattice.cli import params
from mvlattice.mvrewrite.closest import miss_reason
from mvlattice.mvrewrite.rewriter import Engine, QueryResult, RewriteResult
from mvlattice.output import json_document, table
from mvlattice.sql.parse import parse_query
from mvlattice.workspace import Workspace


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "rewrite", help="rewrite a query onto tiles and materialized views (nothing runs)"
    )
    params.model_argument(p)
    p.add_argument("query", help="the SQL query (SELECT or WITH; tables as schema.table)")
    p.add_argument(
        "--explain", action="store_true", help="say, for every view, why it was or was not used"
    )
    params.no_index_option(p)
    params.json_option(p, 'print {"rewritten", "sql", "materializations", "explain": [...]}')
    params.spark_options(p)
    p.set_defaults(handler=rewrite)

    p = subparsers.add_parser("query", help="run a query, rewritten onto tiles when possible")
    params.model_argument(p)
    p.add_argument("query", help="the SQL query (SELECT or WITH; tables as schema.table)")
    p.add_argument("--no-rewrite", action="store_true", help="run the query as written")
    params.no_index_option(p)
    params.json_option(
        p,
        'print {"columns", "rows", "rewritten", "materializations", "elapsed_ms", "engine", '
        '"engine_reason"}',
    )
    params.engine_option(p)
    p.add_argument("--limit", type=params.whole_number, default=None, help="return at most N rows")
    p.add_argument(
        "--no-log",
        action="store_true",
        help="do not record the query in the query log (which materialize plans by)",
    )
    params.spark_options(p)
    p.set_defaults(handler=query)


def rewrite(args: argparse.Namespace) -> int:
    tree = parse_query(args.query)  # not a query: exit 2 before anything starts
    result = params.workspace(args).rewrite(
        args.query, explain=args.explain or args.json, use_index=not args.no_index, tree=tree
    )
    if args.json:
        print(json_document(result.to_dict()))
        return 0
    if not result.rewritten:
        print("-- not rewritten")
    print(result.sql)
    if args.explain:
        rows = [(e.view or "-", e.outcome, e.reason, e.message) for e in result.explain]
        print()
        print(table(["view", "outcome", "reason", "message"], rows))
    return 0


def query(args: argparse.Namespace) -> int:
    tree = parse_query(args.query)  # not a query: exit 2 before anything starts
    ws = params.workspace(args)
    started = time.time()
    result = ws.query(
        args.query,
        rewrite=not args.no_rewrite,
        limit=args.limit,
        use_index=not args.no_index,
        tree=tree,
        engine=args.engine,
        explain=True,  # a miss says why (text: the closest view's reason; --json: every view)
    )
    if not args.no_log:
        _log(ws, args, started, result)
    if args.json:
        print(json_document(result.to_dict()))
        return 0
    print(table(list(result.columns), list(result.rows)))
    used = ", ".join(result.rewrite.materializations) or "base tables"
    print(f"-- read {used} {answered_by(result)}; {result.elapsed_ms:.0f} ms")
    if not args.no_rewrite and not result.rewrite.rewritten:
        for line in miss_lines(result.rewrite, str(args.model)):
            print(f"-- {line}")
    return 0


def miss_lines(result: RewriteResult, model: str) -> list[str]:
    """Why a query was not rewritten, and where to look next."""
    return [
        f"not rewritten: {miss_reason(result)}",
        f'every view\'s reason: mvlattice rewrite {model} "…" --explain; the tile that would '
        f"answer queries like it: mvlattice advise {model}",
    ]


def answered_by(result: QueryResult) -> str:
    """'on the tile engine' or 'on Spark', with why Spark answered a rewritten query."""
    if result.engine == Engine.LOCAL:
        return "on the tile engine"
    return f"on Spark ({result.engine_reason})" if result.engine_reason else "on Spark"


def _log(ws: Workspace, args: argparse.Namespace, started: float, result: QueryResult) -> None:
    """Record the query as the service would, so `materialize` can plan for what is asked."""
    from mvlattice.errors import Outcome
    from mvlattice.querylog.log import Request, log_now

    rewrite = result.rewrite
    request = Request(
        at=started,
        sql=args.query,
        kind="query",
        rewritten=rewrite.rewritten,
        views=tuple(rewrite.materializations),
        latency_ms=result.elapsed_ms,
        outcome=Outcome.OK,
        source="cli",
        model=str(args.model),
        engine=str(result.engine),
    )
    log_now(ws.spark, ws.warehouse, [request])
