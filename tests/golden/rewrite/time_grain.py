"""Time-grain rollup cases (issue 20, class 2): a table of events with a TIMESTAMP and a DATE
column, views grouped by day and by week, and the queries each must or must not answer.

Shared by the unit tests (the rewrite without Spark) and the integration tests (original and
rewritten SQL compared on Spark, as multisets).
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

from mvlattice.model.loader import Materialization, Model, load_model
from mvlattice.mvrewrite.context import context_for
from mvlattice.mvrewrite.rewriter import RewriteContext

SCHEMA = "tg_rewrite"
MODEL = f"""
version: "1.0"
defaultSchema: {SCHEMA}
schemas:
  - name: {SCHEMA}
    type: delta
    location: {SCHEMA}
    tables:
      - name: events
        columns: [id, ts, d, amount]
        primaryKey: [id]
"""
DDL = "id INT, ts TIMESTAMP, d DATE, amount DECIMAL(10,2)"
TYPES = {
    (f"{SCHEMA}.events", "id"): "INT",
    (f"{SCHEMA}.events", "ts"): "TIMESTAMP",
    (f"{SCHEMA}.events", "d"): "DATE",
    (f"{SCHEMA}.events", "amount"): "DECIMAL(10,2)",
}


def _event(i: int, when: str, amount: str | None) -> tuple[Any, ...]:
    ts = dt.datetime.fromisoformat(when)
    return (i, ts, ts.date(), None if amount is None else Decimal(amount))


# Month, quarter and year boundaries inside one week (2020-12-28 .. 2021-01-03 is one week;
# 2021-03-29 .. 2021-04-04 straddles March/April and Q1/Q2), midnight and late-evening
# rows, a NULL amount, and a NULL-free day with several rows.
ROWS = [
    _event(1, "2020-12-30 23:59:59", "10.00"),
    _event(2, "2021-01-01 00:00:00", "20.00"),
    _event(3, "2021-01-01 13:30:00", None),
    _event(4, "2021-02-28 23:00:00", "5.50"),
    _event(5, "2021-03-01 00:00:00", "7.25"),
    _event(6, "2021-03-15 10:15:00", "1.00"),
    _event(7, "2021-03-15 18:45:10", "2.00"),
    _event(8, "2021-03-31 23:59:59", "3.00"),
    _event(9, "2021-04-01 00:00:01", "4.00"),
    _event(10, "2021-04-04 12:00:00", "8.00"),
    _event(11, "2021-07-01 06:00:00", "9.00"),
    _event(12, "2022-01-02 00:00:00", "11.00"),
]

VIEWS = {
    "by_day": "SELECT date_trunc('day', ts) AS day, COUNT(*) AS c, SUM(amount) AS s, "
    "COUNT(amount) AS n FROM events GROUP BY date_trunc('day', ts)",
    "by_week": "SELECT date_trunc('week', ts) AS wk, COUNT(*) AS c, SUM(amount) AS s "
    "FROM events GROUP BY date_trunc('week', ts)",
    "by_date": "SELECT d, COUNT(*) AS c FROM events GROUP BY d",
    "by_to_date": "SELECT to_date(ts) AS day, COUNT(*) AS c FROM events GROUP BY to_date(ts)",
    "day_rows": "SELECT id, date_trunc('day', ts) AS day, amount FROM events",
}

# (view, query): each must be rewritten onto the view
POSITIVE = [
    ("by_day", "SELECT date_trunc('month', ts) AS m, SUM(amount) AS s FROM events "
     "GROUP BY date_trunc('month', ts)"),
    ("by_day", "SELECT year(ts) AS y, quarter(ts) AS q, month(ts) AS mo, COUNT(*) AS c "
     "FROM events GROUP BY year(ts), quarter(ts), month(ts)"),
    ("by_day", "SELECT date_trunc('quarter', ts) AS q, date_trunc('year', ts) AS y, "
     "AVG(amount) AS a FROM events GROUP BY date_trunc('quarter', ts), date_trunc('year', ts)"),
    ("by_day", "SELECT to_date(ts) AS d, COUNT(*) AS c FROM events GROUP BY to_date(ts)"),
    ("by_day", "SELECT CAST(ts AS DATE) AS d, trunc(ts, 'MM') AS m, COUNT(*) AS c FROM events "
     "GROUP BY CAST(ts AS DATE), trunc(ts, 'MM')"),
    ("by_day", "SELECT date_trunc('week', ts) AS w, dayofweek(ts) AS dow, COUNT(*) AS c "
     "FROM events GROUP BY date_trunc('week', ts), dayofweek(ts)"),
    ("by_day", "SELECT month(ts) AS mo, SUM(amount) AS s FROM events "
     "WHERE ts >= '2021-03-01' AND ts < '2021-04-01' GROUP BY month(ts)"),
    ("by_day", "SELECT COUNT(*) AS c FROM events "
     "WHERE ts >= TIMESTAMP '2021-01-01 00:00:00' AND ts < DATE '2021-07-01'"),
    ("by_day", "SELECT year(ts) AS y, COUNT(*) AS c FROM events "
     "WHERE year(ts) = 2021 AND month(ts) IN (3, 4) GROUP BY year(ts)"),
    ("by_day", "SELECT date_trunc('month', ts) AS m, COUNT(*) AS c FROM events "
     "GROUP BY date_trunc('month', ts) HAVING COUNT(*) > 1 ORDER BY m"),
    ("by_week", "SELECT trunc(ts, 'week') AS w, COUNT(*) AS c FROM events "
     "WHERE ts >= '2021-03-01' AND ts < '2021-04-05' GROUP BY trunc(ts, 'week')"),
    ("by_week", "SELECT COUNT(*) AS c FROM events WHERE ts >= '2021-03-01'"),  # a Monday
    ("by_date", "SELECT date_trunc('month', d) AS m, COUNT(*) AS c FROM events "
     "WHERE d >= '2021-01-01' GROUP BY date_trunc('month', d)"),
    ("by_to_date", "SELECT year(ts) AS y, trunc(ts, 'QUARTER') AS q, COUNT(*) AS c FROM events "
     "GROUP BY year(ts), trunc(ts, 'QUARTER')"),
    ("day_rows", "SELECT id, month(ts) AS mo, amount FROM events WHERE ts < '2021-04-01'"),
]  # fmt: skip

# (view, query, reason): each must not be rewritten onto the view
NEGATIVE = [
    ("by_week", "SELECT date_trunc('month', ts) AS m, COUNT(*) AS c FROM events "
     "GROUP BY date_trunc('month', ts)", "MISSING_COLUMN"),
    ("by_week", "SELECT quarter(ts) AS q, COUNT(*) AS c FROM events GROUP BY quarter(ts)",
     "MISSING_COLUMN"),
    ("by_week", "SELECT year(ts) AS y, COUNT(*) AS c FROM events GROUP BY year(ts)",
     "MISSING_COLUMN"),
    ("by_week", "SELECT trunc(ts, 'YEAR') AS y, COUNT(*) AS c FROM events "
     "GROUP BY trunc(ts, 'YEAR')", "MISSING_COLUMN"),
    ("by_week", "SELECT COUNT(*) AS c FROM events WHERE ts >= '2021-03-02'",
     "MISSING_COLUMN"),  # a Tuesday
    ("by_week", "SELECT COUNT(*) AS c FROM events WHERE ts < '2021-04-01'", "MISSING_COLUMN"),
    ("by_day", "SELECT hour(ts) AS h, COUNT(*) AS c FROM events GROUP BY hour(ts)",
     "MISSING_COLUMN"),
    ("by_day", "SELECT date_trunc('hour', ts) AS h, COUNT(*) AS c FROM events "
     "GROUP BY date_trunc('hour', ts)", "MISSING_COLUMN"),
    ("by_day", "SELECT ts, COUNT(*) AS c FROM events GROUP BY ts", "MISSING_COLUMN"),
    ("by_day", "SELECT COUNT(*) AS c FROM events WHERE ts >= '2021-03-15 10:00:00'",
     "MISSING_COLUMN"),
    ("by_day", "SELECT COUNT(*) AS c FROM events WHERE ts <= '2021-03-31'", "MISSING_COLUMN"),
    ("by_day", "SELECT COUNT(*) AS c FROM events WHERE ts > '2021-03-01'", "MISSING_COLUMN"),
    ("by_day", "SELECT COUNT(*) AS c FROM events WHERE ts = '2021-03-01'", "MISSING_COLUMN"),
    ("by_day", "SELECT to_date(ts, 'yyyy-MM-dd') AS d, COUNT(*) AS c FROM events "
     "GROUP BY to_date(ts, 'yyyy-MM-dd')", "MISSING_COLUMN"),
    ("by_day", "SELECT MAX(ts) AS latest FROM events", "CANNOT_ROLL_UP"),
]  # fmt: skip


def model(folder: Path, warehouse: Path | None = None) -> Model:
    path = folder / "tg_rewrite.yaml"
    path.write_text(MODEL)
    return load_model(path, warehouse=str(warehouse or folder / "warehouse"))


def context(loaded: Model, *names: str, types: dict | None = None) -> RewriteContext:
    items = [Materialization(name=n, schema=SCHEMA, table=n, sql=VIEWS[n]) for n in names]
    return context_for(
        loaded, tiles=(), materializations=items, types=TYPES if types is None else types
    )
