"""Outer joins without Spark: the normal form (what is kept, mirrored, simplified, refused)
and matching (the same join, inner from LEFT with IS NOT NULL, lossless LEFT joins)."""

from __future__ import annotations

import pytest

from mvlattice.errors import UnsupportedSqlError
from mvlattice.model.loader import Materialization
from mvlattice.mvrewrite.context import context_for, table_columns
from mvlattice.mvrewrite.index.filter_tree import candidate_positions
from mvlattice.mvrewrite.match.keys import keys_of
from mvlattice.mvrewrite.match.outer_joins import lossless
from mvlattice.mvrewrite.rewriter import rewrite
from mvlattice.sql import ir
from mvlattice.sql.from_sql import translate
from mvlattice.sql.outer_joins import FULL, LEFT, OuterJoin, non_null_columns, simplify
from mvlattice.sql.parse import parse_query, qualify_query, schema_of
from mvlattice.sql.spjg import Spjg, normalize
from tests.golden.rewrite import runner

D_DEPTNO, E_DEPTNO = ir.Column("d", "deptno"), ir.Column("e", "deptno")
ON = ir.Compare("=", D_DEPTNO, E_DEPTNO)
FIVE = ir.Literal("number", "5")


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory):
    return runner.hr_model(tmp_path_factory.mktemp("outer"))


def block(sql: str, model, outer_joins: bool = True) -> Spjg:
    schema = schema_of(table_columns(model))
    plan = translate(qualify_query(parse_query(sql), schema, runner.SCHEMA))
    return normalize(plan, outer_joins)


def context(model, **views: str):
    items = [
        Materialization(name=n, schema=runner.SCHEMA, table=n, sql=v) for n, v in views.items()
    ]
    return context_for(model, tiles=(), materializations=items, types=runner.HR_TYPES)


def rewritten(model, query: str, **views: str) -> str:
    return runner.outcome(rewrite(query, context(model, **views)))


# -- which filters reject a table's NULLs -----------------------------------------------------
@pytest.mark.parametrize(
    ("term", "columns"),
    [
        (ir.Compare("=", ir.Column("e", "x"), FIVE), {"x"}),
        (ir.Compare("<", FIVE, ir.Column("e", "x")), {"x"}),
        (ON, {"deptno"}),
        (ir.InList(ir.Column("e", "x"), (FIVE,)), {"x"}),
        (ir.Not(ir.IsNull(ir.Column("e", "x"))), {"x"}),
        (ir.Not(ir.Compare("=", ir.Column("e", "x"), FIVE)), {"x"}),
        (ir.IsNull(ir.Column("e", "x")), set()),  # keeps exactly the NULL rows
        (ir.Compare("<=>", ir.Column("e", "x"), FIVE), set()),  # NULL-safe: never NULL
        (
            ir.Or((ir.Compare("=", ir.Column("e", "x"), FIVE), ir.IsNull(ir.Column("e", "x")))),
            set(),
        ),
        (ir.Compare("=", ir.Column("d", "x"), FIVE), set()),  # another table
    ],
)
def test_non_null_columns(term: ir.Expr, columns: set[str]) -> None:
    assert non_null_columns(term, "e") == columns


def test_a_filter_rejecting_the_nulls_makes_the_left_join_inner() -> None:
    join = OuterJoin(LEFT, "e", (ON,))
    assert simplify((join,), ()) == ((join,), ())
    salary = ir.Compare(">", ir.Column("e", "salary"), FIVE)
    assert simplify((join,), (salary,)) == ((), (salary, ON))
    lets_null = ir.IsNull(ir.Column("e", "salary"))
    assert simplify((join,), (lets_null,)) == ((join,), (lets_null,))


def test_an_inner_on_from_a_made_inner_join_rejects_the_earlier_join() -> None:
    first = OuterJoin(LEFT, "e", (ON,))
    second = OuterJoin(
        LEFT, "p", (ir.Compare("=", ir.Column("e", "empid"), ir.Column("p", "empid")),)
    )
    budget = ir.Compare(">", ir.Column("p", "budget"), FIVE)
    outer, conjuncts = simplify((first, second), (budget,))
    assert outer == () and set(conjuncts) == {budget, ON, *second.on}


