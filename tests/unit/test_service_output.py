"""`jsonable`/`dumps` over every kind of value a result can hold: whatever comes in, the output
is JSON that `json.dumps(..., allow_nan=False)` accepts (tests/integration/
test_service_output_spark.py checks the same for values collected from real Spark)."""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import json
import uuid
from typing import Any

import pytest
from pyspark.sql import Row

from mvlattice.output import day_time_interval, dumps, jsonable, table


class Color(enum.Enum):
    RED = "red"


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text")


def nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def looped() -> list[Any]:
    value: list[Any] = []
    value.append(value)
    return value


NAN, INF = float("nan"), float("inf")
VALUES: list[tuple[Any, Any]] = [
    (None, None),
    (True, True),
    (7, 7),
    (2**80, 2**80),
    (1.5, 1.5),
    (NAN, None),
    (INF, None),
    (-INF, None),
    ("té\x00xt", "té\x00xt"),
    (decimal.Decimal("12"), 12),
    (decimal.Decimal("12.50"), 12.5),
    (decimal.Decimal("1E+3"), 1000),
    (decimal.Decimal("NaN"), None),
    (decimal.Decimal("sNaN"), None),
    (decimal.Decimal("-Infinity"), None),
    (decimal.Decimal("1.5E+400"), 15 * 10**399),
    (decimal.Decimal("1.5E-400"), 0.0),
    (dt.date(2024, 2, 29), "2024-02-29"),
    (dt.datetime(2024, 1, 2, 3, 4, 5), "2024-01-02T03:04:05"),
    (dt.datetime(2024, 1, 2, tzinfo=dt.UTC), "2024-01-02T00:00:00+00:00"),
    (dt.time(1, 2), "01:02:00"),
    (dt.timedelta(days=1), "INTERVAL '1 00:00:00' DAY TO SECOND"),
    (-dt.timedelta(days=1, hours=2, minutes=3, seconds=4.5),
     "INTERVAL '-1 02:03:04.5' DAY TO SECOND"),
    (b"\xca\xfe", "cafe"),
    (bytearray(b"\x00"), "00"),
    (memoryview(b"\x01"), "01"),
    ([1, NAN, [INF]], [1, None, [None]]),
    ((1, "a"), [1, "a"]),
    ({3}, [3]),
    ({"k": NAN, 1: "one", None: 0, dt.date(2024, 1, 1): 2},
     {"k": None, "1": "one", "null": 0, "2024-01-01": 2}),
    ({1.5: 1, NAN: 2, (1, 2): 3}, {"1.5": 1, "null": 2, "[1, 2]": 3}),
    (Row(x=1, y=[NAN], z=Row(w=b"\x01")), {"x": 1, "y": [None], "z": {"w": "01"}}),
    (Row(x=NAN), {"x": None}),
    (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
    (Color.RED, "Color.RED"),
    (Unprintable(), "<Unprintable>"),
    (object, "<class 'object'>"),
]  # fmt: skip


@pytest.mark.parametrize(("value", "expected"), VALUES)
def test_every_value_becomes_strict_json(value: Any, expected: Any) -> None:
    out = jsonable(value)
    assert out == expected
    json.dumps(out, allow_nan=False)
    assert json.loads(dumps({"v": value})) == {"v": expected}


def test_a_row_with_repeated_field_names_stays_a_list() -> None:
    row = Row("a", "a")(1, NAN)
    assert jsonable(row) == [1, None]


@pytest.mark.parametrize("value", [nested(5000), looped(), {"a": looped()}])
def test_structures_nested_past_the_recursion_limit_still_render(value: Any) -> None:
    json.dumps(jsonable(value), allow_nan=False)
    json.loads(dumps(value))


def test_a_document_of_everything_at_once() -> None:
    document = {"rows": [[v for v, _ in VALUES]], "count": len(VALUES)}
    parsed = json.loads(dumps(document))
    assert parsed["rows"][0] == [e for _, e in VALUES]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (dt.timedelta(0), "0 00:00:00"),
        (dt.timedelta(microseconds=1), "0 00:00:00.000001"),
        (dt.timedelta(hours=3), "0 03:00:00"),
        (-dt.timedelta(microseconds=1), "-0 00:00:00.000001"),
        (dt.timedelta(days=106751991), "106751991 00:00:00"),
    ],
)
def test_day_time_intervals_in_sparks_text(value: dt.timedelta, text: str) -> None:
    assert day_time_interval(value) == f"INTERVAL '{text}' DAY TO SECOND"


def test_a_text_table_shows_intervals_and_nan() -> None:
    out = table(["d", "x"], [(dt.timedelta(hours=1), NAN)])
    assert "INTERVAL '0 01:00:00' DAY TO SECOND" in out and "nan" in out
