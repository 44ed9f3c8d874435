"""Lossless-cast cases (issue 20, class 4): a table of numbers of every width, views holding
widened casts of its columns (and lossy ones), and the queries each must or must not answer.

Shared by the unit tests (the rewrite without Spark) and the integration tests (original and
rewritten SQL compared on Spark, as multisets with their Python types).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

from mvlattice.model.loader import Materialization, Model, load_model
from mvlattice.mvrewrite.context import context_for
from mvlattice.mvrewrite.rewriter import RewriteContext

SCHEMA = "lc_rewrite"
MODEL = f"""
version: "1.0"
defaultSchema: {SCHEMA}
schemas:
  - name: {SCHEMA}
    type: delta
    location: {SCHEMA}
    tables:
      - name: nums
        columns: [id, t, s, i, b, d, f, x, dt, str, amount]
        primaryKey: [id]
"""
COLUMNS = (
    ("id", "INT"), ("t", "TINYINT"), ("s", "SMALLINT"), ("i", "INT"), ("b", "BIGINT"),
    ("d", "DECIMAL(10,2)"), ("f", "FLOAT"), ("x", "DOUBLE"), ("dt", "DATE"), ("str", "STRING"),
    ("amount", "DECIMAL(10,2)"),
)  # fmt: skip
DDL = ", ".join(f"{name} {kind}" for name, kind in COLUMNS)
TYPES = {(f"{SCHEMA}.nums", name): kind for name, kind in COLUMNS}


def _row(i: int, t: int | None, n: int | None, b: int | None, d: str | None, f: float | None,
         x: float | None, text: str | None, amount: str) -> tuple[Any, ...]:  # fmt: skip
    small = None if n is None else n % 30000
    dec = None if d is None else Decimal(d)
    return (i, t, small, n, b, dec, f, x, dt.date(2021, 1, 1 + i), text, Decimal(amount))


# Extremes of every width (INT's and BIGINT's limits, DECIMAL(10,2)'s largest value, a FLOAT
# that is not a short DOUBLE), repeated values for the groups, and NULLs in every column.
ROWS = [
    _row(1, 1, 5, 5, "1.10", 1.1, 0.5, "5", "1.00"),
    _row(2, 1, 5, 5, "1.10", 1.1, 0.5, "5", "2.50"),
    _row(3, -128, 2147483647, 9223372036854775807, "99999999.99", 3.4e38, 2.5, "x", "3.00"),
    _row(4, 127, -2147483648, -9223372036854775808, "-99999999.99", -0.1, 7.9, "7", "4.00"),
    _row(5, None, None, None, None, None, None, None, "5.00"),
    _row(6, 0, 42, 9007199254740993, "0.01", 16777217.0, 1e300, "42", "6.00"),
    _row(7, 0, 42, 9007199254740992, "0.04", 2.0, -3.7, "042", "7.25"),
    _row(8, 3, 100, 100, "12.34", 0.3, 100.0, "100", "8.00"),
]

VIEWS = {
    "by_ib": "SELECT CAST(i AS BIGINT) AS ib, COUNT(*) AS c, SUM(amount) AS total "
    "FROM nums GROUP BY CAST(i AS BIGINT)",
    "by_wide": "SELECT CAST(b AS DECIMAL(19,0)) AS bd, CAST(d AS DECIMAL(12,4)) AS dd, "
    "CAST(t AS SMALLINT) AS ts, COUNT(*) AS c FROM nums "
    "GROUP BY CAST(b AS DECIMAL(19,0)), CAST(d AS DECIMAL(12,4)), CAST(t AS SMALLINT)",
    "by_idouble": "SELECT CAST(i AS DOUBLE) AS idb, CAST(s AS FLOAT) AS sf, COUNT(*) AS c "
    "FROM nums GROUP BY CAST(i AS DOUBLE), CAST(s AS FLOAT)",
    "wide_rows": "SELECT id, CAST(i AS DECIMAL(10,0)) AS idec, CAST(d AS DECIMAL(20,2)) AS dw, "
    "CAST(f AS DOUBLE) AS fd, CAST(s AS INT) AS si, amount FROM nums",
    "plain_rows": "SELECT id, i, d, b, amount FROM nums",
    "lossy": "SELECT id, CAST(b AS INT) AS bi, CAST(d AS DECIMAL(10,1)) AS d1, "
    "CAST(d AS DECIMAL(11,4)) AS d4, CAST(x AS INT) AS xi, CAST(b AS DOUBLE) AS bdb, "
    "CAST(i AS FLOAT) AS ifl, CAST(i AS DECIMAL(9,0)) AS i9, CAST(b AS DECIMAL(18,0)) AS b18, "
    "CAST(str AS INT) AS stri, CAST(i AS STRING) AS istr, CAST(dt AS TIMESTAMP) AS dts, "
    "CAST(x AS FLOAT) AS xf, CAST(d AS DOUBLE) AS ddb, amount FROM nums",
}

# (view, query): each must be rewritten onto the view
POSITIVE = [
    ("by_ib", "SELECT i, COUNT(*) AS c FROM nums GROUP BY i"),
    ("by_ib", "SELECT i, SUM(amount) AS s FROM nums WHERE i = 5 GROUP BY i"),
    ("by_ib", "SELECT COUNT(*) AS c, SUM(amount) AS s FROM nums WHERE i > 0 AND i < 2147483647"),
    ("by_ib", "SELECT i + 1 AS j, COUNT(*) AS c FROM nums WHERE i IN (5, 42, -2147483648) "
     "GROUP BY i + 1"),
    ("by_ib", "SELECT CAST(i AS DECIMAL(20,0)) AS k, SUM(amount) AS a FROM nums "
     "WHERE i IS NOT NULL GROUP BY CAST(i AS DECIMAL(20,0))"),
    ("by_wide", "SELECT b, d, t, COUNT(*) AS c FROM nums GROUP BY b, d, t"),
    ("by_wide", "SELECT d, COUNT(*) AS c FROM nums WHERE b >= 100 OR t = 0 GROUP BY d"),
    ("by_idouble", "SELECT i, s, COUNT(*) AS c FROM nums GROUP BY i, s"),
    ("by_idouble", "SELECT s, COUNT(*) AS c FROM nums WHERE i <> 5 GROUP BY s"),
    ("wide_rows", "SELECT id, i, d, f, s, amount FROM nums WHERE d >= 1.1"),
    ("wide_rows", "SELECT id, f FROM nums WHERE f < 2 ORDER BY id"),
    ("wide_rows", "SELECT id, CAST(i AS BIGINT) AS ib, d * 2 AS dd FROM nums WHERE s = 42"),
    ("plain_rows", "SELECT id, CAST(i AS BIGINT) AS ib, CAST(d AS DECIMAL(14,4)) AS dw, "
     "CAST(b AS DECIMAL(25,0)) AS bd FROM nums"),
]  # fmt: skip

# (view, query, reason): each must not be rewritten onto the view
NEGATIVE = [
    ("lossy", "SELECT id, b FROM nums", "MISSING_COLUMN"),  # BIGINT -> INT, -> DOUBLE
    ("lossy", "SELECT id, d FROM nums", "MISSING_COLUMN"),  # fewer digits, DOUBLE
    ("lossy", "SELECT id FROM nums WHERE d = 1.1", "MISSING_COLUMN"),
    ("lossy", "SELECT id, x FROM nums", "MISSING_COLUMN"),  # DOUBLE -> INT, -> FLOAT
    ("lossy", "SELECT id FROM nums WHERE i = 5", "MISSING_COLUMN"),  # FLOAT, DECIMAL(9,0), STRING
    ("lossy", "SELECT id, str FROM nums", "MISSING_COLUMN"),  # STRING -> INT
    ("lossy", "SELECT id FROM nums WHERE dt = '2021-01-02'", "MISSING_COLUMN"),  # -> TIMESTAMP
    ("by_ib", "SELECT b, COUNT(*) AS c FROM nums GROUP BY b", "MISSING_COLUMN"),
    ("by_ib", "SELECT i, MAX(amount) AS m FROM nums GROUP BY i", "CANNOT_ROLL_UP"),
    ("by_idouble", "SELECT b, COUNT(*) AS c FROM nums GROUP BY b", "MISSING_COLUMN"),
]  # fmt: skip


def model(folder: Path, warehouse: Path | None = None) -> Model:
    path = folder / "lc_rewrite.yaml"
    path.write_text(MODEL)
    return load_model(path, warehouse=str(warehouse or folder / "warehouse"))


def context(loaded: Model, *names: str, types: dict | None = None) -> RewriteContext:
    items = [Materialization(name=n, schema=SCHEMA, table=n, sql=VIEWS[n]) for n in names]
    return context_for(
        loaded, tiles=(), materializations=items, types=TYPES if types is None else types
    )
