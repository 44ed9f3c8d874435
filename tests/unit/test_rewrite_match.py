"""Matching and the rewrite API without Spark: steps, choice, freshness, explanations."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mvlattice.errors import SqlError, UsageError
from mvlattice.jobs.availability import ViewState
from mvlattice.model.loader import Materialization
from mvlattice.mvrewrite.context import context_for
from mvlattice.mvrewrite.match import table_mapping
from mvlattice.mvrewrite.match.attempt import Rejection
from mvlattice.mvrewrite.match.gl01 import STEPS, match
from mvlattice.mvrewrite.rewriter import rewrite
from tests.golden.rewrite import runner

EMP_DEPT = "SELECT empid, deptno, COUNT(*) AS c, SUM(salary) AS s FROM emps GROUP BY empid, deptno"
DEPT = "SELECT deptno, COUNT(*) AS c, SUM(salary) AS s FROM emps GROUP BY deptno"
BY_DEPT = "SELECT deptno, SUM(salary) AS total FROM emps GROUP BY deptno"


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory):
    return runner.hr_model(tmp_path_factory.mktemp("match"))


def ctx(model, row_counts=None, types=None, **views: str):
    items = [
        Materialization(name=n, schema=runner.SCHEMA, table=n, sql=sql) for n, sql in views.items()
    ]
    return context_for(
        model,
        tiles=(),
        materializations=items,
        row_counts=row_counts,
        types=runner.HR_TYPES if types is None else types,
    )


class States:
    def __init__(self, **states: ViewState) -> None:
        self.states = states

    def state(self, table: str) -> ViewState:
        return self.states.get(table.split(".")[-1], ViewState(True, "FRESH"))


# -- the result -------------------------------------------------------------------------------
def test_result_document(model) -> None:
    result = rewrite(BY_DEPT, ctx(model, mv=EMP_DEPT))
    document = result.to_dict()
    assert list(document) == ["rewritten", "sql", "materializations", "explain"]
    assert document["rewritten"] is True
    assert document["materializations"] == ["mv"]
    assert document["explain"] == [
        {"view": "mv", "outcome": "used", "reason": "", "message": "reads ~100 rows"}
    ]
    assert "FROM hr_rewrite.mv AS mv" in document["sql"]


def test_not_rewritten_returns_the_query_exactly(model) -> None:
    sql = "select   empid from emps  -- as typed"
    result = rewrite(sql, ctx(model, mv=DEPT))
    assert not result.rewritten and result.sql == sql and result.materializations == ()
    (note,) = result.explain
    assert (note.view, note.outcome, note.reason) == ("mv", "rejected", "CANNOT_ROLL_UP")


def test_unsupported_sql_is_a_reason_not_an_error(model) -> None:
    result = rewrite("SELECT t.x FROM nowhere.t AS t", ctx(model, mv=DEPT))
    assert not result.rewritten
    assert result.explain[0].view is None and result.explain[0].reason == "UNSUPPORTED"
    assert "not in the model" in result.explain[0].message


def test_statements_other_than_queries_are_errors(model) -> None:
    with pytest.raises(UsageError):
        rewrite("DELETE FROM emps", ctx(model, mv=DEPT))
    with pytest.raises(SqlError):
        rewrite("SELEC 1", ctx(model, mv=DEPT))


def test_explain_false_records_nothing(model) -> None:
    result = rewrite(BY_DEPT, ctx(model, mv=EMP_DEPT), explain=False)
    assert result.rewritten and result.explain == ()


def test_output_names_keep_the_query_spelling(model) -> None:
    result = rewrite(
        "SELECT deptno AS DeptNo, SUM(salary) AS TotalPay FROM emps GROUP BY deptno",
        ctx(model, mv=EMP_DEPT),
    )
    assert "AS DeptNo" in result.sql and "AS TotalPay" in result.sql


# -- choice and freshness ---------------------------------------------------------------------
def test_the_view_reading_fewer_rows_is_chosen(model) -> None:
    views = {"fine": EMP_DEPT, "coarse": DEPT}
    result = rewrite(BY_DEPT, ctx(model, **views))
    assert result.materializations == ("coarse",)
    notes = {n.view: n for n in result.explain}
    assert notes["fine"].outcome == "matched" and notes["fine"].reason == "NOT_CHOSEN"
    assert "coarse reads" in notes["fine"].message
    counted = rewrite(BY_DEPT, ctx(model, row_counts={"hr_rewrite.fine": 5}, **views))
    assert counted.materializations == ("fine",)


def test_ties_break_by_name(model) -> None:
    result = rewrite(BY_DEPT, ctx(model, b_view=DEPT, a_view=DEPT))
    assert result.materializations == ("a_view",)


def test_a_stale_view_is_not_used(model) -> None:
    states = States(coarse=ViewState(False, "STALE", "sources changed 3 h ago"))
    result = rewrite(BY_DEPT, ctx(model, fine=EMP_DEPT, coarse=DEPT), states)
    assert result.materializations == ("fine",)
    stale = next(n for n in result.explain if n.view == "coarse")
    assert stale.reason == "STALE" and "sources changed 3 h ago" in stale.message


def test_missing_views_are_not_available(model) -> None:
    states = States(coarse=ViewState(False, "MISSING"))
    result = rewrite(BY_DEPT, ctx(model, coarse=DEPT), states)
    assert not result.rewritten and result.explain[0].reason == "NOT_AVAILABLE"


def test_stale_but_within_tolerance_is_used(model) -> None:
    states = States(coarse=ViewState(True, "STALE_ACCEPTED"))
    assert rewrite(BY_DEPT, ctx(model, coarse=DEPT), states).rewritten


# -- steps ------------------------------------------------------------------------------------
def test_the_steps_run_in_the_papers_order() -> None:
    names = [s.__module__.rsplit(".", 1)[-1] for s in STEPS]
    assert names == [
        "outer_joins",
        "cardinality",
        "equivalence",
        "range_subsumption",
        "residual_subsumption",
        "output_mapping",
        "rollup",
        "union_compensation",
        "outer_joins",
    ]


def test_self_joins_try_every_mapping(model) -> None:
    context = ctx(
        model,
        mv="SELECT a.empid AS e1, b.empid AS e2 FROM emps a JOIN emps b ON a.deptno = b.deptno",
    )
    query = context.views[0].block
    attempts = table_mapping.mappings(query, context.views[0], context.keys)
    assert not isinstance(attempts, Rejection)
    assert {frozenset(a.mapping) for a in attempts} == {
        frozenset({("a", "a"), ("b", "b")}),
        frozenset({("a", "b"), ("b", "a")}),
    }


def test_query_partial_needs_a_lossless_join(model) -> None:
    lossless = ctx(model, mv="SELECT empid, deptname FROM emps JOIN depts USING (deptno)")
    assert rewrite("SELECT empid FROM emps WHERE empid > 3", lossless).rewritten
    lossy = ctx(model, mv="SELECT projid, deptno FROM projects JOIN emps USING (empid)")
    result = rewrite("SELECT projid FROM projects", lossy)
    assert result.explain[0].reason == "EXTRA_TABLE"
    assert "hr_rewrite.emps" in result.explain[0].message


def test_messages_name_the_predicate_and_the_column(model) -> None:
    narrow = ctx(model, mv="SELECT empid, salary FROM emps WHERE salary > 12000")
    (note,) = rewrite("SELECT empid FROM emps WHERE deptno = 3", narrow).explain
    assert note.reason == "MISSING_COLUMN" and "emps.deptno" in note.message
    (note,) = rewrite("SELECT empid FROM emps WHERE salary < 3", narrow).explain
    assert note.reason == "PREDICATE_NOT_IMPLIED"
    assert "emps.salary > 12000" in note.message and "emps.salary < 3" in note.message
    (note,) = rewrite(
        "SELECT deptno, MAX(salary) FROM emps GROUP BY deptno", ctx(model, mv=DEPT)
    ).explain
    assert note.reason == "CANNOT_ROLL_UP" and "MAX(emps.salary)" in note.message


# -- AVG and types ----------------------------------------------------------------------------
AVG_VIEW = (
    "SELECT empid, deptno, SUM(salary) AS s, COUNT(salary) AS cs, SUM(locationid) AS sl, "
    "COUNT(locationid) AS cl FROM emps GROUP BY empid, deptno"
)


def test_avg_of_a_decimal_is_cast_like_sparks(model) -> None:
    result = rewrite(
        "SELECT deptno, AVG(salary) FROM emps GROUP BY deptno", ctx(model, mv=AVG_VIEW)
    )
    assert (
        "CAST(CAST(SUM(mv.s) AS DECIMAL(28, 2)) / CAST(SUM(mv.cs) AS DECIMAL(20, 0)) "
        "AS DECIMAL(22, 6))" in result.sql
    )


def test_avg_of_an_integer_is_a_division(model) -> None:
    result = rewrite(
        "SELECT deptno, AVG(locationid) FROM emps GROUP BY deptno", ctx(model, mv=AVG_VIEW)
    )
    assert "SUM(mv.sl) / SUM(mv.cl)" in result.sql


def test_avg_of_an_unknown_type_is_not_rebuilt(model) -> None:
    result = rewrite(
        "SELECT deptno, AVG(salary) FROM emps GROUP BY deptno", ctx(model, types={}, mv=AVG_VIEW)
    )
    assert not result.rewritten and result.explain[0].reason == "CANNOT_ROLL_UP"
    assert "type is unknown" in result.explain[0].message


def test_match_returns_a_value_for_every_view(model) -> None:
    context = ctx(model, a=DEPT, b="SELECT locationid FROM locations")
    query = context.views[0].block
    results = [match(query, v, context.keys) for v in context.views]
    assert not isinstance(results[0], Rejection)
    assert isinstance(results[1], Rejection) and results[1].reason == "TABLES_NOT_CONTAINED"


def test_the_scan_of_the_view_is_named_apart_from_joined_back_tables(model) -> None:
    context = ctx(model, mv="SELECT empid, deptno, locationid FROM emps")
    result = rewrite(
        "SELECT mv.state, empid FROM emps JOIN locations AS mv ON emps.locationid = mv.locationid",
        context,
    )
    assert (
        "FROM hr_rewrite.mv AS mv2" in result.sql
        and "JOIN hr_rewrite.locations AS mv" in result.sql
    )


def test_the_rewriter_never_imports_spark() -> None:
    """Pure core: matching and SQL generation need no SparkSession (STYLE §1)."""
    package = Path(rewrite.__code__.co_filename).parent
    for module in sorted(package.glob("*.py")):
        tree = ast.parse(module.read_text())
        imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        imported += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert not [m for m in imported if m.split(".")[0] == "pyspark"], module.name
