"""The tile engine against Spark on the same Delta tables: each golden case is one place where
DuckDB's and Spark's semantics differ (types of SUM and AVG, NULL ordering, division, string
order, timestamps, rounding, LIMIT among ties), and the engine must either give exactly what
Spark gives — values and Python types — or refuse, so that Spark answers."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

from mvlattice.engine.tile_engine import LocalAnswer, TileEngine
from mvlattice.jobs.catalog import ApprovedSnapshot
from mvlattice.model.fast_path import FastPath
from mvlattice.sql.refusal import Refusal

pytestmark = pytest.mark.spark

DB = "golden_engine"
DDL = "k STRING, g INT, n INT, big BIGINT, d DECIMAL(10,2), x DOUBLE, day DATE, ts TIMESTAMP"
ROWS = [
    ("a", 1, 5, 9223372036854775000, Decimal("1.25"), 0.1, dt.date(1997, 1, 1),
     dt.datetime(1997, 1, 1, 12, 30, 15)),
    ("B", 1, None, 9223372036854775000, Decimal("-1.25"), 0.2, dt.date(1997, 6, 30),
     dt.datetime(1997, 6, 30, 0, 0, 1)),
    ("é", 2, 7, 1, Decimal("1.35"), 0.3, dt.date(1998, 2, 1), None),
    (None, None, 0, 2, None, None, None, dt.datetime(1970, 1, 1)),
    ("z", 2, 3, 3, Decimal("0.05"), 1e300, dt.date(1998, 12, 31), dt.datetime(2030, 5, 5, 5)),
    ("a", 3, 0, 4, Decimal("-0.05"), -0.5, dt.date(1997, 1, 1), dt.datetime(1997, 1, 1)),
]  # fmt: skip


@pytest.fixture(scope="module")
def golden(spark, warehouse: Path) -> ApprovedSnapshot:
    location = warehouse / "golden_engine" / "t"
    spark.createDataFrame(ROWS, DDL).coalesce(1).write.format("delta").mode("overwrite").save(
        str(location)
    )
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {DB}")
    spark.sql(f"CREATE TABLE IF NOT EXISTS {DB}.t USING DELTA LOCATION '{location}'")
    return ApprovedSnapshot(location=str(location), version=0, rows=len(ROWS), size_bytes=10_000)


@pytest.fixture(scope="module")
def engine() -> TileEngine:
    return TileEngine(FastPath())


def local(engine: TileEngine, spark, golden: ApprovedSnapshot, sql: str) -> LocalAnswer | Refusal:
    return engine.answer(sql, {f"{DB}.t": golden}, lambda text: spark.sql(text).schema)


def assert_identical(engine: TileEngine, spark, golden: ApprovedSnapshot, sql: str) -> None:
    """Same columns, same rows in the same order (the cases order totally), same types."""
    answer = local(engine, spark, golden, sql)
    assert isinstance(answer, LocalAnswer), answer
    frame = spark.sql(sql)
    expected = [tuple(r) for r in frame.collect()]
    assert answer.columns == tuple(frame.columns)
    assert [[type(v) for v in r] for r in answer.rows] == [[type(v) for v in r] for r in expected]
    assert [[_exact(v) for v in r] for r in answer.rows] == [
        [_exact(v) for v in r] for r in expected
    ]


def _exact(value: object) -> object:
    """Decimals by their digits and scale (1.50 is not 1.5 here: JSON shows the difference)."""
    return str(value) if isinstance(value, Decimal) else value


T = f"{DB}.t AS mv"


@pytest.mark.parametrize(
    "sql",
    [
        # NULL ordering: Spark sorts NULLs first ascending and last descending
        f"SELECT mv.k, mv.g FROM {T} ORDER BY mv.k, mv.g",
        f"SELECT mv.k, mv.g FROM {T} ORDER BY mv.k DESC, mv.g DESC",
        # SUM of DECIMAL(10,2) is DECIMAL(20,2) in Spark, DECIMAL(38,2) in DuckDB
        f"SELECT mv.g, SUM(mv.d) AS s FROM {T} GROUP BY mv.g ORDER BY mv.g",
        # SUM of INT is BIGINT in Spark, HUGEINT in DuckDB; COUNT of NULLs
        f"SELECT mv.g, SUM(mv.n) AS s, COUNT(mv.n) AS c, COUNT(*) AS r FROM {T} "
        "GROUP BY mv.g ORDER BY mv.g",
        # AVG of INT: Spark sums DOUBLEs; the empty group's AVG is NULL
        f"SELECT mv.g, AVG(mv.n) AS a FROM {T} GROUP BY mv.g ORDER BY mv.g",
        # integer division is DOUBLE in both
        f"SELECT mv.k, mv.g, mv.n / mv.g AS q FROM {T} WHERE mv.g > 0 ORDER BY mv.k, mv.g, q",
        # strings compare by bytes: 'B' < 'a' < 'z' < 'é'
        f"SELECT mv.k FROM {T} WHERE mv.k > 'B' ORDER BY mv.k",
        f"SELECT MIN(mv.k) AS lo, MAX(mv.k) AS hi FROM {T}",
        # timestamps come back as PySpark makes them; dates against ISO literals
        f"SELECT mv.ts, mv.day FROM {T} WHERE mv.day >= '1997-06-30' ORDER BY mv.ts, mv.day",
        # DECIMAL rounding half away from zero, negatives included
        f"SELECT mv.d, CAST(mv.d AS DECIMAL(4, 1)) AS r FROM {T} ORDER BY mv.d",
        # LIMIT under an ORDER BY of every output column: the same rows among ties
        f"SELECT mv.k, mv.g FROM {T} ORDER BY mv.k, mv.g LIMIT 3",
        f"SELECT COUNT(DISTINCT mv.k) AS c FROM {T}",
        f"SELECT mv.g, mv.k IS NULL AS missing FROM {T} ORDER BY mv.g, missing",
    ],
)
def test_the_tile_engine_answers_as_spark_does(engine, spark, golden, sql: str) -> None:
    assert_identical(engine, spark, golden, sql)


def test_sums_of_doubles_are_doubles_within_rounding(engine, spark, golden) -> None:
    sql = f"SELECT mv.g, SUM(mv.x) AS s FROM {T} WHERE mv.x < 1 GROUP BY mv.g ORDER BY mv.g"
    answer = local(engine, spark, golden, sql)
    assert isinstance(answer, LocalAnswer), answer
    expected = [tuple(r) for r in spark.sql(sql).collect()]
    assert [type(r[1]) for r in answer.rows] == [type(r[1]) for r in expected]
    for got, want in zip(answer.rows, expected, strict=True):
        assert got[0] == want[0]
        assert got[1] == pytest.approx(want[1], rel=1e-12)


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        # Spark divides decimals exactly at a computed scale; DuckDB in DOUBLE
        (f"SELECT mv.d / mv.g AS q FROM {T}", "division of DECIMALs"),
        (f"SELECT AVG(mv.d) AS a FROM {T}", "AVG of a DECIMAL"),
        # which of the tied rows LIMIT keeps is each engine's own choice
        (f"SELECT mv.k FROM {T} ORDER BY mv.g LIMIT 1", "LIMIT without ORDER BY"),
        # DuckDB's || and CONCAT treat NULL differently from Spark's
        (f"SELECT CONCAT(mv.k, 'x') AS c FROM {T}", "CONCAT"),
        # a string compared with a number: each engine coerces its own way
        (f"SELECT mv.k FROM {T} WHERE mv.k = 1", "different kinds"),
        # SUM beyond BIGINT: Spark fails (ANSI), DuckDB's HUGEINT would answer
        (f"SELECT SUM(mv.big) AS s FROM {T}", "beyond Spark's type"),
        # division by zero: Spark fails (ANSI), DuckDB would say infinity
        (f"SELECT mv.g / mv.n AS q FROM {T} WHERE mv.g = 3", "DuckDB failed"),
        # a table freshness did not approve
        ("SELECT COUNT(*) AS c FROM golden_engine.other", "not a fresh tile"),
    ],
)
def test_what_is_not_proven_identical_is_refused(engine, spark, golden, sql, why) -> None:
    answer = local(engine, spark, golden, sql)
    assert isinstance(answer, Refusal)
    assert why in answer.reason


def test_spark_fails_where_the_engine_refused_for_a_failure(spark, golden) -> None:
    """The refusals above for overflow and division by zero are Spark's errors, not answers."""
    from pyspark.errors import ArithmeticException

    for sql in (f"SELECT SUM(mv.big) AS s FROM {T}", f"SELECT mv.g / mv.n FROM {T} WHERE mv.g = 3"):
        with pytest.raises(ArithmeticException):
            spark.sql(sql).collect()


