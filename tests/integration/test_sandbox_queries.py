"""The sandbox on real Spark: every query the differential generator makes — and its rewrite
onto tiles and materializations — passes and answers what Spark answers; what only Spark's
plan shows (commands, path relations, reflection, scripts) is refused before anything runs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from mvlattice.errors import RefusedSqlError
from mvlattice.model.loader import load_model
from mvlattice.mvrewrite.rewriter import rewrite
from mvlattice.proof import difftest, querygen
from mvlattice.proof.stars import SYNTHETIC
from mvlattice.sandbox.sandbox import Sandbox

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def prepared(spark, warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    folder = tmp_path_factory.mktemp("sandbox_queries")
    database = spark.catalog.currentDatabase()
    ready = difftest.prepare(spark, SYNTHETIC, str(warehouse), folder, seed=7, tiles=2, mvs=2)
    spark.catalog.setCurrentDatabase(database)
    model = load_model(folder / f"{SYNTHETIC.name}.yaml", str(warehouse))
    yield ready, Sandbox(spark, model, timeout=120.0)
    difftest.release(ready)


def test_generated_queries_and_their_rewrites_pass_and_answer_alike(spark, prepared) -> None:
    ready, sandbox = prepared
    assert ready.problems == ()
    rewritten = 0
    for seed in range(3000, 3060):
        sql = querygen.query(ready.shape, ready.specs, seed)
        result = rewrite(sql, ready.context, explain=False)
        rewritten += result.rewritten
        for text in (sql, result.sql):
            sandbox.check(text)  # never refused: only the model's relations, plain SQL
        if seed % 6 == 0:  # and what runs in the sandbox equals Spark on the same SQL
            columns, rows = sandbox.run(result.sql, None)
            assert Counter(rows) == Counter(tuple(r) for r in spark.sql(sql).collect()), sql
    assert rewritten >= 15


@pytest.mark.parametrize(
    "sql, says",
    [
        ("SET spark.sql.shuffle.partitions=7", "only queries"),
        ("ADD JAR /tmp/nothing.jar", "only queries"),
        ("CACHE TABLE stolen AS SELECT 1", "only queries"),
        ("CREATE TEMPORARY FUNCTION f AS 'x.Y'", "only queries"),
        ("SELECT TRANSFORM(1) USING 'id' AS (o STRING)", "TRANSFORM"),
        ("SELECT reflect('java.lang.System', 'getProperty', 'user.home')", "reflect"),
        ("SELECT * FROM delta.`{sales}`", "file or path"),
        ("SELECT count(*) FROM range(100000000000)", "range"),
    ],
)
def test_what_only_spark_sees_is_refused_before_it_runs(
    spark, prepared, sql: str, says: str
) -> None:
    _, sandbox = prepared
    partitions = sandbox.session.conf.get("spark.sql.shuffle.partitions")
    sales = spark.sql("DESCRIBE DETAIL difft.sales").first()["location"]
    with pytest.raises(RefusedSqlError, match=says):
        sandbox.run(sql.format(sales=sales), 10)
    assert sandbox.session.conf.get("spark.sql.shuffle.partitions") == partitions
    assert sandbox.session.conf.get("spark.sql.runSQLOnFiles") == "false"
    assert not sandbox.session.catalog.tableExists("stolen")