def test_a_full_join_narrows_to_the_side_the_filters_keep() -> None:
    full = OuterJoin(FULL, "e", (ON,), "d")
    keeps_e = ir.Compare(">", ir.Column("e", "salary"), FIVE)
    keeps_d = ir.Compare(">", D_DEPTNO, FIVE)
    assert simplify((full,), (keeps_e,))[0] == (OuterJoin(LEFT, "d", (ON,)),)
    assert simplify((full,), (keeps_d,))[0] == (OuterJoin(LEFT, "e", (ON,)),)
    assert simplify((full,), (keeps_d, keeps_e))[0] == ()


# -- the normal form --------------------------------------------------------------------------
def test_a_left_joins_on_is_not_a_filter(model) -> None:
    found = block(
        "SELECT d.deptno FROM depts d LEFT JOIN emps e ON d.deptno = e.deptno AND e.salary > 5 "
        "WHERE d.deptno > 1",
        model,
    )
    assert [t.rel for t in found.tables] == ["d", "e"]
    (join,) = found.outer
    assert join.kind == LEFT and join.rel == "e" and len(join.on) == 2
    assert found.conjuncts == (ir.Compare(">", D_DEPTNO, ir.Literal("number", "1")),)


def test_a_right_join_is_the_left_join_mirrored(model) -> None:
    found = block("SELECT d.deptno FROM emps e RIGHT JOIN depts d ON e.deptno = d.deptno", model)
    assert found.outer == (OuterJoin(LEFT, "e", (ir.Compare("=", E_DEPTNO, D_DEPTNO),)),)


def test_an_inner_join_after_a_left_join_rejects_its_nulls(model) -> None:
    found = block(
        "SELECT d.deptno FROM depts d LEFT JOIN emps e ON d.deptno = e.deptno "
        "JOIN locations l ON e.locationid = l.locationid",
        model,
    )
    assert found.outer == () and len(found.conjuncts) == 2


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT 1 AS x FROM emps e FULL JOIN projects p ON e.empid = p.empid CROSS JOIN depts d",
        "SELECT 1 AS x FROM depts d LEFT JOIN (SELECT deptno FROM emps) e ON d.deptno = e.deptno",
        "SELECT 1 AS x FROM emps e JOIN depts d ON e.deptno = d.deptno "
        "RIGHT JOIN projects p ON e.empid = p.empid",
        "SELECT 1 AS x FROM (SELECT d.deptno FROM depts d LEFT JOIN emps e "
        "ON d.deptno = e.deptno) t",
    ],
)
def test_outer_joins_outside_the_form_are_refused(sql: str, model) -> None:
    with pytest.raises(UnsupportedSqlError):
        block(sql, model)


def test_callers_may_refuse_every_outer_join(model) -> None:
    with pytest.raises(UnsupportedSqlError):
        block("SELECT d.deptno FROM depts d LEFT JOIN emps e ON d.deptno = e.deptno", model, False)


# -- lossless LEFT joins ------------------------------------------------------------------------
def test_a_left_join_on_a_not_null_foreign_key_to_a_primary_key_is_inner(model) -> None:
    keys = keys_of(model, {})
    found = lossless(
        block("SELECT e.empid FROM emps e LEFT JOIN depts d ON d.deptno = e.deptno", model), keys
    )
    assert found.outer == () and found.conjuncts == (ir.Compare("=", D_DEPTNO, E_DEPTNO),)
    for kept in (
        "SELECT p.projid FROM projects p LEFT JOIN emps e ON p.empid = e.empid",  # NULLable
        "SELECT d.deptno FROM depts d LEFT JOIN emps e ON d.deptno = e.deptno",  # the other way
        "SELECT e.empid FROM emps e LEFT JOIN depts d ON e.deptno = d.deptno AND d.deptno > 1",
    ):
        assert lossless(block(kept, model), keys).outer != ()


