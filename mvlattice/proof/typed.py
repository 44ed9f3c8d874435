"""Comparing a tile engine's answer with Spark's, types included: Spark's rows (as JSON from a
batched job, `compare.ordered`) are made the Python values `DataFrame.collect()` returns for
the query's schema; then values must be equal and of the same Python type (a DECIMAL with the
same scale), floats to `compare`'s relative tolerance; an ordered query's rows must come in
the same order, except among rows that tie on every sort key.
"""

from __future__ import annotations

import datetime as dt
import math
from collections import Counter
from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from mvlattice.proof.compare import ABS_TOL, REL_TOL, Row

if TYPE_CHECKING:
    from pyspark.sql.types import DataType, StructType

_INTEGRAL = ("byte", "short", "integer", "long")


# -- Spark's JSON rows as collect() makes them -------------------------------------------------
def spark_values(rows: Sequence[Row], schema: StructType) -> list[Row]:
    """`compare.values` rows as the Python values PySpark gives for `schema`."""
    types = [f.dataType for f in schema.fields]
    return [tuple(_value(v, t) for v, t in zip(row, types, strict=True)) for row in rows]


def _value(value: Any, kind: DataType) -> Any:  # noqa: PLR0911 - a type each
    if value is None:
        return None
    name = kind.typeName()
    if name in _INTEGRAL:
        return int(value)
    if name in ("double", "float"):
        return float(value)  # a Decimal, or "NaN" / "Infinity" as Spark writes them
    if name == "decimal":
        return Decimal(value).quantize(Decimal(1).scaleb(-kind.scale))  # type: ignore[attr-defined]
    if name == "date":
        return dt.date.fromisoformat(value)
    if name == "timestamp":  # an instant, made local time as PySpark does
        return dt.datetime.fromtimestamp(dt.datetime.fromisoformat(value).timestamp())
    if name == "timestamp_ntz":
        return dt.datetime.fromisoformat(value)
    return value  # strings, booleans: JSON's own


# -- comparing --------------------------------------------------------------------------------
def difference(expected: Sequence[Row], actual: Sequence[Row], keys: Sequence[int] | None) -> str:
    """What differs, or nothing when `actual` is `expected`: the same rows (as multisets), of
    the same types, and, when `keys` (the sort keys' positions) is given, in the same order up
    to ties."""
    if len(expected) != len(actual):
        return f"{len(expected)} rows vs {len(actual)}"
    if keys is not None:
        for i, (x, y) in enumerate(zip(expected, actual, strict=True)):
            if not same_row(tuple(x[k] for k in keys), tuple(y[k] for k in keys)):
                return f"order differs at row {i}: {x!r} vs {y!r}"
    return _unmatched(expected, actual)


def _unmatched(expected: Sequence[Row], actual: Sequence[Row]) -> str:
    """Rows identical in value and type pair off exactly; what is left (floats a rounding
    apart, or a difference) pairs off within tolerance, each with the first it matches."""
    left, right = Counter(map(_exact, expected)), Counter(map(_exact, actual))
    common = left & right
    rest = [r for r in expected if not _take(common, _exact(r))]
    common = left & right
    others = [r for r in actual if not _take(common, _exact(r))]
    for x in rest:
        match = next((i for i, y in enumerate(others) if same_row(x, y)), None)
        if match is None:
            return (
                f"only in Spark's answer: {x!r}; not matched in the tile engine's: {others[:2]!r}"
            )
        others.pop(match)
    return ""


def _take(counts: Counter[tuple], key: tuple) -> bool:
    if counts[key] > 0:
        counts[key] -= 1
        return True
    return False


def same_row(x: Row, y: Row) -> bool:
    return len(x) == len(y) and all(same_value(a, b) for a, b in zip(x, y, strict=True))


def same_value(a: Any, b: Any) -> bool:
    """Equal and of the same type: a Decimal of the same scale, a float within tolerance."""
    if a is None or b is None:
        return a is None and b is None
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        both_nan = math.isnan(a) and math.isnan(b)
        return both_nan or math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)
    if isinstance(a, Decimal):
        return a == b and a.as_tuple().exponent == b.as_tuple().exponent
    return bool(a == b)


def _exact(row: Row) -> tuple:
    """A row as a key that tells types and DECIMAL scales apart (1, 1.0 and Decimal('1.0')
    are equal in Python)."""
    return tuple(
        (type(v).__name__, v, v.as_tuple().exponent if isinstance(v, Decimal) else 0) for v in row
    )


# -- the sort keys of a query -----------------------------------------------------------------
def sort_keys(sql: str, columns: Sequence[str]) -> tuple[int, ...] | None:
    """The output positions the query's outermost ORDER BY sorts on; None when it has none.
    A key that is not an output column by name or position makes every column a key (ties are
    then only identical rows)."""
    import sqlglot
    from sqlglot import exp

    try:
        tree = sqlglot.parse_one(sql, read="spark")
    except sqlglot.errors.SqlglotError:
        return tuple(range(len(columns)))
    order = tree.args.get("order")
    if not isinstance(order, exp.Order) or not order.expressions:
        return None
    names = [c.lower() for c in columns]
    found = []
    for item in order.expressions:
        key = item.this
        if isinstance(key, exp.Column) and not key.table and key.name.lower() in names:
            found.append(names.index(key.name.lower()))
        elif isinstance(key, exp.Literal) and key.is_int and 0 < int(key.this) <= len(names):
            found.append(int(key.this) - 1)
        else:
            return tuple(range(len(columns)))
    return tuple(found)
