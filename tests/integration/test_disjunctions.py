"""What string ranges rest on, checked on Spark (issue 20, class 3): Spark orders STRING
values as Python orders `str` (by code point), `LIKE 'p%'` keeps exactly the range
[p, p with its last character incremented), and the Delta log tells a STRING column from a
CHAR(n) one (which pads) — so only the former is compared as strings by the rewriter."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.delta.columns import delta_log_types
from mvlattice.mvrewrite.match.atoms import TEXT, is_string, range_of
from mvlattice.sql import ir

pytestmark = pytest.mark.spark

WORDS = (
    "", " ", "A", "Z", "a", "a ", "a%", "a_", "ab", "abc", "ab\u007f", "az", "a\u00e9", "a\u07ff",
    "a\u0800", "a\ud7ff", "a\ue000", "a\uffff", "a\U00010000", "a\U0001f600", "a\U0010ffff",
    "b", "\u00e9", "e\u0301", "\U0001f600",
)  # fmt: skip
PREFIXES = ("a", "ab", "a\u00e9", "a\ud7ff", "a\uffff", "a\U0001f600", "\u00e9", "")


@pytest.fixture(scope="module")
def words(spark):
    frame = spark.createDataFrame([(w,) for w in WORDS], "w STRING")
    frame.createOrReplaceTempView("class3_words")
    return spark


def test_spark_orders_strings_as_python_does(words) -> None:
    found = [r.w for r in words.sql("SELECT w FROM class3_words ORDER BY w").collect()]
    assert found == sorted(WORDS)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_like_prefix_is_the_string_range(words, prefix: str) -> None:
    column = ir.Column("t", "w")
    like = ir.Func("Like", (("this", column), ("expression", ir.Literal("string", prefix + "%"))))
    found = range_of(like, frozenset({column}))
    assert found is not None and found[1] == TEXT
    interval = found[2].intervals[0]
    low = interval.low.value if interval.low else None
    high = interval.high.value if interval.high else None
    from pyspark.sql.functions import lit

    table = words.table("class3_words")
    by_like = {r.w for r in table.filter(table.w.like(prefix + "%")).collect()}
    in_python = {w for w in WORDS if (low is None or w >= low) and (high is None or w < high)}
    assert by_like == in_python == {w for w in WORDS if w.startswith(prefix)}
    if high is not None:
        ranged = table.filter((table.w >= lit(low)) & (table.w < lit(high)))
        assert {r.w for r in ranged.collect()} == by_like


def test_the_delta_log_tells_string_from_char(spark, tmp_path: Path) -> None:
    location = tmp_path / "typed"
    spark.sql(
        f"CREATE TABLE class3_typed (s STRING, c CHAR(4), v VARCHAR(8)) USING delta "
        f"LOCATION '{location}'"
    )
    try:
        spark.sql("INSERT INTO class3_typed VALUES ('ab', 'ab', 'ab')")
        types = delta_log_types(str(location))
        assert types == {"s": "string", "c": "char(4)", "v": "varchar(8)"}
        assert [is_string(types[c]) for c in "scv"] == [True, False, True]
        # why CHAR is not a string range: its values are padded, LIKE 'ab' no longer holds
        row = spark.sql(
            "SELECT s LIKE 'ab', c LIKE 'ab', c = 'ab', v LIKE 'ab' FROM class3_typed"
        ).first()
        assert tuple(row) == (True, False, True, True)
    finally:
        spark.sql("DROP TABLE IF EXISTS class3_typed")
