"""A Delta table's version, table id and schema: through delta-rs where no Spark job is needed,
through Spark where it is.

delta-rs (the `deltalake` package) reads local tables (paths and file: URIs) from their log in
about a millisecond, with no JVM: it replays the log (checkpoints included), so a damaged commit
shows here rather than in the middle of a build. Spark answers instead for other URIs (s3a://,
abfss://, …: their credentials live in Spark's Hadoop configuration) and for any local log
delta-rs refuses (a table feature it cannot read): Delta's own DESCRIBE DETAIL and DESCRIBE
HISTORY, with the log listed through Hadoop first for remote tables (no Spark job, see `log`).

Three answers, never confused: a snapshot (version and id), None when there is no Delta table at
the location (no `_delta_log`, or one without commits), `TableUnreadable` when there is one but
neither reader can read it.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from mvlattice.delta import log as deltalog
from mvlattice.delta import newest, storage
from mvlattice.errors import TableUnreadable, first_line
from mvlattice.sql.quote import path_identifier

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession

DELTA_RS, SPARK, HADOOP_LOG = "delta-rs", "spark", "hadoop log"


@dataclass(frozen=True, slots=True)
class TableSnapshot:
    """A Delta table's newest version and its table id (`metaData.id`) at that version."""

    version: int
    table_id: str | None
    reader: str  # delta-rs | spark | hadoop log: who answered


def snapshot(spark: SparkSession | None, location: str) -> TableSnapshot | None:
    """The table's newest version and id; None when no Delta table is at `location`. Raises
    `TableUnreadable` when its log exists but cannot be read."""
    path = storage.local_name(location)
    if path is None:
        return _remote(spark, location)
    log = os.path.join(path, "_delta_log")
    key = _log_key(log)
    if key is not None and key in _SEEN:
        return _SEEN[key]
    if key is None and not os.path.isdir(log):
        return None
    try:
        table = _open(str(Path(path)))
    except _absent_error():
        return None  # a log without commits: no table yet
    except Exception as exc:  # noqa: BLE001 - delta-rs cannot read it: Spark may
        reason = first_line(exc)
        if spark is None:
            raise TableUnreadable(_at(location), reason) from exc
        return spark_snapshot(spark, location, reason)
    found = TableSnapshot(table.version(), str(table.metadata().id), DELTA_RS)
    if key is not None and found.version == key[1]:
        if len(_SEEN) >= _SEEN_LIMIT:
            _SEEN.clear()
        _SEEN[key] = found
    return found


# Snapshots read by delta-rs, by their log's newest commit file: freshness asks on every
# query, and listing the log (microseconds) tells whether anything was committed since.
_SEEN: dict[tuple[str, int, int, int], TableSnapshot] = {}
_SEEN_LIMIT = 1024


def _log_key(log: str) -> tuple[str, int, int, int] | None:
    """(log, newest commit version, its modification time in ns, its size); None when the log
    has no JSON commit to tell by (a table recreated rewrites it: another time)."""
    found = newest.newest_commit(log)
    if found is None:
        return None
    return (log, found.version, found.mtime_ns, found.size)


def spark_snapshot(spark: SparkSession, location: str, tried: str = "") -> TableSnapshot | None:
    """The snapshot as Delta in Spark reads it (a Spark job each: DESCRIBE DETAIL, HISTORY).
    `tried`: why the faster reader failed, for the message when Spark fails too."""
    from delta.tables import DeltaTable

    relation = f"delta.{path_identifier(location)}"
    try:
        if not DeltaTable.isDeltaTable(spark, location):
            if tried:
                raise TableUnreadable(_at(location), tried)
            return None
        detail = spark.sql(f"DESCRIBE DETAIL {relation}").first()
        history = spark.sql(f"DESCRIBE HISTORY {relation} LIMIT 1").first()
    except TableUnreadable:
        raise
    except Exception as exc:  # noqa: BLE001 - Spark's error, in one line, is the reason
        reason = first_line(exc) if not tried else f"{tried}; Spark: {first_line(exc)}"
        raise TableUnreadable(_at(location), reason) from exc
    if history is None:
        return None
    table_id = str(detail["id"]) if detail is not None and detail["id"] else None
    return TableSnapshot(int(history["version"]), table_id, SPARK)


