"""Properties over generated SPJG queries on emps/depts/locations.

- A view identical to the query rewrites to a plain scan of the view.
- The cheap filter conditions never reject a view that full matching would use.
"""

from __future__ import annotations

import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from mvlattice.model.loader import Materialization
from mvlattice.mvrewrite import prefilter
from mvlattice.mvrewrite.context import context_for
from mvlattice.mvrewrite.match.attempt import Rejection
from mvlattice.mvrewrite.match.gl01 import match
from mvlattice.mvrewrite.rewriter import rewrite
from tests.golden.rewrite import runner

JOINS = {
    "depts": "JOIN depts ON emps.deptno = depts.deptno",
    "locations": "JOIN locations ON emps.locationid = locations.locationid",
}
PREDICATES = {
    None: [
        "emps.salary > 9000",
        "emps.salary BETWEEN 100 AND 20000",
        "emps.deptno IN (10, 20)",
        "emps.empname LIKE 'B%'",
        "emps.salary IS NOT NULL",
        "emps.empid <> 3",
    ],
    "depts": ["depts.deptname = 'Sales'", "depts.deptno < 40"],
    "locations": ["locations.state IS NULL OR locations.state = 'CA'"],
}
KEYS = {
    None: ["emps.deptno", "emps.locationid", "emps.empname"],
    "depts": ["depts.deptname"],
    "locations": ["locations.state"],
}
AGGREGATES = [
    "COUNT(*)",
    "SUM(emps.salary)",
    "MIN(emps.empid)",
    "MAX(emps.salary)",
    "COUNT(DISTINCT emps.empname)",
    "AVG(emps.salary)",
]
COLUMNS = ["emps.empid", "emps.salary", "emps.salary * 2", "emps.empname"]


@st.composite
def queries(draw: st.DrawFn) -> str:
    tables = draw(st.lists(st.sampled_from(sorted(JOINS)), unique=True, max_size=2))
    scopes = [None, *tables]
    where = draw(
        st.lists(
            st.sampled_from([p for s in scopes for p in PREDICATES[s]]), unique=True, max_size=3
        )
    )
    grouped = draw(st.booleans())
    if grouped:
        keys = draw(
            st.lists(st.sampled_from([k for s in scopes for k in KEYS[s]]), unique=True, max_size=3)
        )
        aggs = draw(st.lists(st.sampled_from(AGGREGATES), unique=True, min_size=1, max_size=3))
        items = keys + aggs
    else:
        keys = []
        items = draw(
            st.lists(st.sampled_from(COLUMNS + KEYS[None]), unique=True, min_size=1, max_size=4)
        )
    select = ", ".join(f"{item} AS o{i}" for i, item in enumerate(items))
    sql = f"SELECT {select} FROM emps " + " ".join(JOINS[t] for t in tables)
    if where:
        sql += " WHERE " + " AND ".join(f"({p})" for p in where)
    if keys:
        sql += " GROUP BY " + ", ".join(keys)
    return sql


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory):
    return runner.hr_model(tmp_path_factory.mktemp("property"))


def context(model, **views: str):
    items = [
        Materialization(name=n, schema=runner.SCHEMA, table=n, sql=sql) for n, sql in views.items()
    ]
    return context_for(model, tiles=(), materializations=items, types=runner.HR_TYPES)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(queries())
def test_a_view_identical_to_the_query_is_a_plain_scan(model, sql: str) -> None:
    result = rewrite(sql, context(model, mv=sql))
    assert result.rewritten, result.explain
    tree = sqlglot.parse_one(result.sql, read="spark")
    assert isinstance(tree, exp.Select)
    assert tree.args["from_"].this.sql(dialect="spark") == "hr_rewrite.mv AS mv"
    for clause in ("joins", "where", "group", "having", "order", "limit", "distinct"):
        assert not tree.args.get(clause), clause
    outputs = [(e.this.sql(dialect="spark"), e.alias) for e in tree.expressions]
    assert outputs == [(f"mv.o{i}", f"o{i}") for i in range(len(outputs))]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(queries(), queries())
def test_the_filter_conditions_never_reject_a_usable_view(model, sql: str, view_sql: str) -> None:
    ctx = context(model, q=sql, v=view_sql)
    query, view = ctx.views[0].block, ctx.views[1]
    quick = prefilter.reject(prefilter.Summary.of(query), view, ctx.summaries[1])
    if quick is not None:
        assert isinstance(match(query, view, ctx.keys), Rejection)