def test_a_left_join_from_a_null_supplying_table_is_not_lossless(model) -> None:
    """projects LEFT JOIN emps LEFT JOIN depts: emps.deptno is NOT NULL, but NULL in the rows
    the first join added, so the second join is not an inner join."""
    found = block(
        "SELECT p.projid FROM projects p LEFT JOIN emps e ON p.empid = e.empid "
        "LEFT JOIN depts d ON e.deptno = d.deptno",
        model,
    )
    assert len(lossless(found, keys_of(model, {})).outer) == 2


# -- matching -----------------------------------------------------------------------------------
def test_the_rows_a_left_join_added_are_dropped_by_the_joined_tables_own_column(model) -> None:
    """depts.deptno equals emps.deptno on a match, but not in department 40's added row: the
    filter must read the view's emps column, never the depts one the query holds equal."""
    view = (
        "SELECT d.deptno AS dd, e.deptno AS ed, e.salary "
        "FROM depts d LEFT JOIN emps e ON d.deptno = e.deptno"
    )
    found = rewritten(
        model, "SELECT d.deptno, e.salary FROM depts d JOIN emps e ON d.deptno = e.deptno", mv=view
    )
    assert "mv.ed IS NULL" in found and "mv.dd IS NULL" not in found
    only_depts = (
        "SELECT d.deptno AS dd, e.salary FROM depts d LEFT JOIN emps e ON d.deptno = e.deptno"
    )
    query = "SELECT d.deptno, e.salary FROM depts d JOIN emps e ON d.deptno = e.deptno"
    assert rewritten(model, query, mv=only_depts) == "NO REWRITE: MISSING_COLUMN"


def test_a_full_join_is_matched_only_by_the_same_full_join(model) -> None:
    view = "SELECT e.empid, p.projid FROM emps e FULL JOIN projects p ON e.empid = p.empid"
    same = "SELECT p.projid FROM projects p FULL JOIN emps e ON p.empid = e.empid"
    assert rewritten(model, same, mv=view).startswith("SELECT")
    for other in (
        "SELECT p.projid FROM emps e JOIN projects p ON e.empid = p.empid",
        "SELECT p.projid FROM emps e LEFT JOIN projects p ON e.empid = p.empid",
        "SELECT p.projid FROM projects p LEFT JOIN emps e ON p.empid = e.empid",
    ):
        assert rewritten(model, other, mv=view) == "NO REWRITE: OUTER_JOIN"


def test_a_query_with_an_outer_join_is_never_a_union_with_the_base_tables(model) -> None:
    view = (
        "SELECT d.deptno, e.empname FROM depts d LEFT JOIN emps e ON d.deptno = e.deptno "
        "WHERE d.deptno > 20"
    )
    query = "SELECT d.deptno, e.empname FROM depts d LEFT JOIN emps e ON d.deptno = e.deptno"
    assert rewritten(model, query, mv=view).startswith("NO REWRITE")


def test_the_filter_tree_keeps_the_views_an_outer_join_may_match(model) -> None:
    found_in = context(
        model,
        left="SELECT d.deptno, e.empid, e.empname FROM depts d LEFT JOIN emps e "
        "ON d.deptno = e.deptno",
        full="SELECT e.empid, e.empname, p.projid FROM emps e FULL JOIN projects p "
        "ON e.empid = p.empid",
        inner="SELECT e.empid, e.empname, e.deptno FROM emps e",
    )
    names = [v.name for v in found_in.views]

    def found(sql: str) -> set[str]:
        return {names[i] for i in candidate_positions(block(sql, model), found_in)}

    left_join = "SELECT d.deptno, e.empname FROM depts d LEFT JOIN emps e ON d.deptno = e.deptno"
    assert found(left_join) == {"left"}
    full_join = "SELECT e.empname, p.projid FROM emps e FULL JOIN projects p ON e.empid = p.empid"
    assert found(full_join) == {"full"}
    inner_join = "SELECT d.deptno, e.empname FROM depts d JOIN emps e ON d.deptno = e.deptno"
    assert "left" in found(inner_join) and "full" not in found(inner_join)
    lossless_join = "SELECT e.empname FROM emps e LEFT JOIN depts d ON e.deptno = d.deptno"
    assert "inner" in found(lossless_join)
