"""Approximate distinct counts over every column type (issue 20, class 8): hll_sketch_agg takes
only INT, BIGINT, STRING and BINARY, so a tile sketches xxhash64 of the value (NULL for NULL,
`aggregates.sketch_input_sql`). Tiles over DATE, TIMESTAMP, DECIMAL and DOUBLE columns build,
answer APPROX_COUNT_DISTINCT, and the answer is within the sketch's error of Spark's exact
COUNT(DISTINCT) on data large enough for the sketch to estimate (not count exactly)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

from mvlattice.workspace import Workspace
from tests.integration.test_jobs_support import write

pytestmark = pytest.mark.spark

S = "sketch_types"
DDL = "id INT, grp STRING, sold_on DATE, at TIMESTAMP, price DECIMAL(10,2), ratio DOUBLE"
COLUMNS = ("sold_on", "at", "price", "ratio")
MODEL = """
version: "1.0"
defaultSchema: {s}
schemas:
  - name: {s}
    type: delta
    location: {location}
    tables:
      - name: events
    lattices:
      - name: {s}_star
        sql: select 1 from {s}.events as e
        algorithm: false
        tiles:
          - dimensions: [grp]
            measures:
              - {{agg: count}}
{measures}
          - dimensions: []
            measures:
{measures}
"""
MEASURE = "              - {{agg: count, args: {c}, distinct: true, approximate: true}}"
ERROR = 0.05  # lg_config_k 12: standard error ~1.6 %; 3 sigma and then some


def rows(n: int) -> list[tuple]:
    start = dt.datetime(2024, 3, 1)
    return [
        (
            i,
            f"g{i % 3}",
            None if i % 17 == 0 else dt.date(2000, 1, 1) + dt.timedelta(days=i % 9000),
            None if i % 19 == 0 else start + dt.timedelta(seconds=37 * i),
            None if i % 23 == 0 else Decimal(i % 7000) / 100,
            None if i % 29 == 0 else (i % 8000) / 8.0,
        )
        for i in range(n)
    ] + [(n, "gz", None, None, None, -0.0), (n + 1, "gz", None, None, None, 0.0)]


@pytest.fixture(scope="module")
def ws(spark, warehouse: Path) -> Workspace:
    base = warehouse / "jobs" / S
    write(spark, base / "events", rows(12000), DDL)
    measures = "\n".join(MEASURE.format(c=c) for c in COLUMNS)
    model = base / "model.yaml"
    model.write_text(MODEL.format(s=S, location=base, measures=measures), encoding="utf-8")
    workspace = Workspace(model, warehouse=str(warehouse))
    result = workspace.materialize()
    assert not result.failed, [r.error for r in result.failed]
    return workspace


def test_sketches_of_every_type_answer_within_their_error(ws) -> None:
    for column in COLUMNS:
        for group in ("e.grp, ", ""):
            by = f" group by {group.rstrip(', ')}" if group else ""
            approx = (
                f"select {group}approx_count_distinct(e.{column}) from {S}.events e "
                f"where e.grp <> 'gz'{by}"
            )
            result = ws.query(approx, engine="spark")
            assert result.rewrite.rewritten, result.rewrite.explain
            assert "HLL_SKETCH_ESTIMATE(" in ws.rewrite(approx).sql.upper(), approx
            exact_sql = approx.replace("approx_count_distinct(", "count(distinct ")
            exact = dict((tuple(r[:-1]), r[-1]) for r in ws.query(exact_sql, rewrite=False).rows)
            answered = dict((tuple(r[:-1]), r[-1]) for r in result.rows)
            assert answered.keys() == exact.keys(), approx
            for key, count in exact.items():
                assert count > 1000  # large enough that the sketch estimates
                assert abs(answered[key] - count) <= ERROR * count, (approx, key, count)


def test_nulls_are_not_counted_and_zero_is_one_value(ws, spark) -> None:
    for column in COLUMNS:
        sql = f"select approx_count_distinct(e.{column}) from {S}.events e where e.grp = 'gz'"
        result = ws.query(sql, engine="spark")
        assert result.rewrite.rewritten, result.rewrite.explain
        want = 1 if column == "ratio" else 0  # -0.0 and 0.0 are one value, as in GROUP BY
        exact = spark.sql(sql.replace("approx_count_distinct(", "count(distinct ")).collect()
        assert exact[0][0] == want and list(result.rows) == [(want,)], (column, result.rows)


def test_the_timestamp_hash_does_not_depend_on_the_session_time_zone(spark) -> None:
    sql = "select xxhash64(timestamp '2026-01-01 00:00:00Z')"
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
    utc = spark.sql(sql).collect()
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        assert spark.sql(sql).collect() == utc
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
