"""Time-grain rollup on Spark (issue 20, class 2): each positive case's original query on the
events table and its rewrite onto a view grouped by day, week or date return the same rows
(as multisets); the negative cases are not rewritten.

Views are Spark views over the Delta table, as in the golden integration tests: what is
checked is the rewrite's meaning, in the session time zone (UTC) mvlattice's sessions use.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.mvrewrite.rewriter import rewrite
from mvlattice.proof import compare
from tests.golden.rewrite import time_grain as cases

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def events(spark, warehouse: Path, tmp_path_factory: pytest.TempPathFactory):
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    location = str(warehouse / cases.SCHEMA / "events")
    frame = spark.createDataFrame(cases.ROWS, cases.DDL)
    frame.write.format("delta").mode("overwrite").save(location)
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {cases.SCHEMA}")
    spark.sql(f"CREATE TABLE IF NOT EXISTS {cases.SCHEMA}.events USING delta LOCATION '{location}'")
    previous = spark.catalog.currentDatabase()
    spark.catalog.setCurrentDatabase(cases.SCHEMA)
    try:
        for name, sql in cases.VIEWS.items():
            spark.sql(f"CREATE OR REPLACE VIEW {cases.SCHEMA}.{name} AS {sql}")
    finally:
        spark.catalog.setCurrentDatabase(previous)
    model = cases.model(tmp_path_factory.mktemp("time_grain"), warehouse)
    return spark, model


def _results(spark, queries: list[str]):
    previous = spark.catalog.currentDatabase()
    spark.catalog.setCurrentDatabase(cases.SCHEMA)
    try:
        return compare.results(spark, queries)
    finally:
        spark.catalog.setCurrentDatabase(previous)


def test_every_positive_case_returns_the_same_rows(events) -> None:
    spark, model = events
    queries: list[str] = []
    for view, query in cases.POSITIVE:
        result = rewrite(query, cases.context(model, view))
        assert result.rewritten, (query, result.explain)
        queries += [query, result.sql]
    found = _results(spark, queries)
    wrong = {
        cases.POSITIVE[i // 2][1]: (found[i], found[i + 1])
        for i in range(0, len(found), 2)
        if found[i] != found[i + 1]
    }
    assert wrong == {}
    assert all(found[i] for i in range(0, len(found), 2))  # no case is vacuous


def test_week_grain_would_be_wrong_for_months(events) -> None:
    """Why week never rolls into month: on this data month(week start) differs from month."""
    spark, _ = events
    original, from_weeks = _results(
        spark,
        [
            "SELECT month(ts) AS mo, COUNT(*) AS c FROM events GROUP BY month(ts)",
            "SELECT month(wk) AS mo, SUM(c) AS c FROM by_week GROUP BY month(wk)",
        ],
    )
    assert original != from_weeks


@pytest.mark.parametrize(("view", "query", "reason"), cases.NEGATIVE)
def test_no_rewrite(events, view: str, query: str, reason: str) -> None:
    _, model = events
    result = rewrite(query, cases.context(model, view))
    assert not result.rewritten and result.explain[0].reason == reason
