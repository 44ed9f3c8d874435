"""`mvlattice rewrite` / `mvlattice query`: only queries get as far as the model (exit 2)."""

from __future__ import annotations

import pytest

from mvlattice.cli import cmd_rewrite
from mvlattice.cli.main import build_parser, main
from mvlattice.mvrewrite.rewriter import Engine, QueryResult, RewriteResult


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


@pytest.mark.parametrize("command", [["query", "m.yaml", "SELECT 1"], ["serve", "m.yaml"]])
def test_engine_is_auto_unless_spark_is_asked(command: list[str], capsys) -> None:
    parser = build_parser()
    assert parser.parse_args(command).engine == "auto"
    assert parser.parse_args([*command, "--engine", "spark"]).engine == "spark"
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args([*command, "--engine", "duckdb"])
    assert exit_.value.code == 2
    assert "invalid choice: 'duckdb' (choose from" in capsys.readouterr().err


def result(engine: Engine, reason: str = "", views: tuple[str, ...] = ()) -> QueryResult:
    how = RewriteResult(bool(views), "select 1", views)
    return QueryResult(("n",), ((1,),), how, 4.2, engine, reason)


def test_the_text_answer_says_which_engine_answered(monkeypatch, capsys) -> None:
    answers = iter([
        result(Engine.LOCAL, views=("mvlattice.t1",)),
        result(Engine.SPARK, "the tile is larger than the tile engine reads", ("mvlattice.t1",)),
        result(Engine.SPARK),
    ])  # fmt: skip
    asked: list[str] = []

    class Stub:
        def query(self, sql: str, **options) -> QueryResult:
            asked.append(options["engine"])
            return next(answers)

    monkeypatch.setattr(cmd_rewrite.params, "workspace", lambda args: Stub())
    for extra in ([], ["--engine", "spark"], []):
        assert main(["query", "m.yaml", "select n from t", "--no-log", *extra]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("-- ")]
    assert lines == [
        "-- read mvlattice.t1 on the tile engine; 4 ms",
        "-- read mvlattice.t1 on Spark (the tile is larger than the tile engine reads); 4 ms",
        "-- read base tables on Spark; 4 ms",
        "-- not rewritten: no tile or materialized view is built yet (`mvlattice materialize` "
        "builds them)",
        '-- every view\'s reason: mvlattice rewrite m.yaml "…" --explain; the tile that would '
        "answer queries like it: mvlattice advise m.yaml",
    ]
    assert asked == ["auto", "spark", "auto"]


def test_a_miss_names_the_view_that_came_closest_and_why(monkeypatch, capsys) -> None:
    from mvlattice.mvrewrite.match.attempt import Reason
    from mvlattice.mvrewrite.rewriter import REJECTED, Explanation

    explain = (
        Explanation("mvlattice.by_year", REJECTED, Reason.EXTRA_TABLE, "reads store"),
        Explanation("mvlattice.by_month", REJECTED, Reason.CANNOT_ROLL_UP, "count(distinct x)"),
        Explanation("mvlattice.old", REJECTED, Reason.STALE, "source changed"),
    )
    miss = QueryResult(("n",), ((1,),), RewriteResult(False, "select 1", (), explain), 4.2,
                       Engine.SPARK, "")  # fmt: skip
    options: dict = {}

    class Stub:
        def query(self, sql: str, **asked) -> QueryResult:
            options.update(asked)
            return miss

    monkeypatch.setattr(cmd_rewrite.params, "workspace", lambda args: Stub())
    assert main(["query", "m.yaml", "select n from t", "--no-log"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("-- ")]
    # The rule the Queries page and advise name the nearest view by: one that matched and is
    # only stale is nearer than one lacking a measure (mvrewrite.closest).
    assert lines[1] == "-- not rewritten: the closest view, mvlattice.old: STALE: source changed"
    assert options["explain"] is True
    assert main(["query", "m.yaml", "select n from t", "--no-log", "--no-rewrite"]) == 0
    assert [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("-- ")] == [
        "-- read base tables on Spark; 4 ms"
    ]
