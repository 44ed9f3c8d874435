"""The options several commands share, declared once, and the one way a command opens its
workspace (in the manner of dbt-core's `cli/params.py`).

Command modules import this module, never `cli.main`: main imports the command modules.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path

from mvlattice.cli.steps import Steps
from mvlattice.errors import UsageError
from mvlattice.model.peek import warehouse_of
from mvlattice.settings import is_uri
from mvlattice.workspace import Workspace

MODEL_HELP = "model file (YAML or JSON)"


def model_argument(p: argparse.ArgumentParser, text: str = MODEL_HELP) -> None:
    p.add_argument("model", help=text)


def json_option(p: argparse.ArgumentParser, text: str = "print a JSON document") -> None:
    p.add_argument("--json", action="store_true", help=text)


def no_index_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-index",
        action="store_true",
        help="match every view, not only the filter tree's candidates (same result; slower)",
    )


ENGINES = ("auto", "spark")  # `Workspace.query(engine=…)`: what may answer a query


def engine_option(p: argparse.ArgumentParser) -> None:
    """--engine auto|spark (`query` and `serve`)."""
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default="auto",
        help="who answers: 'auto' lets the tile engine (in the driver) answer small "
        "queries that read only tiles, else Spark; 'spark' always Spark (default auto)",
    )


def spark_options(p: argparse.ArgumentParser) -> None:
    """--warehouse, --master and --conf: where the tables are and the Spark that reads them."""
    p.add_argument(
        "--warehouse",
        help="warehouse directory or URI (default $MVLATTICE_WAREHOUSE or ./warehouse)",
    )
    p.add_argument(
        "--master",
        help="Spark master (default $MVLATTICE_MASTER, $SPARK_MASTER, "
        "the model's spark.master, or local[*])",
    )
    p.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        type=conf_pair,
        help="a Spark setting; repeat for several",
    )


def workspace(
    args: argparse.Namespace,
    model: str | Path | None = None,
    *,
    warehouse: str | None = None,
    defaults: Mapping[str, str] | None = None,
    built: bool = False,
) -> Workspace:
    """The workspace of `model` (default: the `model` argument) with the command's Spark options;
    `warehouse` overrides --warehouse, `defaults` are Spark settings --conf may override.
    `built`: the command reads what was built, so a warehouse that does not exist is a mistake.
    Names and paths are checked here, before Spark's start-up: a typo costs a second, not a
    minute."""
    model = args.model if model is None else model
    warehouse = args.warehouse if warehouse is None else warehouse
    if built:
        _check_built(warehouse_of(model, warehouse))
    ws = Workspace(
        model,
        warehouse=warehouse,
        master=args.master,
        conf={**(defaults or {}), **dict(args.conf)},
        on_spark_start=Steps().say,  # Spark's start-up is never a silent wait
    )
    lattice = getattr(args, "lattice", None)
    if isinstance(lattice, str):
        ws.model.lattice(lattice)  # a misspelt name: its one line, with the closest name
    return ws


def _check_built(warehouse: str) -> None:
    if not is_uri(warehouse) and not Path(warehouse).is_dir():
        raise UsageError(
            f"warehouse {warehouse} does not exist: nothing was built there (check "
            "--warehouse or $MVLATTICE_WAREHOUSE; `mvlattice materialize` builds one)"
        )


def conf_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"'{text}' is not KEY=VALUE")
    return key.strip(), value


def whole_number(text: str) -> int:
    """An argument that is a whole number, zero or more."""
    return _integer(text, 0, "must be zero or more")


def at_least_one(text: str) -> int:
    """An argument that is a whole number, 1 or more."""
    return _integer(text, 1, "must be at least 1")


def port(text: str) -> int:
    value = whole_number(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError("a port is 1 to 65535")
    return value


def _integer(text: str, minimum: int, below: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(below)
    return value
