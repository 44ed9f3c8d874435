"""JSON from values real Spark returns: NaN and infinities, every kind of interval (PySpark
cannot even collect year-month and calendar intervals without `printable_intervals`), binary,
maps, structs. The text of an interval must be Spark's own."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mvlattice.output import dumps, printable_intervals

pytestmark = pytest.mark.spark

SELECT = """
SELECT INTERVAL '1' DAY AS day,
       INTERVAL '1-2' YEAR TO MONTH AS year_month,
       make_interval(1, 2, 3, 4, 5, 6, 7) AS calendar,
       CAST('NaN' AS DOUBLE) AS nan,
       double('inf') AS inf,
       -double('inf') AS minus_inf,
       float('nan') AS float_nan,
       array(INTERVAL '-5' MONTH) AS months,
       X'CAFE' AS bin,
       map(1, double('nan')) AS map,
       named_struct('x', 1.5BD, 'y', array(double('inf'), 2.0D)) AS struct,
       DATE '2024-02-29' AS date
"""
TEXTS = """
SELECT CAST(INTERVAL '1' DAY AS STRING), CAST(INTERVAL '1-2' YEAR TO MONTH AS STRING),
       CAST(make_interval(1, 2, 3, 4, 5, 6, 7) AS STRING),
       CAST(array(INTERVAL '-5' MONTH) AS STRING)
"""


def test_results_become_strict_json(spark: Any) -> None:
    frame = printable_intervals(spark.sql(SELECT))
    (row,) = frame.collect()
    document = json.loads(dumps({"columns": frame.columns, "rows": [list(row)]}))
    day, year_month, calendar, months = spark.sql(TEXTS).first()
    assert day == "INTERVAL '1' DAY" and year_month == "INTERVAL '1-2' YEAR TO MONTH"
    assert document["rows"][0] == [
        day, year_month, calendar, None, None, None, None, months, "cafe", {"1": None},
        {"x": 1.5, "y": [None, 2.0]}, "2024-02-29",
    ]  # fmt: skip
    json.dumps(document, allow_nan=False)


@pytest.mark.parametrize(
    "interval",
    [
        "INTERVAL '1' DAY",
        "INTERVAL '-1 02:03:04.5' DAY TO SECOND",
        "INTERVAL '3' HOUR",
        "-INTERVAL '0.000001' SECOND",
        "INTERVAL '106751991 04:00:54.775807' DAY TO SECOND",
    ],
)
def test_a_collected_day_time_interval_reads_as_sparks_text(spark: Any, interval: str) -> None:
    query = f"SELECT {interval} AS v, CAST(CAST({interval} AS INTERVAL DAY TO SECOND) AS STRING)"
    value, text = spark.sql(query).first()  # a timedelta, collected without printable_intervals
    assert json.loads(dumps(value)) == text
    assert spark.sql(f"SELECT {text} = {interval}").first()[0] is True


def test_interval_columns_with_repeated_or_odd_names(spark: Any) -> None:
    sql = "SELECT INTERVAL '1-2' YEAR TO MONTH AS a, 1 AS a, INTERVAL '3' MONTH AS `b``c`"
    frame = printable_intervals(spark.sql(sql))
    assert frame.columns == ["a", "a", "b`c"]
    assert list(frame.first()) == ["INTERVAL '1-2' YEAR TO MONTH", 1, "INTERVAL '3' MONTH"]
