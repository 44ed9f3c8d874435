"""Rendering results for people (tables) and for programs (JSON).

`jsonable` turns anything a query can return into values `json.dumps(..., allow_nan=False)`
accepts — it never fails, so a result never becomes a 500 after it was computed: NaN and ±Inf
as null (JSON has neither), intervals in Spark's own text form, bytes as hex, structs (Rows) as
objects, maps with any keys as objects, anything unknown as its `str`. PySpark cannot even
collect year-month and calendar intervals (`fromInternal is not implemented`):
`printable_intervals` casts such columns to Spark's text form before the collect.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType


def plural(count: int, singular: str, many: str | None = None) -> str:
    """`count` and the noun agreeing with it: 1 query, 2 queries, 0 tiles.

    >>> plural(1, "query", "queries"), plural(2, "query", "queries"), plural(0, "tile")
    ('1 query', '2 queries', '0 tiles')
    """
    noun = singular if count == 1 else (many or singular + "s")
    return f"{count:,} {noun}"


def jsonable(value: Any) -> Any:
    """Spark values as JSON values: decimals as numbers, dates as ISO strings, NaN as null."""
    try:
        return _jsonable(value)
    except RecursionError:  # a structure nested past Python's limit (or containing itself)
        return _other(value)


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, decimal.Decimal):
        return _decimal(value)
    if isinstance(value, dt.timedelta):
        return day_time_interval(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    if isinstance(value, tuple) and hasattr(value, "__fields__"):  # a Row: a struct
        return _row(value)
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {_key(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, uuid.UUID):
        return str(value)
    return _other(value)


def dumps(document: Any) -> str:
    return json.dumps(jsonable(document), ensure_ascii=False, allow_nan=False)


# The version of every `--json` document's shape, as dbt versions its artifacts: it goes up
# when a key is removed, renamed or changes meaning (new keys alone do not change it).
JSON_SCHEMA_VERSION = 1


def json_document(document: Mapping[str, Any]) -> str:
    """A command's `--json` output: its document, marked with the shape's version."""
    return dumps({"schema_version": JSON_SCHEMA_VERSION, **document})


def day_time_interval(value: dt.timedelta) -> str:
    """Spark's text for a day-time interval, as `CAST(… AS INTERVAL DAY TO SECOND)` prints it:
    INTERVAL '-1 02:03:04.5' DAY TO SECOND. (The collected timedelta no longer says which
    fields the type had; the widest form reads back as the same interval.)"""
    micros = abs(value) // dt.timedelta(microseconds=1)
    seconds, fraction = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    days, hour = divmod(hours, 24)
    text = f"{'-' if value < dt.timedelta(0) else ''}{days} {hour:02d}:{minute:02d}:{second:02d}"
    if fraction:
        text += f".{fraction:06d}".rstrip("0")
    return f"INTERVAL '{text}' DAY TO SECOND"


def printable_intervals(frame: DataFrame) -> DataFrame:
    """`frame` with every column that holds an interval (at any depth) cast to STRING — Spark's
    own text, e.g. INTERVAL '1-2' YEAR TO MONTH — so that it can be collected at all."""
    fields = frame.schema.fields
    if not any(_has_interval(f.dataType) for f in fields):
        return frame
    # By position: names may repeat (a join's `id` and `id`) or hold backticks, and even
    # `frame[i]` resolves by name — so rename to positions, cast, and rename back.
    from pyspark.sql import functions as F

    names = [f.name for f in fields]
    numbered = frame.toDF(*(f"_{i}" for i in range(len(fields))))
    columns = [
        F.col(f"_{i}").cast("string") if _has_interval(f.dataType) else F.col(f"_{i}")
        for i, f in enumerate(fields)
    ]
    return numbered.select(*columns).toDF(*names)


def _has_interval(kind: DataType) -> bool:
    from pyspark.sql import types as T

    if isinstance(kind, T.DayTimeIntervalType | T.YearMonthIntervalType | T.CalendarIntervalType):
        return True
    if isinstance(kind, T.ArrayType):
        return _has_interval(kind.elementType)
    if isinstance(kind, T.MapType):
        return _has_interval(kind.keyType) or _has_interval(kind.valueType)
    if isinstance(kind, T.StructType):
        return any(_has_interval(f.dataType) for f in kind.fields)
    return False


def _decimal(value: decimal.Decimal) -> int | float | None:
    if not value.is_finite():
        return None  # Decimal('NaN'), Decimal('Infinity'): not JSON numbers either
    if value == value.to_integral_value() and value.as_tuple().exponent >= 0:  # type: ignore[operator]
        return int(value)
    number = float(value)
    return number if math.isfinite(number) else None  # 1E+400 overflows a float


def _row(value: Any) -> Any:
    names = list(value.__fields__)
    if len(set(names)) != len(names):  # duplicate field names: an object would lose values
        return [jsonable(v) for v in value]
    return {name: jsonable(v) for name, v in zip(names, value, strict=True)}


def _key(key: Any) -> str:
    """A JSON object key for a map key of any type (Spark map keys can be numbers, dates…)."""
    value = jsonable(key)
    return value if isinstance(value, str) else json.dumps(value, allow_nan=False)


def _other(value: Any) -> Any:
    item = getattr(value, "item", None)  # numpy and pandas scalars
    if callable(item):
        try:
            return jsonable(item())
        except Exception:  # noqa: BLE001 - fall through to the text
            pass
    try:
        return str(value)
    except Exception:  # noqa: BLE001 - a value whose __str__ fails still renders
        return f"<{type(value).__name__}>"


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain aligned text table, numbers right-aligned."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    numeric = [
        all(_is_number(row[i]) for row in rows if row[i] is not None) and bool(rows)
        for i in range(len(columns))
    ]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if n else v.ljust(w) for v, w, n in zip(values, widths, numeric, strict=True)
        ).rstrip()

    out = [line(list(columns)), line(["-" * w for w in widths])]
    out.extend(line(r) for r in cells)
    count = len(rows)
    out.append(f"({count} row{'s' if count != 1 else ''})")
    return "\n".join(out)


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return day_time_interval(value)
    return str(value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool)
