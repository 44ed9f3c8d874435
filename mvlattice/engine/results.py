"""DuckDB's answer as Spark's: each column checked against the type Spark's analyzer gives the
same SQL, each value made the Python value `DataFrame.collect()` would return — or a `Refusal`
when a type or a value does not fit (an integer beyond Spark's range: Spark fails there; a
DECIMAL of another scale: computed differently)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from mvlattice.sql.refusal import Refusal

if TYPE_CHECKING:
    from pyspark.sql.types import DataType, StructType

Convert = Callable[[Any], Any]

_INTEGER_RANGES = {
    "byte": 2**7,
    "short": 2**15,
    "integer": 2**31,
    "long": 2**63,
}
_DUCK_INTEGERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT",
                  "USMALLINT", "UINTEGER", "UBIGINT")  # fmt: skip


@dataclass(frozen=True, slots=True)
class LocalAnswer:
    """The tile engine's answer: Spark's column names, each value as `collect()` gives it."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]


class _Unfit(Exception):
    pass


def spark_rows(
    rows: Sequence[tuple[Any, ...]], duck_types: Sequence[str], schema: StructType
) -> list[tuple[Any, ...]] | Refusal:
    if len(duck_types) != len(schema.fields):
        return Refusal("DuckDB's answer has another number of columns than Spark's")
    converters = []
    for duck, field in zip(duck_types, schema.fields, strict=True):
        convert = _converter(duck.upper(), field.dataType)
        if convert is None:
            spark = field.dataType.simpleString()
            return Refusal(f"column {field.name}: DuckDB's {duck} is not Spark's {spark}")
        converters.append(convert)
    try:
        return [
            tuple(None if v is None else c(v) for c, v in zip(converters, row, strict=True))
            for row in rows
        ]
    except _Unfit as exc:
        return Refusal(str(exc))


def _converter(duck: str, spark: DataType) -> Convert | None:  # noqa: PLR0911 - a type each
    name = spark.typeName()
    if name in _INTEGER_RANGES:
        return _integer(_INTEGER_RANGES[name]) if duck in _DUCK_INTEGERS else None
    if name == "decimal":
        scale = spark.scale  # type: ignore[attr-defined]
        precision = spark.precision  # type: ignore[attr-defined]
        return _decimal(precision, scale) if _decimal_scale(duck) == scale else None
    if name == "double":
        return float if duck == "DOUBLE" else None
    if name == "float":
        return float if duck == "FLOAT" else None
    if name == "string":
        return _same(str) if duck == "VARCHAR" else None
    if name == "boolean":
        return _same(bool) if duck == "BOOLEAN" else None
    if name == "date":
        return _same(dt.date) if duck == "DATE" else None
    if name == "timestamp" and duck == "TIMESTAMP WITH TIME ZONE":
        return _timestamp(spark)
    if name == "timestamp_ntz" and duck == "TIMESTAMP":
        return _same(dt.datetime)
    return None


def _integer(bound: int) -> Convert:
    def convert(value: Any) -> int:
        if not isinstance(value, int) or not -bound <= value < bound:
            raise _Unfit(f"the value {value} is beyond Spark's type (Spark fails here)")
        return int(value)

    return convert


def _decimal_scale(duck: str) -> int | None:
    if not duck.startswith("DECIMAL(") or not duck.endswith(")"):
        return None
    return int(duck[len("DECIMAL(") : -1].split(",")[1])


def _decimal(precision: int, scale: int) -> Convert:
    def convert(value: Any) -> Decimal:
        if not isinstance(value, Decimal) or len(value.as_tuple().digits) > precision:
            raise _Unfit(f"the value {value} does not fit DECIMAL({precision}, {scale})")
        return value

    return convert


def _same(kind: type) -> Convert:
    def convert(value: Any) -> Any:
        if not isinstance(value, kind):
            raise _Unfit(f"the value {value!r} is not a {kind.__name__}")
        return value

    return convert


def _timestamp(spark: DataType) -> Convert:
    """As PySpark makes a timestamp: microseconds since the epoch, in the local time zone."""
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)

    def convert(value: Any) -> Any:
        if not isinstance(value, dt.datetime):
            raise _Unfit(f"the value {value!r} is not a timestamp")
        aware = value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)
        micros = (aware - epoch) // dt.timedelta(microseconds=1)
        return spark.fromInternal(micros)

    return convert
