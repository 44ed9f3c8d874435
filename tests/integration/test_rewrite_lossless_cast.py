"""Lossless casts on Spark (issue 20, class 4): each positive case's original query on the
numbers table and its rewrite onto a view holding widened casts return the same rows (as
multisets, Python types included: a column read back through a cast keeps its type); the
negative cases are not rewritten.

Views are Spark views over the Delta table, as in the golden integration tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.mvrewrite.rewriter import rewrite
from mvlattice.proof import compare
from tests.golden.rewrite import lossless_cast as cases

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def nums(spark, warehouse: Path, tmp_path_factory: pytest.TempPathFactory):
    location = str(warehouse / cases.SCHEMA / "nums")
    frame = spark.createDataFrame(cases.ROWS, cases.DDL)
    frame.write.format("delta").mode("overwrite").save(location)
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {cases.SCHEMA}")
    spark.sql(f"CREATE TABLE IF NOT EXISTS {cases.SCHEMA}.nums USING delta LOCATION '{location}'")
    previous = spark.catalog.currentDatabase()
    spark.catalog.setCurrentDatabase(cases.SCHEMA)
    try:
        for name, sql in cases.VIEWS.items():
            spark.sql(f"CREATE OR REPLACE VIEW {cases.SCHEMA}.{name} AS {sql}")
    finally:
        spark.catalog.setCurrentDatabase(previous)
    model = cases.model(tmp_path_factory.mktemp("lossless_cast"), warehouse)
    return spark, model


def _results(spark, queries: list[str]):
    previous = spark.catalog.currentDatabase()
    spark.catalog.setCurrentDatabase(cases.SCHEMA)
    try:
        return compare.results(spark, queries)
    finally:
        spark.catalog.setCurrentDatabase(previous)


def _typed(rows) -> list[tuple]:
    """Rows with each value's Python type beside it (1 == 1.0 == Decimal(1) otherwise)."""
    return sorted((tuple((type(v).__name__, repr(v)) for v in row) for row in rows), key=repr)


def test_every_positive_case_returns_the_same_rows(nums) -> None:
    spark, model = nums
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


# SUM(amount) re-summed from a view's SUM widens the decimal precision (rollup's concern,
# not this class's): those outputs are compared by value and Python type only.
SUMS = ("s", "a")


def test_types_are_the_query_types(nums) -> None:
    """The rewrite's columns have the query's Spark types, and its rows the same Python
    values and types."""
    spark, model = nums
    previous = spark.catalog.currentDatabase()
    spark.catalog.setCurrentDatabase(cases.SCHEMA)
    try:
        for view, query in cases.POSITIVE:
            rewritten = rewrite(query, cases.context(model, view)).sql
            before, after = spark.sql(query), spark.sql(rewritten)
            pairs = zip(before.schema, after.schema, strict=True)
            kept = [(a.dataType, b.dataType) for a, b in pairs if a.name not in SUMS]
            assert all(a == b for a, b in kept), (query, kept)
            assert _typed(after.collect()) == _typed(before.collect()), query
    finally:
        spark.catalog.setCurrentDatabase(previous)


def test_lossy_casts_would_be_wrong(nums) -> None:
    """Why BIGINT -> DOUBLE and a smaller decimal scale are not the column: on this data they
    merge values the column keeps apart."""
    spark, _ = nums
    [rows] = _results(
        spark,
        [
            "SELECT COUNT(DISTINCT b) AS b, COUNT(DISTINCT CAST(b AS DOUBLE)) AS bd, "
            "COUNT(DISTINCT d) AS d, COUNT(DISTINCT CAST(d AS DECIMAL(10,1))) AS d1 FROM nums"
        ],
    )
    [row] = rows
    assert row[0] > row[1] and row[2] > row[3]


@pytest.mark.parametrize(("view", "query", "reason"), cases.NEGATIVE)
def test_no_rewrite(nums, view: str, query: str, reason: str) -> None:
    _, model = nums
    result = rewrite(query, cases.context(model, view))
    assert not result.rewritten and result.explain[0].reason == reason