def test_the_engine_reads_exactly_the_approved_version(engine, spark, golden, warehouse) -> None:
    """A newer commit is not read until freshness approves it; the cache keeps one version of a
    table and never more bytes than its budget."""
    location = Path(golden.location).parent / "versions"
    spark.createDataFrame([(1,)], "v INT").write.format("delta").mode("overwrite").save(
        str(location)
    )
    spark.createDataFrame([(2,)], "v INT").write.format("delta").mode("overwrite").save(
        str(location)
    )
    spark.sql(f"CREATE TABLE IF NOT EXISTS {DB}.versions USING DELTA LOCATION '{location}'")
    small = TileEngine(FastPath(cache_bytes=10_000))
    sql = f"SELECT mv.v FROM {DB}.versions AS mv"
    for version, value in ((0, 1), (1, 2), (0, 1)):
        snap = ApprovedSnapshot(location=str(location), version=version, rows=1, size_bytes=1)
        answer = small.answer(sql, {f"{DB}.versions": snap}, lambda t: spark.sql(t).schema)
        assert isinstance(answer, LocalAnswer) and answer.rows == ((value,),)
        assert small.cache.bytes <= small.cache.budget_bytes
        assert len(small.cache._tables) == 1  # the other version was dropped


def test_tiles_beyond_the_fast_path_bounds_go_to_spark(spark, golden) -> None:
    sql = f"SELECT COUNT(*) AS c FROM {T}"
    for bounds, why in (
        (FastPath(max_rows=len(ROWS) - 1), "max_rows"),
        (FastPath(max_bytes=100), "max_bytes"),
        (FastPath(max_rows=0), "off"),
    ):
        answer = TileEngine(bounds).answer(sql, {f"{DB}.t": golden}, lambda t: spark.sql(t).schema)
        assert isinstance(answer, Refusal) and why in answer.reason


