"""`mvlattice …`: a thin command line over the Python API. Errors map to exit codes here.

Exit codes: 0 success, 2 bad input (model, SQL, arguments), 1 anything else.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from mvlattice.cli import (
    cmd_advise,
    cmd_jobs,
    cmd_plan,
    cmd_profile,
    cmd_rewrite,
    cmd_serve,
    cmd_suggest,
    commands,
)
from mvlattice.cli.examples import add_examples
from mvlattice.cli.params import spark_options, whole_number
from mvlattice.errors import MvlatticeError, UsageError

# Modules that add commands, in the order `--help` lists them: each has `register(subparsers)`
# adding its parsers, each parser with `set_defaults(handler=...)`.
COMMAND_MODULES = (cmd_plan, cmd_jobs, cmd_suggest, cmd_serve, cmd_profile, cmd_rewrite, cmd_advise)

Handler = Callable[[argparse.Namespace], int]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage and the reason
        return 0 if exc.code == 0 else 2
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    return run(handler, args)


def run(handler: Handler, args: argparse.Namespace) -> int:
    try:
        return handler(args)
    except MvlatticeError as exc:
        print(f"mvlattice: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("mvlattice: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - last line of defence: one line, no traceback
        if os.environ.get("MVLATTICE_DEBUG"):
            traceback.print_exc()
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        print(
            f"mvlattice: internal error: {type(exc).__name__}: {first} "
            "(set MVLATTICE_DEBUG=1 for details)",
            file=sys.stderr,
        )
        return 1


class _Version(argparse.Action):
    """`--version`: one line, unwrapped (argparse's own action wraps it at the terminal)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(version_line())
        parser.exit()


def version_line() -> str:
    """mvlattice's version and the versions of what it runs on (no Spark started)."""
    from importlib.metadata import PackageNotFoundError, version

    def of(package: str) -> str:
        try:
            return version(package)
        except PackageNotFoundError:
            return "not installed"

    parts = ", ".join(f"{p} {of(p)}" for p in ("pyspark", "delta-spark", "sqlglot", "duckdb"))
    return f"mvlattice {of('mvlattice')} ({parts}; Python {sys.version.split()[0]})"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mvlattice",
        description="Materialized views and lattices for Apache Spark and Delta Lake.",
    )
    parser.add_argument("--version", action=_Version, help="print the versions and exit")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")

    p = sub.add_parser(
        "setup", help="fetch Delta's jars (and the FoodMart data and query set) once"
    )
    p.add_argument("--no-data", action="store_true", help="skip fetching the FoodMart artifact")
    p.set_defaults(handler=commands.setup)

    p = sub.add_parser("datasets", help="load a bundled data set into the warehouse")
    p.add_argument(
        "dataset",
        choices=["foodmart", "foodmart-queries"],
        help="the data set to load (foodmart-queries: print where its query log is)",
    )
    p.add_argument("--force", action="store_true", help="reload even if already loaded")
    spark_options(p)
    p.set_defaults(handler=commands.datasets)

    p = sub.add_parser("validate", help="check a model file (and, with --data, its data)")
    p.add_argument("model", help="model file (YAML or JSON)")
    p.add_argument(
        "--data",
        action="store_true",
        help="also check declared and implied keys and foreign keys on the data",
    )
    p.add_argument("--json", action="store_true", help="print a JSON document")
    spark_options(p)
    p.set_defaults(handler=commands.validate)

    p = sub.add_parser("sql", help="run SQL over the model's tables")
    p.add_argument("model", help="model file (YAML or JSON)")
    p.add_argument("query", help="the SQL text (Spark SQL; tables as schema.table)")
    p.add_argument(
        "--json", action="store_true", help='print {"columns": [...], "rows": [[...], ...]}'
    )
    p.add_argument("--limit", type=whole_number, default=None, help="return at most N rows")
    spark_options(p)
    p.set_defaults(handler=commands.sql)

    p = sub.add_parser("demo", help="the main job end to end on FoodMart (embedded Spark)")
    spark_options(p)
    p.set_defaults(handler=commands.demo)
    for module in COMMAND_MODULES:
        module.register(sub)
    add_examples(sub)
    return parser


__all__ = ["main", "UsageError"]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
