"""Inputs the differential tester (bench/difftest.py) and the rewriter fuzzer
(tests/unit/test_fuzz_rewriter.py, bench/fuzz.py) found to crash or mis-rewrite, each pinned
down here without Spark."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.model.loader import Materialization
from mvlattice.mvrewrite.context import context_for
from mvlattice.mvrewrite.rewriter import RewriteContext, rewrite
from tests.golden.rewrite import runner


@pytest.fixture(scope="module")
def hr(tmp_path_factory: pytest.TempPathFactory) -> RewriteContext:
    model = runner.hr_model(Path(tmp_path_factory.mktemp("regressions")))
    views = {"mv_emps": "SELECT empid, deptno, salary FROM emps"}
    items = [
        Materialization(name=n, schema=runner.SCHEMA, table=n, sql=sql) for n, sql in views.items()
    ]
    return context_for(model, tiles=(), materializations=items, types=runner.HR_TYPES)


def test_a_select_without_outputs_is_not_rewritten(hr: RewriteContext) -> None:
    """Fuzzing: `SELECT FROM emps` (a deleted token) raised ValueError from the IR."""
    for sql in ("SELECT FROM emps", "SELECT FROM emps WHERE empid > 1"):
        result = rewrite(sql, hr)
        assert not result.rewritten and result.sql == sql
        assert [e.message for e in result.explain] == [
            "a SELECT without output columns is not rewritten"
        ]


def test_an_identifier_with_a_newline_gives_one_line_explanations(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Fuzzing: a quoted identifier holding a newline (here the alias of emps) put a line
    break in an explanation naming the column."""
    model = runner.hr_model(Path(tmp_path_factory.mktemp("newline")))
    view = Materialization(
        name="mv_dept",
        schema=runner.SCHEMA,
        table="mv_dept",
        sql="SELECT deptno, COUNT(*) AS c FROM emps GROUP BY deptno",
    )
    context = context_for(model, tiles=(), materializations=[view], types=runner.HR_TYPES)
    sql = "SELECT deptno FROM emps`\n`WHERE salary < 5000 GROUP BY deptno"
    result = rewrite(sql, context)
    assert not result.rewritten and result.explain
    for note in result.explain:
        assert "\n" not in note.message
    assert any("\\n" in note.message for note in result.explain)


def test_sqlglot_crashing_on_db_dot_dot_dot_table_is_not_rewritable(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Fuzzing: `foodmart...product` made sqlglot's qualifier raise AttributeError."""
    model = runner.foodmart_model(Path(tmp_path_factory.mktemp("dots")))
    context = context_for(model, tiles=(), materializations=(), types={})
    sql = "WITH q AS (SELECT 1 AS a FROM foodmart...product p) SELECT * FROM q"
    result = rewrite(sql, context)
    assert not result.rewritten and result.sql == sql
    assert result.explain[0].reason == "UNSUPPORTED"
    assert result.explain[0].message.startswith(
        "the query could not be resolved against the model: "
    )


def test_an_unnamed_output_with_an_empty_string_literal(hr: RewriteContext) -> None:
    """Fuzzing (`''.the_year`), and valid SQL too: naming the output `concat(empname, )`
    as Spark does raised ValueError (sqlglot's exp.var refuses an empty name)."""
    result = rewrite("SELECT concat(empname, '') FROM emps", hr)
    assert not result.rewritten  # mv_emps lacks empname
    assert rewrite("SELECT ''.empid FROM emps", hr).explain  # no crash (Spark rejects it)
    result = rewrite("SELECT concat(CAST(empid AS STRING), '') FROM emps", hr)
    assert result.rewritten
    assert "AS `concat(CAST(empid AS STRING), )`" in result.sql


def test_an_output_with_a_list_of_aliases_is_not_rewritten(hr: RewriteContext) -> None:
    """Fuzzing: `COUNT(salary) (salary)` parses as a multi-alias; its rewrite did not parse."""
    sql = "SELECT COUNT(*), COUNT(salary) (salary) FROM emps"
    result = rewrite(sql, hr)
    assert not result.rewritten and result.sql == sql
    assert result.explain[0].message == "an output with a list of aliases is not rewritten"
