"""The outer-join golden cases can fail: on the golden data, each rewrite a careless matcher
would make for a NO REWRITE case of outer_joins.txt (or without the IS NOT NULL it adds)
returns other rows than the query. So the positive cases' agreement on Spark means something.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden.rewrite import runner

pytestmark = pytest.mark.spark

GOLDEN = runner.load(runner.HERE / "outer_joins.txt")

# name: (query, the careless rewrite)
CARELESS = {
    "inner join read from a LEFT JOIN view without IS NOT NULL (department 40)": (
        "SELECT d.deptname, e.empname FROM depts d JOIN emps e ON d.deptno = e.deptno",
        "SELECT deptname, empname FROM mv_de",
    ),
    "IS NOT NULL on the preserved side's equal column": (
        "SELECT d.deptno, e.salary FROM depts d JOIN emps e ON d.deptno = e.deptno",
        "SELECT deptno, salary FROM mv_d_salary WHERE deptno IS NOT NULL",
    ),
    "a NULL foreign key kept by the LEFT JOIN view": (
        "SELECT p.projid, e.empname FROM projects p JOIN emps e ON p.empid = e.empid",
        "SELECT projid, empname FROM mv_pe",
    ),
    "a LEFT JOIN onto a repeated key taken as lossless": (
        "SELECT e.empid, e.empname FROM emps e",
        "SELECT empid, empname FROM mv_ep",
    ),
    "the view's ON-clause filter taken for a WHERE filter": (
        "SELECT d.deptname, e.empid FROM depts d LEFT JOIN emps e ON d.deptno = e.deptno "
        "WHERE e.salary > 13000 OR e.salary IS NULL",
        "SELECT deptname, empid FROM mv_de_on WHERE salary > 13000 OR salary IS NULL",
    ),
    "the anti-join over a view whose ON filters": (
        "SELECT d.deptno FROM depts d LEFT JOIN emps e ON d.deptno = e.deptno "
        "WHERE e.empid IS NULL",
        "SELECT deptno FROM mv_de_on WHERE empid IS NULL",
    ),
    "an inner join read from a FULL JOIN view": (
        "SELECT e.empname, p.projid FROM emps e JOIN projects p ON e.empid = p.empid",
        "SELECT empname, projid FROM mv_ep_full WHERE empid IS NOT NULL",
    ),
    "an inner join rolled up from an aggregated LEFT JOIN view": (
        "SELECT d.deptno, COUNT(e.empid) AS n FROM depts d JOIN emps e "
        "ON d.deptno = e.deptno GROUP BY d.deptno",
        "SELECT deptno, SUM(c) AS n FROM mv_de_agg GROUP BY deptno",
    ),
    "a LEFT JOIN on a NULLable foreign key read from an inner-join view": (
        "SELECT p.projid, e.empname FROM projects p LEFT JOIN emps e ON p.empid = e.empid",
        "SELECT projid, empname FROM mv_pe_inner",
    ),
    "a RIGHT JOIN read in the wrong direction": (
        "SELECT e.empname, p.projid FROM projects p RIGHT JOIN emps e ON p.empid = e.empid",
        "SELECT empname, projid FROM mv_pe",
    ),
}


@pytest.fixture(scope="module")
def hr(spark, warehouse: Path):
    runner.load_hr_tables(spark, warehouse)
    previous = spark.catalog.currentDatabase()
    spark.catalog.setCurrentDatabase(runner.SCHEMA)
    try:
        for name, sql in GOLDEN.views.items():
            spark.sql(f"CREATE OR REPLACE VIEW {runner.SCHEMA}.{name} AS {sql}")
    finally:
        spark.catalog.setCurrentDatabase(previous)
    return spark


def test_every_careless_rewrite_returns_other_rows(hr) -> None:
    found = runner.differences(hr, CARELESS)
    assert {name for name, diff in found.items() if diff == 0} == set()
