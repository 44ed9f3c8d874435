"""Lossless casts (issue 20, class 4) without Spark: which casts keep every value, the column
read back through a widened view output, and rewrites onto views holding such casts (lossy
ones never)."""

from __future__ import annotations

import pytest

from mvlattice.mvrewrite.match import lossless_cast
from mvlattice.mvrewrite.rewriter import rewrite
from mvlattice.sql import ir
from tests.golden.rewrite import lossless_cast as cases


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory):
    return cases.model(tmp_path_factory.mktemp("lossless_cast"))


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("tinyint", "smallint"), ("smallint", "INT"), ("int", "BIGINT"), ("integer", "long"),
        ("int", "DECIMAL(10,0)"), ("int", "DECIMAL(12,2)"), ("bigint", "DECIMAL(19,0)"),
        ("tinyint", "DECIMAL(3,0)"), ("smallint", "FLOAT"), ("int", "DOUBLE"),
        ("float", "DOUBLE"), ("decimal(10,2)", "DECIMAL(12,4)"),
        ("decimal(10,2)", "DECIMAL(20, 2)"),
        ("decimal(9,0)", "INT"), ("decimal(18,0)", "BIGINT"), ("decimal", "DECIMAL(10,0)"),
        ("int", "int"), ("numeric(5,1)", "DEC(6,2)"),
    ],
)  # fmt: skip
def test_widening_is_lossless(source: str, target: str) -> None:
    assert lossless_cast.lossless(source, target)


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("bigint", "INT"), ("int", "SMALLINT"), ("int", "DECIMAL(9,0)"), ("int", "DECIMAL(11,2)"),
        ("bigint", "DECIMAL(18,0)"), ("bigint", "DOUBLE"), ("int", "FLOAT"), ("double", "FLOAT"),
        ("double", "INT"), ("float", "INT"), ("decimal(10,2)", "DECIMAL(10,1)"),
        ("decimal(10,2)", "DECIMAL(11,4)"), ("decimal(10,2)", "DOUBLE"), ("decimal(10,2)", "INT"),
        ("decimal(10,0)", "INT"), ("decimal(19,0)", "BIGINT"), ("string", "INT"),
        ("int", "STRING"), ("date", "TIMESTAMP"), ("timestamp", "BIGINT"), ("boolean", "INT"),
        ("int", "DECIMAL(40,0)"), ("mystery", "BIGINT"),
    ],
)  # fmt: skip
def test_narrowing_and_other_casts_are_lossy(source: str, target: str) -> None:
    assert not lossless_cast.lossless(source, target)


def _cast(term: ir.Expr, to: str, op: str = "TryCast") -> ir.Expr:
    return ir.Func(op, (("this", term), ("to", ir.TypeName(to))))


def test_widened_reads_the_column_back_in_its_own_type() -> None:
    c, v = ir.Column("n", "i"), ir.Column("mv", "ib")
    found = lossless_cast.widened({_cast(c, "BIGINT"): v}, lambda column: "int")
    assert found == {c: lossless_cast.cast(v, ir.TypeName("INT"))}
    assert lossless_cast.widened({_cast(c, "SMALLINT"): v}, lambda column: "int") == {}
    assert lossless_cast.widened({_cast(c, "BIGINT"): v}, lambda column: None) == {}


def test_a_cast_with_a_format_is_not_the_column() -> None:
    c, v = ir.Column("n", "i"), ir.Column("mv", "ib")
    formatted = ir.Func(
        "TryCast",
        (("this", c), ("to", ir.TypeName("BIGINT")), ("format", ir.Literal("string", "x"))),
    )
    assert lossless_cast.widened({formatted: v}, lambda column: "int") == {}


# -- rewrites ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("view", "query"), cases.POSITIVE)
def test_widened_view_columns_answer(model, view: str, query: str) -> None:
    result = rewrite(query, cases.context(model, view))
    assert result.rewritten, result.explain
    assert f"{cases.SCHEMA}.{view} AS mv" in result.sql
    assert "nums" not in result.sql


@pytest.mark.parametrize(("view", "query", "reason"), cases.NEGATIVE)
def test_lossy_casts_do_not(model, view: str, query: str, reason: str) -> None:
    result = rewrite(query, cases.context(model, view))
    assert not result.rewritten, result.sql
    assert result.explain[0].reason == reason


def test_the_column_is_cast_back_to_its_type(model) -> None:
    query = "SELECT i, COUNT(*) AS c FROM nums WHERE i = 5 GROUP BY i"
    result = rewrite(query, cases.context(model, "by_ib"))
    assert "CAST(mv.ib AS INT) AS i" in result.sql
    assert "CAST(mv.ib AS INT) = 5" in result.sql


def test_without_column_types_nothing_is_read_through_a_cast(model) -> None:
    query = "SELECT i, COUNT(*) AS c FROM nums GROUP BY i"
    result = rewrite(query, cases.context(model, "by_ib", types={}))
    assert not result.rewritten
