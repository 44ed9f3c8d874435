"""Every positive golden case, run on Spark: the original query and its rewrite return the
same rows (as multisets) over emps/depts/locations with NULLs, duplicates and empty groups.

Views are Spark views over the Delta tables (the rewrite reads them like materialized tables;
what is checked is the rewrite's meaning). All cases are compared in one Spark job.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden.rewrite import runner

pytestmark = pytest.mark.spark

POSITIVE = [(g, c) for g in runner.golden_files() for c in g.cases if c.positive]


@pytest.fixture(scope="module")
def hr(spark, warehouse: Path):
    runner.load_hr_tables(spark, warehouse)
    views = {name: golden.views[name] for golden, case in POSITIVE for name in case.views}
    previous = spark.catalog.currentDatabase()
    spark.catalog.setCurrentDatabase(runner.SCHEMA)
    try:
        for name, sql in views.items():
            spark.sql(f"CREATE OR REPLACE VIEW {runner.SCHEMA}.{name} AS {sql}")
    finally:
        spark.catalog.setCurrentDatabase(previous)
    return spark


def test_every_positive_case_returns_the_same_rows(hr) -> None:
    pairs = {f"{case.id}": (case.query, case.expected) for _, case in POSITIVE}
    found = runner.differences(hr, pairs)
    wrong = {name: diff for name, diff in found.items() if diff}
    assert len(found) == len(pairs) >= 40
    assert wrong == {}


def test_the_comparison_can_fail(hr) -> None:
    """The check itself detects a wrong rewrite (a lost row, a duplicated row)."""
    found = runner.differences(
        hr,
        {
            "lost": ("SELECT empid FROM emps", "SELECT empid FROM emps WHERE empid > 1"),
            "doubled": (
                "SELECT deptno FROM emps",
                "SELECT deptno FROM emps UNION ALL SELECT deptno FROM emps WHERE empid = 1",
            ),
            "same": ("SELECT deptno FROM emps", "SELECT deptno FROM emps ORDER BY empid"),
        },
    )
    assert found == {"lost": 1, "doubled": 1, "same": 0}


def test_every_positive_case_has_the_same_names_and_types(hr) -> None:
    """A rewrite returns what the query returns, column types included: a SUM of a DECIMAL
    re-summed from a view's SUMs is cast back to the DECIMAL(p + 10, s) of the original SUM."""
    differ = {}
    for _, case in POSITIVE:
        original, rewritten = (_types(hr, sql) for sql in (case.query, case.expected))
        if original != rewritten:
            differ[case.id] = (original, rewritten)
    assert differ == {}


def _types(spark, sql: str) -> list[tuple[str, str]]:
    with runner._schema(spark):
        return [(f.name, f.dataType.simpleString()) for f in spark.sql(sql).schema.fields]
