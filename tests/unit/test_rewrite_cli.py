"""`mvlattice rewrite` / `mvlattice query`: only queries get as far as the model (exit 2)."""

from __future__ import annotations

import pytest

from mvlattice.cli.main import build_parser, main


@pytest.mark.parametrize("command", ["rewrite", "query"])
@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("DELETE FROM foodmart.sales_fact_1997", "only queries"),
        ("SELEC the_year FROM x", "does not parse"),
        ("SELECT 1; SELECT 2", "one SQL statement"),
    ],
)
def test_not_a_query_is_exit_2(command: str, sql: str, message: str, capsys) -> None:
    assert main([command, "no-such-model.yaml", sql]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mvlattice: error:") and message in err
    assert len(err.strip().splitlines()) == 1


def test_the_commands_and_their_options_are_registered() -> None:
    parser = build_parser()
    args = parser.parse_args(["rewrite", "m.yaml", "SELECT 1", "--explain", "--json"])
    assert args.explain and args.json and args.handler.__name__ == "rewrite"
    args = parser.parse_args(["query", "m.yaml", "SELECT 1", "--no-rewrite", "--limit", "5"])
    assert args.no_rewrite and args.limit == 5 and args.handler.__name__ == "query"
