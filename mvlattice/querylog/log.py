"""The query log: every rewrite/query request, as a Delta table in the warehouse.

Location `<warehouse>/_mvlattice/query_log`; one row per request with its time (UTC), the
normalized SQL, the fingerprint of its shape (literals blanked, see `fingerprint`), the kind of
request, whether it was rewritten and onto which views, latency, outcome (`ok` or an error
code), source (`http`, `cli`), model, a message, `engine` (who answered a query: `local`, the
tile engine, or `spark`; empty for a rewrite, a failed request and rows written before the column
existed) and `sql_form`, which says what `sql` holds:

- `full`: the normalized SQL (rows written before the column existed read as `full`);
- `blanked`: literals replaced by `?` (`serve --query-log-literals blank`; the message, which
  may quote the SQL, is then not stored);
- `truncated`: the first `MAX_SQL_BYTES` (64 KiB) of the UTF-8 text — not SQL any more;
- `omitted`: no text (literals were to be blanked but the SQL did not parse).

Readers of workloads (`query_log_sql`, the suggester's `table_records`) skip `truncated` and
`omitted` rows rather than mis-parse them. The service appends in small batches on
a background thread (`querylog_writer.QueryLogWriter`), never on the request path; Delta
appends from several processes commit without conflict. The suggester and HRU's workload
weights read it through `read_log`, `query_log_sql` and `query_log_weighted`.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mvlattice.errors import Outcome, UsageError
from mvlattice.model.durations import parse_duration
from mvlattice.settings import join_location
from mvlattice.sql.fingerprint import blank_literals, describe, parse_statement

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession


SCHEMA = (
    "time TIMESTAMP, sql STRING, fingerprint STRING, kind STRING, rewritten BOOLEAN, "
    "views ARRAY<STRING>, latency_ms DOUBLE, outcome STRING, source STRING, model STRING, "
    "message STRING, sql_form STRING, engine STRING"
)
COLUMNS = tuple(part.split()[0] for part in SCHEMA.split(", "))
MAX_SQL_BYTES = 64 * 1024  # a log row is a workload sample, not an archive of request bodies
USABLE_FORMS = ("full", "blanked")  # the `sql_form`s a reader may parse
Literals = Literal["keep", "blank"]


@dataclass(kw_only=True, frozen=True, slots=True)
class Request:
    """One request as the service saw it — cheap to make on the request path."""

    at: float  # seconds since the epoch
    sql: str
    kind: str  # rewrite | query
    rewritten: bool
    views: tuple[str, ...]
    latency_ms: float
    outcome: Outcome  # ok | an error code (bad_sql, not_found, …)
    source: str = "http"  # http | cli
    model: str = ""
    message: str | None = None
    engine: str = ""  # who answered a query: local | spark ("" for a rewrite or a failure)


@dataclass(kw_only=True, frozen=True, slots=True)
class LogRecord:
    """One row of the query-log table."""

    time: dt.datetime  # aware, UTC
    sql: str  # normalized
    fingerprint: str
    kind: str
    rewritten: bool
    views: tuple[str, ...]
    latency_ms: float
    outcome: str
    source: str
    model: str
    message: str | None
    sql_form: str = "full"  # full | blanked | truncated | omitted (see the module's docstring)
    engine: str = ""  # local | spark; "" when nothing ran or the row predates the column

    def __post_init__(self) -> None:
        # Checked here, on the writer thread, so that a malformed record is set aside alone
        # instead of making Spark refuse the whole batch it would have been appended with.
        aware = isinstance(self.time, dt.datetime) and self.time.tzinfo is not None
        _check(aware, "time must be a timezone-aware datetime")
        texts = (self.sql, self.fingerprint, self.kind, self.outcome, self.source, self.model,
                 self.engine)  # fmt: skip
        _check(all(isinstance(t, str) for t in texts), "text fields must be strings")
        _check(self.message is None or isinstance(self.message, str), "message must be text")
        _check(isinstance(self.rewritten, bool), "rewritten must be a bool")
        _check(all(isinstance(v, str) for v in self.views), "views must be strings")
        _check(isinstance(self.latency_ms, float), "latency_ms must be a float")
        _check(self.sql_form in ("full", "blanked", "truncated", "omitted"), "bad sql_form")

    def row(self) -> tuple[Any, ...]:
        return tuple(list(self.views) if c == "views" else getattr(self, c) for c in COLUMNS)

    def to_json(self) -> dict[str, Any]:
        out = {c: getattr(self, c) for c in COLUMNS}
        out["time"], out["views"] = self.time.isoformat(), list(self.views)
        return out


def to_record(request: Request, literals: Literals = "keep") -> LogRecord:
    """Normalize and fingerprint a request (a sqlglot parse: done off the request path).
    Any SQL text works (see `fingerprint`); a request with malformed fields raises."""
    # Blanking needs the tree too: parse once for both (describe alone is cached by text).
    tree = parse_statement(request.sql) if literals == "blank" else None
    normalized, shape_id = describe(request.sql, tree)
    message, form = request.message, "full"
    if literals == "blank":
        blanked = blank_literals(request.sql, tree) if tree is not None else None
        normalized, form = (blanked, "blanked") if blanked is not None else ("", "omitted")
        message = None  # Spark's and sqlglot's messages quote the offending SQL
    normalized, cut = cap_sql(normalized)
    return LogRecord(
        time=dt.datetime.fromtimestamp(request.at, dt.UTC),
        sql=normalized,
        fingerprint=shape_id,
        kind=request.kind,
        rewritten=request.rewritten,
        views=tuple(request.views),
        latency_ms=float(request.latency_ms),
        outcome=str(request.outcome),  # the table holds plain text; older rows any code
        source=request.source,
        model=request.model,
        message=message,
        sql_form="truncated" if cut else form,
        engine=str(request.engine or ""),  # an Engine is plain text in the table
    )


def cap_sql(sql: str, limit: int = MAX_SQL_BYTES) -> tuple[str, bool]:
    """The SQL cut to `limit` UTF-8 bytes (never inside a character), and whether it was cut."""
    data = sql.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return sql, False
    return data[:limit].decode("utf-8", "ignore"), True


def log_location(warehouse: str) -> str:
    return join_location(warehouse, "_mvlattice", "query_log")


# -- writing -----------------------------------------------------------------------------------
def append(spark: SparkSession, warehouse: str, records: Iterable[LogRecord]) -> int:
    """Append records to the table (created by the first append); the number written. A local
    table is appended to by delta-rs from Arrow columns (no Python work per value, no Spark
    job: a serving process's requests do not wait behind it); anything delta-rs or Arrow
    refuses, and every remote table, by Spark, which says what it refuses in its own words."""
    from mvlattice.delta import storage
    from mvlattice.delta.writer import AppendRefused
    from mvlattice.delta.writer import append as append_locally

    batch = list(records)
    if not batch:
        return 0
    location = log_location(warehouse)
    if storage.local_path(location) is not None:
        try:
            append_locally(location, arrow_rows(batch))
            return len(batch)
        except (AppendRefused, ValueError, TypeError) as exc:  # Arrow refuses a value so
            logging.getLogger("mvlattice.service").debug("query log: Spark appends: %s", exc)
    frame = spark.createDataFrame([r.row() for r in batch], SCHEMA).coalesce(1)  # one file
    writer = frame.write.format("delta").mode("append")
    # mergeSchema: a table written before `sql_form` or `engine` existed gains the column
    writer.option("mergeSchema", "true").save(location)
    return len(batch)


def arrow_rows(records: Iterable[LogRecord]) -> pa.Table:
    """The records as an Arrow table of the log's schema (Spark's types; raises what Arrow
    raises for a value of the wrong type)."""
    import pyarrow as pa

    batch = list(records)
    types = {
        "time": pa.timestamp("us", tz="UTC"),
        "rewritten": pa.bool_(),
        "views": pa.list_(pa.string()),
        "latency_ms": pa.float64(),
    }
    columns = {
        c: pa.array(
            [list(r.views) if c == "views" else getattr(r, c) for r in batch],
            types.get(c, pa.string()),
        )
        for c in COLUMNS
    }
    return pa.table(columns)


def log_now(spark: SparkSession, warehouse: str, requests: Iterable[Request]) -> int:
    """Append at once, for callers without a writer thread (the CLI's rewrite and query);
    never raises — a failure to log must not fail the command — and returns rows written."""
    try:
        return append(spark, warehouse, [to_record(r) for r in requests])
    except Exception as exc:  # noqa: BLE001
        logging.getLogger("mvlattice.service").warning("query log: append failed: %s", exc)
        return 0


# -- reading -----------------------------------------------------------------------------------
def parse_since(text: str | None, now: dt.datetime | None = None) -> dt.datetime | None:
    """'2h', '7d', '90s' (ago) or an ISO date/time (UTC unless it says otherwise)."""
    if text is None:
        return None
    now = now or dt.datetime.now(dt.UTC)
    try:
        return now - dt.timedelta(seconds=parse_duration(text))
    except ValueError:
        pass
    try:
        when = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(
            f"--since '{text}': give a duration ago (e.g. '2h', '7d') or an ISO date/time"
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def read_log(
    warehouse: str, since: dt.datetime | str | None = None, *, spark: SparkSession | None = None
) -> tuple[LogRecord, ...]:
    """The logged requests (since a time, if given), oldest first; none before the first."""
    return read_table(log_location(warehouse), since, spark=spark, warehouse=warehouse)


def read_table(
    location: str,
    since: dt.datetime | str | None = None,
    *,
    spark: SparkSession | None = None,
    warehouse: str | None = None,
) -> tuple[LogRecord, ...]:
    from pyspark.sql import functions as F

    from mvlattice.delta.log import latest_version

    session = spark or _session(warehouse or _warehouse_of(location))
    if latest_version(session, location) is None:
        return ()
    frame = session.read.format("delta").load(location)
    start = parse_since(since) if isinstance(since, str) else since
    if start is not None:
        frame = frame.where(F.col("time") >= F.lit(start))
    rows = frame.orderBy("time").collect()
    return tuple(_record(row.asDict()) for row in rows)


def query_log_sql(
    warehouse: str, since: dt.datetime | str | None = None, *, spark: SparkSession | None = None
) -> list[str]:
    """The SQL of every logged request that was valid SQL, oldest first (a workload)."""
    return [r.sql for r in read_log(warehouse, since, spark=spark) if _usable(r)]


def query_log_weighted(
    warehouse: str, since: dt.datetime | str | None = None, *, spark: SparkSession | None = None
) -> list[tuple[str, float]]:
    """(SQL, times asked) per distinct logged query, most asked first — the shape HRU's
    weighted workload takes (`lattice.workload.workload_from_sql`)."""
    counts = Counter(query_log_sql(warehouse, since, spark=spark))
    return [(sql, float(n)) for sql, n in counts.most_common()]


def table_records(location: str) -> list[dict[str, Any]]:
    """The suggester's reader for a query-log table: records with `sql`, `ts` and `id`."""
    return [
        {"sql": r.sql, "ts": r.time.isoformat(), "id": f"{r.fingerprint}@{r.time.isoformat()}"}
        for r in read_table(location)
        if _usable(r)
    ]


def _usable(record: LogRecord) -> bool:
    """SQL worth parsing as a workload sample: valid, and stored whole."""
    return (
        record.outcome not in (Outcome.BAD_SQL, Outcome.UNSUPPORTED_SQL, Outcome.BAD_REQUEST)
        and record.sql_form in USABLE_FORMS
        and bool(record.sql)
    )


def _check(condition: bool, problem: str) -> None:
    if not condition:
        raise TypeError(f"query-log record: {problem}")


def _record(row: dict[str, Any]) -> LogRecord:
    when = row["time"]
    when = when.astimezone(dt.UTC) if when is not None else dt.datetime.fromtimestamp(0, dt.UTC)
    values: dict[str, Any] = {c: row.get(c) for c in COLUMNS}
    values["time"], values["views"] = when, tuple(row.get("views") or ())
    values["sql"], values["sql_form"] = values["sql"] or "", values["sql_form"] or "full"
    for name in ("fingerprint", "kind", "outcome", "source", "model", "engine"):
        values[name] = values[name] or ""  # null, or a column the table predates, reads ""
    values["rewritten"] = bool(values["rewritten"])
    values["latency_ms"] = float(values["latency_ms"] or 0.0)
    return LogRecord(**values)


def _warehouse_of(location: str) -> str:
    """The warehouse of `<warehouse>/_mvlattice/query_log` (else the table's own folder)."""
    parts = location.rstrip("/").rsplit("/", 2)
    return parts[0] if len(parts) == 3 and parts[1] == "_mvlattice" else location


def _session(warehouse: str) -> SparkSession:
    from pyspark.sql import SparkSession

    from mvlattice.spark import build_session, resolve_master, spark_conf

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    master = resolve_master(None)
    return build_session(master, warehouse, spark_conf(master, warehouse, ()))
