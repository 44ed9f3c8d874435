"""Comparing query results as multisets: NULLs equal, numbers by value (DECIMAL 1.50 equals
1.5), floating point to a relative tolerance. Many queries run in one Spark job."""

from __future__ import annotations

import contextlib
import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

REL_TOL = 1e-6  # sums of doubles in another order, AVG as SUM/COUNT rounded at another scale
ABS_TOL = 1e-6

Row = tuple[Any, ...]

# Tiny data, many distinct queries: planning stage by stage (AQE) and compiling generated code
# cost more than they save, and one shuffle partition means fewer tasks.
FAST = {
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.shuffle.partitions": "1",
}


@contextlib.contextmanager
def tuned(spark: SparkSession) -> Iterator[None]:
    """FAST settings for the duration, then the session's own again."""
    before = {key: spark.conf.get(key, None) for key in FAST}
    for key, fast in FAST.items():
        spark.conf.set(key, fast)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


# Every row as JSON with NULLs kept; timestamps to the microsecond, as Spark keeps them.
_JSON_OPTIONS = (
    "map('ignoreNullFields', 'false', "
    "'timestampFormat', 'yyyy-MM-dd''T''HH:mm:ss.SSSSSSXXX', "
    "'timestampNTZFormat', 'yyyy-MM-dd''T''HH:mm:ss.SSSSSS')"
)


def results(spark: SparkSession, queries: list[str]) -> list[Counter[Row]]:
    """Each query's rows as a multiset, all queries in one Spark job."""
    return [Counter(found) for found in ordered(spark, queries)]


def ordered(spark: SparkSession, queries: list[str]) -> list[list[Row]]:
    """Each query's rows in the order Spark gives them, all queries in one Spark job: every
    row as JSON tagged with its query's position. UNION ALL concatenates its branches'
    partitions and a projection keeps their order, so an ordered query's rows stay in order."""
    parts = [
        f"SELECT {i} AS q, to_json(struct(*), {_JSON_OPTIONS}) AS r FROM ({sql}) AS t{i}"
        for i, sql in enumerate(queries)
    ]
    found: list[list[Row]] = [[] for _ in queries]
    for row in spark.sql("\nUNION ALL\n".join(parts)).collect():
        found[row["q"]].append(values(row["r"]))
    return found


def values(text: str) -> Row:
    """A row's values in order, numbers as Decimal (equal values hash equal)."""
    return json.loads(
        text,
        parse_float=Decimal,
        parse_int=Decimal,
        object_pairs_hook=lambda pairs: tuple(v for _, v in pairs),
    )


def as_multiset(rows: Iterable[Iterable[Any]]) -> Counter[Row]:
    """Collected rows (Python values) as `results` gives them: numbers as Decimal."""
    return Counter(tuple(_as_number(v) for v in row) for row in rows)


def _as_number(value: Any) -> Any:
    if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
        return Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    return value


def difference(a: Counter[Row], b: Counter[Row]) -> str:
    """ "" when equal as multisets (numbers within tolerance); else what differs, briefly."""
    if a == b:
        return ""
    if sum(a.values()) != sum(b.values()):
        return f"{sum(a.values())} rows vs {sum(b.values())}; {_sample(a, b)}"
    left, right = sorted(a.elements(), key=_key), sorted(b.elements(), key=_key)
    for x, y in zip(left, right, strict=True):
        if not _close_rows(x, y):
            return f"{x!r} vs {y!r}"
    return ""


def _sample(a: Counter[Row], b: Counter[Row]) -> str:
    only_a, only_b = list((a - b).elements())[:2], list((b - a).elements())[:2]
    return f"only in original: {only_a!r}; only in rewritten: {only_b!r}"


def _key(row: Row) -> tuple:
    """A sort key that puts rows equal within tolerance next to each other."""
    return tuple(_part(v) for v in row)


def _part(value: Any) -> tuple:
    if value is None:
        return (0, "")
    if isinstance(value, Decimal):
        return (1, f"{float(value):.5g}") if value.is_finite() else (1, str(value))
    return (2, json.dumps(value, default=str))


def _close_rows(x: Row, y: Row) -> bool:
    return len(x) == len(y) and all(_close(a, b) for a, b in zip(x, y, strict=True))


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, Decimal) and isinstance(b, Decimal):
        return math.isclose(float(a), float(b), rel_tol=REL_TOL, abs_tol=ABS_TOL)
    return a == b
