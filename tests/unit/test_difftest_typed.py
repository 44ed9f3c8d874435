"""The differential tester's check of the tile engine: Spark's JSON rows made the values
collect() returns, then compared with the engine's values, types and order included."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from pyspark.sql.types import (
    DateType,
    DecimalType,
    DoubleType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
)

from mvlattice.proof import compare, typed
from mvlattice.proof.difftest import LOCAL_VS_BASE, Finding, Report, refusal_kind


def _schema(*types: object) -> StructType:
    return StructType([StructField(f"o{i}", t) for i, t in enumerate(types)])  # type: ignore[arg-type]


def test_json_rows_become_the_values_collect_gives() -> None:
    schema = _schema(
        IntegerType(), LongType(), DoubleType(), DecimalType(12, 2), StringType(), DateType(),
        TimestampNTZType(),
    )  # fmt: skip
    text = (
        '{"a":1,"b":20000000000,"c":1.0E10,"d":1.5,"e":"x","f":"1997-01-02",'
        '"g":"1997-01-02T03:04:05.000006"}'
    )
    (row,) = typed.spark_values([compare.values(text)], schema)
    assert row == (1, 20000000000, 1e10, Decimal("1.50"), "x", dt.date(1997, 1, 2),
                   dt.datetime(1997, 1, 2, 3, 4, 5, 6))  # fmt: skip
    assert [type(v) for v in row] == [int, int, float, Decimal, str, dt.date, dt.datetime]
    assert row[3].as_tuple().exponent == -2
    assert typed.spark_values([(None, None)], _schema(DecimalType(5, 1), DoubleType())) == [
        (None, None)
    ]


def test_equal_rows_in_any_order_pass() -> None:
    spark = [(1, Decimal("1.50"), 0.1 + 0.2, None), (2, Decimal("0.00"), 1.0, "a")]
    local = [(2, Decimal("0.00"), 1.0, "a"), (1, Decimal("1.50"), 0.3, None)]
    assert typed.difference(spark, local, None) == ""


def test_rows_that_round_alike_are_not_confused() -> None:
    """199209 and 199210 look alike at five digits: the rows still pair off exactly."""
    spark = [(199209, 29, 1), (199210, 29, 1), (199211, 29, 2)]
    local = [(199211, 29, 2), (199210, 29, 1), (199209, 29, 1)]
    assert typed.difference(spark, local, None) == ""
    assert typed.difference(spark, [(199211, 29, 1), *local[1:]], None)
    floats = [(1.0000001, "a"), (1.0000002, "b")]
    assert typed.difference(floats, [(1.0000002, "b"), (1.0000001, "a")], None) == ""


def test_another_value_row_count_or_type_is_reported() -> None:
    spark = [(1, Decimal("1.50"), 2.0)]
    assert "rows" in typed.difference(spark, [], None)
    assert typed.difference(spark, [(2, Decimal("1.50"), 2.0)], None)  # another value
    assert typed.difference(spark, [(1, Decimal("1.5"), 2.0)], None)  # another scale
    assert typed.difference(spark, [(1, 1.5, 2.0)], None)  # a float for a Decimal
    assert typed.difference(spark, [(1.0, Decimal("1.50"), 2.0)], None)  # a float for an int
    assert typed.difference(spark, [(1, Decimal("1.50"), 2)], None)  # an int for a float
    assert typed.difference(spark, [(True, Decimal("1.50"), 2.0)], None)  # a bool for an int
    assert typed.difference(spark, [(1, Decimal("1.50"), 2.001)], None)  # beyond tolerance
    assert typed.difference(spark, [(1, None, 2.0)], None)  # a NULL
    day = dt.date(1997, 1, 1)
    assert typed.difference([(day,)], [(dt.datetime(1997, 1, 1),)], None)


def test_ordered_rows_must_agree_on_order_except_among_ties() -> None:
    spark = [("a", 1), ("a", 2), ("b", 3)]
    assert typed.difference(spark, [("a", 2), ("a", 1), ("b", 3)], (0,)) == ""  # a tie on o0
    assert "order" in typed.difference(spark, [("a", 2), ("a", 1), ("b", 3)], (0, 1))
    assert "order" in typed.difference(spark, [("b", 3), ("a", 1), ("a", 2)], (0,))
    assert typed.difference(spark, [("b", 3), ("a", 1), ("a", 2)], None) == ""


def test_sort_keys_are_the_outermost_order_by() -> None:
    columns = ["o0", "o1", "o2"]
    assert typed.sort_keys("SELECT a AS o0, b AS o1, c AS o2 FROM t", columns) is None
    assert typed.sort_keys("SELECT a o0, b o1, c o2 FROM t ORDER BY o1 DESC, o0", columns) == (
        1,
        0,
    )
    assert typed.sort_keys("SELECT a o0, b o1, c o2 FROM t ORDER BY 3", columns) == (2,)
    assert typed.sort_keys("SELECT a o0, b o1, c o2 FROM t ORDER BY a + b", columns) == (0, 1, 2)
    union = "SELECT a o0, b o1, c o2 FROM t UNION ALL SELECT a, b, c FROM u ORDER BY o2"
    assert typed.sort_keys(union, columns) == (2,)
    inner = "SELECT * FROM (SELECT a o0, b o1, c o2 FROM t ORDER BY o0 LIMIT 3) AS x"
    assert typed.sort_keys(inner, columns) is None


def test_refusal_reasons_are_counted_without_names() -> None:
    assert refusal_kind("freshness approved no snapshot of mvlattice.star__a__b_1f2e") == (
        "freshness approved no snapshot of <tile>"
    )
    assert refusal_kind("MOD (s.qty % 4) is not proven identical on the tile engine") == (
        "MOD is not proven identical on the tile engine"
    )
    assert refusal_kind("it reads difft.promo, which is not a fresh tile") == (
        "it reads difft.promo, which is not a fresh tile"
    )
    assert refusal_kind("column o1: DuckDB's DOUBLE is not Spark's decimal(38,6)") == (
        "column <c>: DuckDB's DOUBLE is not Spark's decimal(38,6)"
    )
    report = Report(4, 3, (Finding("s", 1, LOCAL_VS_BASE, "q", "r", "d"),), 1.0, 1, ("x", "x"))
    summary = report.summary()
    assert summary["local"] == 1
    assert summary["local_vs_base_mismatches"] == 1
    assert summary["local_vs_tiles_mismatches"] == 0
    assert summary["mismatches"] == 0
    assert summary["refusals"] == {"x": 2}
    assert (report + report).summary()["refusals"] == {"x": 4}