def schema(location: str) -> dict[str, Any] | None:
    """The table's schema as Delta's JSON (`{"type": "struct", "fields": [...]}`, Spark's type
    names) read by delta-rs; None for remote or absent tables and logs it cannot read (the
    caller asks Spark then)."""
    path = storage.local_path(location)
    if path is None or not (path / "_delta_log").is_dir():
        return None
    try:
        found = json.loads(_open(str(path)).schema().to_json())
    except Exception:  # noqa: BLE001 - not readable here: the caller's Spark fallback answers
        return None
    return found if isinstance(found, dict) else None


@dataclass(frozen=True, slots=True)
class Detail:
    """A local Delta table at one version, as delta-rs reads it: what DESCRIBE DETAIL says."""

    configuration: dict[str, str]
    size_bytes: int
    files: tuple[str, ...]  # data files, relative to the table, decoded


def detail(location: str, version: int) -> Detail | None:
    """The table's properties and data files at `version`; None for remote tables and logs
    delta-rs cannot read (the caller asks Spark then)."""
    path = storage.local_path(location)
    if path is None or not (path / "_delta_log").is_dir():
        return None
    try:
        import pyarrow as pa
        from deltalake import DeltaTable

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            table = DeltaTable(str(path), version=version)
            adds = pa.table(table.get_add_actions(flatten=True))
            configuration = dict(table.metadata().configuration)
    except Exception:  # noqa: BLE001 - not readable here: the caller's Spark fallback answers
        return None
    files = tuple(unquote(str(p)) for p in adds.column("path").to_pylist())
    size = sum(int(n or 0) for n in adds.column("size_bytes").to_pylist())
    return Detail({str(k): str(v) for k, v in configuration.items()}, size, files)


def rows(location: str, version: int) -> pa.Table:
    """Every row of the local Delta table at `location` as of `version` (delta-rs, no JVM),
    typed as the table's schema. Read by delta-rs's own engine: `to_pyarrow_table` scans
    through a PyArrow dataset whose threads may still run at interpreter exit, which then
    aborts the process (delta-rs #2184, arrow #34314)."""
    import pyarrow as pa
    from deltalake import DeltaTable, QueryBuilder

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        table = DeltaTable(location, version=version)
        schema = pa.schema(table.schema().to_arrow())
        found = pa.table(QueryBuilder().register("t", table).execute("SELECT * FROM t"))
    return found.select(schema.names).cast(schema)


def _at(location: str) -> str:
    return f"the Delta table at {location}"


def _remote(spark: SparkSession | None, location: str) -> TableSnapshot | None:
    """A remote table: its log listed through Hadoop (no Spark job), the id from its checksum
    or commits, DESCRIBE when the log alone cannot say (checkpoint-only logs)."""
    if spark is None:
        raise TableUnreadable(_at(location), "a remote table is read through Spark: none running")
    try:
        names = storage.child_names(spark, deltalog.log_location(location))
    except Exception as exc:  # noqa: BLE001 - the store refused the listing
        raise TableUnreadable(_at(location), first_line(exc)) from exc
    version = deltalog.newest_commit(names)
    if version is None:
        return spark_snapshot(spark, location) if names else None
    return TableSnapshot(version, deltalog.table_id(spark, location, version), HADOOP_LOG)


def _open(path: str) -> Any:  # noqa: ANN401 - deltalake.DeltaTable, imported lazily
    from deltalake import DeltaTable

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return DeltaTable(path)


def _absent_error() -> type[Exception]:
    from deltalake.exceptions import TableNotFoundError

    return TableNotFoundError