def test_a_query_past_its_deadline_is_cancelled(spark, golden) -> None:
    """Joins of tiles may grow as the product of their sizes: the deadline holds in DuckDB as
    it does in Spark (and the query is not run again on Spark)."""
    from mvlattice.errors import QueryTimeoutError

    location = Path(golden.location).parent / "wide"
    rows = [(1, i) for i in range(30_000)]
    spark.createDataFrame(rows, "k INT, v INT").coalesce(1).write.format("delta").mode(
        "overwrite"
    ).save(str(location))
    spark.sql(f"CREATE TABLE IF NOT EXISTS {DB}.wide USING DELTA LOCATION '{location}'")
    snap = ApprovedSnapshot(location=str(location), version=0, rows=len(rows), size_bytes=1)
    sql = (
        f"SELECT COUNT(*) AS c, SUM(a.v + b.v) AS s FROM {DB}.wide AS a "
        f"JOIN {DB}.wide AS b ON a.k = b.k"
    )
    engine = TileEngine(FastPath())
    with pytest.raises(QueryTimeoutError, match="cancelled after 0.3 s"):
        engine.answer(sql, {f"{DB}.wide": snap}, lambda t: spark.sql(t).schema, timeout=0.3)
    # The thread's next query is answered in full (its cursor was interrupted, not this one).
    small = f"SELECT COUNT(*) AS c FROM {DB}.wide"
    answer = engine.answer(small, {f"{DB}.wide": snap}, lambda t: spark.sql(t).schema)
    assert not isinstance(answer, Refusal), answer
    assert answer.rows == tuple(tuple(r) for r in spark.sql(small).collect())


def test_a_row_limit_cuts_the_answer(engine, spark, golden) -> None:
    sql = f"SELECT mv.k, mv.g FROM {T} ORDER BY mv.k, mv.g"
    full = local(engine, spark, golden, sql)
    cut = engine.answer(sql, {f"{DB}.t": golden}, lambda t: spark.sql(t).schema, limit=2)
    assert isinstance(full, LocalAnswer) and isinstance(cut, LocalAnswer)
    assert cut.rows == full.rows[:2] and len(full.rows) == len(ROWS)
