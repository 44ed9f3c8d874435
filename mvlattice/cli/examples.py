"""One or two examples per command, shown at the end of its `--help`."""

from __future__ import annotations

import argparse

M = "models/foodmart.yaml"

EXAMPLES: dict[str, tuple[str, ...]] = {
    "setup": ("mvlattice setup", "mvlattice setup --no-data   # Delta's jars only"),
    "datasets": ("mvlattice datasets foodmart --warehouse ./warehouse",),
    "validate": (f"mvlattice validate {M}", f"mvlattice validate {M} --data   # keys on the data"),
    "sql": (f'mvlattice sql {M} "select count(*) from foodmart.sales_fact_1997" --limit 10',),
    "demo": ("mvlattice demo",),
    "plan": (
        f"mvlattice plan {M} --max-tiles 8",
        f"mvlattice plan {M} --max-share 5% --workload queries.sql --format dot > plan.dot",
    ),
    "materialize": (f"mvlattice materialize {M}", f"mvlattice materialize {M} --max-bytes 2GB"),
    "tiles": (f"mvlattice tiles {M}", f"mvlattice tiles {M} --json"),
    "refresh": (f"mvlattice refresh {M} --dry-run", f"mvlattice refresh {M} --lattice star"),
    "schedule": (f"mvlattice schedule {M} --list", f"mvlattice schedule {M}   # Ctrl-C stops"),
    "gc": (f"mvlattice gc {M} --dry-run", f"mvlattice gc {M} --unused-for 30d"),
    "profile": (f"mvlattice profile {M} --max-size 2",),
    "suggest": (
        "mvlattice suggest --log queries.sql -o model.yaml",
        f"mvlattice suggest --log queries.sql --model {M} -o {M}",
    ),
    "serve": (
        f"mvlattice serve {M}   # http://127.0.0.1:8765/ui/",
        f"mvlattice serve {M} --host 0.0.0.0 --token-file token --query-timeout 30",
    ),
    "log": (f"mvlattice log {M} --since 2h", f"mvlattice log {M} --prune 30d"),
    "rewrite": (
        f'mvlattice rewrite {M} "select the_year, count(*) from foodmart.sales_fact_1997 '
        'join foodmart.time_by_day using (time_id) group by the_year" --explain',
    ),
    "query": (
        f'mvlattice query {M} "select the_year, count(*) from foodmart.sales_fact_1997 '
        'join foodmart.time_by_day using (time_id) group by the_year"',
        f'mvlattice query {M} "…" --no-rewrite --json   # the same on the base tables',
    ),
    "advise": (f"mvlattice advise {M} --since 7d",),
}


def add_examples(subcommands: argparse._SubParsersAction) -> None:
    """Every command's `--help` ends with its examples (argparse keeps the lines as written)."""
    for name, parser in subcommands.choices.items():
        lines = EXAMPLES.get(name, ())
        if lines:
            parser.epilog = "examples:\n" + "\n".join(f"  {line}" for line in lines)
            parser.formatter_class = argparse.RawDescriptionHelpFormatter
