"""The seven rewriting examples of Calcite's materialized-view page, on Delta tables.

emps/depts/locations (with NULLs, repeated values, a department and a location without
employees) are Delta tables; each example's view is materialized as a Delta table by running
its SQL; each query rewrites as the page documents, and the original and the rewrite return
the same rows. Column types come from the Delta logs, as in a workspace.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.model.loader import Materialization
from mvlattice.mvrewrite.context import context_for
from mvlattice.mvrewrite.rewriter import rewrite
from tests.golden.rewrite import runner

pytestmark = pytest.mark.spark

# name: (view, query, what the rewrite must read besides the view)
EXAMPLES = {
    "join": (
        "SELECT empid FROM emps JOIN depts USING (deptno)",
        "SELECT empid FROM depts JOIN (SELECT empid, deptno FROM emps WHERE empid = 1) AS subq "
        "ON depts.deptno = subq.deptno",
        (),
    ),
    "aggregate": (
        "SELECT empid, deptno FROM emps WHERE deptno > 5 GROUP BY empid, deptno",
        "SELECT deptno FROM emps WHERE deptno > 10 GROUP BY deptno",
        (),
    ),
    "rollup": (
        "SELECT empid, deptno, COUNT(*) AS c, SUM(salary) AS s FROM emps GROUP BY empid, deptno",
        "SELECT deptno, COUNT(*) AS c, SUM(salary) AS s FROM emps GROUP BY deptno",
        (),
    ),
    "query_partial": (
        "SELECT empid, depts.deptno, COUNT(*) AS c, SUM(salary) AS s FROM emps "
        "JOIN depts USING (deptno) GROUP BY empid, depts.deptno",
        "SELECT deptno, COUNT(*) FROM emps GROUP BY deptno",
        (),
    ),
    "view_partial": (
        "SELECT empid, deptno, state, SUM(salary) AS s FROM emps "
        "JOIN locations ON emps.locationid = locations.locationid GROUP BY empid, deptno, state",
        "SELECT deptname, state, SUM(salary) AS s FROM emps "
        "JOIN depts ON emps.deptno = depts.deptno "
        "JOIN locations ON emps.locationid = locations.locationid GROUP BY deptname, state",
        ("hr_rewrite.depts",),
    ),
    "union": (
        "SELECT empid, deptname FROM emps JOIN depts ON emps.deptno = depts.deptno "
        "WHERE salary > 12000",
        "SELECT empid, deptname FROM emps JOIN depts ON emps.deptno = depts.deptno "
        "WHERE salary > 10000",
        ("hr_rewrite.emps", "UNION ALL"),
    ),
    "union_aggregate": (
        "SELECT empid, deptname, SUM(salary) AS s FROM emps JOIN depts "
        "ON emps.deptno = depts.deptno WHERE salary > 12000 GROUP BY empid, deptname",
        "SELECT empid, deptname, SUM(salary) AS s FROM emps JOIN depts "
        "ON emps.deptno = depts.deptno WHERE salary > 10000 GROUP BY empid, deptname",
        ("hr_rewrite.emps", "UNION ALL"),
    ),
}


@pytest.fixture(scope="module")
def views(spark, warehouse: Path, tmp_path_factory: pytest.TempPathFactory):
    """The model (tables under the run's warehouse) and each example's view as a Delta table."""
    folder = runner.load_hr_tables(spark, warehouse)
    model = runner.hr_model(tmp_path_factory.mktemp("calcite"), warehouse)
    previous = spark.catalog.currentDatabase()
    spark.catalog.setCurrentDatabase(runner.SCHEMA)
    try:
        for name, (view, _, _) in EXAMPLES.items():
            location = folder / f"calcite_{name}"
            spark.sql(f"DROP TABLE IF EXISTS calcite_{name}")
            spark.sql(f"CREATE TABLE calcite_{name} USING delta LOCATION '{location}' AS {view}")
    finally:
        spark.catalog.setCurrentDatabase(previous)
    return model


def test_each_example_rewrites_and_returns_the_same_rows(spark, views) -> None:
    pairs = {}
    for name, (view, query, reads) in EXAMPLES.items():
        item = Materialization(name=name, schema=runner.SCHEMA, table=f"calcite_{name}", sql=view)
        result = rewrite(query, context_for(views, tiles=(), materializations=[item]))
        assert result.rewritten, (name, result.explain)
        assert result.materializations == (name,)
        assert f"FROM hr_rewrite.calcite_{name} AS mv" in result.sql
        for word in reads:
            assert word in result.sql, name
        if not reads:
            assert "JOIN" not in result.sql and "UNION" not in result.sql, name
        pairs[name] = (query, result.sql)
    assert runner.differences(spark, pairs) == {name: 0 for name in EXAMPLES}
    over = runner.rows(spark, EXAMPLES["union_aggregate"][1])
    assert len(over) == 6  # 3 rows from the view (> 12000), 3 from the base tables


def test_the_types_came_from_the_delta_logs(views) -> None:
    context = context_for(views, tiles=(), materializations=())
    assert context.keys.type_of("hr_rewrite.emps", "salary") == "decimal(18,2)"
    assert context.keys.type_of("hr_rewrite.emps", "empid") == "int"
