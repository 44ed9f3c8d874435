"""Tile tables in Delta: write one atomically with its record, read the record back, register
it in Spark's catalog (dropping one: `trash`).

A write is ONE Delta commit — `CREATE OR REPLACE TABLE … TBLPROPERTIES (record) AS SELECT` —
so readers see the previous version, with its own record, until the new one commits; a job
killed mid-write leaves the previous version in place (its data files become orphans that
Delta's VACUUM removes). The commit carries the record itself as its `userMetadata` (a write
option, not the session conf: builds run on several threads of one session), so a later
commit by anyone else shows (see `identity.tile_change`), and a merge written by delta-rs
(`local_merge`), which cannot set properties, still carries its record: a table's record is
its newest data commit's when that is mvlattice's, else the one in its properties.

A tile of few rows is written as one file. A tile of many rows is written sorted by its
dimensions, fewest distinct values first: long runs of equal values compress several times
better, and Parquet's page statistics and Delta's file statistics then let a filter on a
leading dimension skip most of the tile.
"""

from __future__ import annotations

import contextlib
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from mvlattice.delta import log as deltalog
from mvlattice.delta import reader, storage
from mvlattice.jobs.identity import tile_change
from mvlattice.jobs.record import (
    TileRecord,
    commit_tag,
    from_properties,
    record_from_tag,
    to_properties,
)
from mvlattice.jobs.tilesql import q, sql_string
from mvlattice.jobs.vacuum import retention_property
from mvlattice.sql.stored_names import renamed, stored_names

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Below this many rows a tile is one small file: sorting would cost a job and gain nothing.
SORT_MIN_ROWS = 100_000
# Data files looked for on every read of a table's state (a stat each, locally).
PROBE_FILES = 16


@dataclass(frozen=True, slots=True)
class TableState:
    """A tile table as it is on storage now."""

    version: int
    record: TileRecord | None  # None: a Delta table there, but not one mvlattice wrote
    size_bytes: int | None
    files: int | None
    # Why its rows may not be what `record` describes (someone else's DELETE/INSERT); None: ours.
    tile_change: str | None
    # Data files of this version to look for on every read (from Delta's checksum), so a table
    # whose log outlived its files reads as no table, never as fresh; empty: not known.
    probe: tuple[str, ...] = ()


class TableReader:
    """Reads tile tables' records; each (location, version) is asked of Delta only once. A
    table whose data files are gone (its log left behind by an interrupted delete) is None."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self._cache: dict[tuple[str, int], TableState] = {}
        self._lock = threading.Lock()

    def state(self, location: str) -> TableState | None:
        """None when there is no Delta table at `location`."""
        version = deltalog.latest_version(self.spark, location)
        if version is None:
            return None
        key = (location, version)
        with self._lock:
            cached = self._cache.get(key)
        if cached is None:
            cached = self._read(location, version)
            with self._lock:
                self._cache[key] = cached
        if cached.probe and not storage.files_exist(self.spark, location, cached.probe):
            return None
        return cached

    def _read(self, location: str, version: int) -> TableState:
        # The newest data commit: ours carries the record (`record.commit_tag`); anyone
        # else's means the rows are no longer what any record says.
        last = deltalog.last_data_commit(self.spark, location, version)
        tagged = record_from_tag(last.user_metadata) if last is not None else None
        crc = deltalog.checksum(self.spark, location, version)
        if crc is not None:  # the fast path: Delta's checksum file of that version
            props = crc["metadata"].get("configuration") or {}
            size, files = crc.get("tableSizeBytes"), crc.get("numFiles")
            probe = _probe(crc)
        elif (found := reader.detail(location, version)) is not None:  # a version delta-rs wrote
            props, size, files = found.configuration, found.size_bytes, len(found.files)
            probe = _relative(found.files)
        else:
            row = self.spark.sql(f"DESCRIBE DETAIL delta.{q(location)}").first()
            if row is None:
                return TableState(version, None, None, None, None)
            props, size, files = dict(row["properties"] or {}), row["sizeInBytes"], row["numFiles"]
            probe = ()
        if tagged is not None:
            return TableState(version, tagged, size, files, None, probe)
        record = from_properties(props)
        change = tile_change(record, last) if record is not None else None
        return TableState(version, record, size, files, change, probe)


def _probe(crc: dict) -> tuple[str, ...]:
    """Relative paths of (up to PROBE_FILES of) the version's data files, when the checksum
    lists them (Delta does for tables of few files: tiles, mostly)."""
    from urllib.parse import unquote

    listed = crc.get("allFiles")
    if not isinstance(listed, list):
        return ()
    paths = [unquote(str(f.get("path"))) for f in listed if isinstance(f, dict) and f.get("path")]
    return _relative(paths)


def _relative(paths: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted(p for p in paths if "://" not in p and not p.startswith("/")))[:PROBE_FILES]


def column_types(spark: SparkSession, location: str, version: int | None = None) -> dict[str, str]:
    """Column name -> Spark SQL type of the Delta table at `location`."""
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    return {f.name: f.dataType.simpleString() for f in reader.load(location).schema.fields}


def write_table(
    spark: SparkSession,
    location: str,
    select_sql: str,
    record_for: Callable[[int], TileRecord],
    sort_by: Sequence[str] = (),
    retention_seconds: float | None = None,
) -> TileRecord:
    """Compute `select_sql` once (cached), count it, and commit it with its record; sorted
    by `sort_by` (see `clustering_order`) when it has at least SORT_MIN_ROWS rows. With
    `retention_seconds`, the table's vacuum retention is set in the same commit. Outputs
    Delta would reject (unnamed expressions, repeated names) are stored under the names
    `sql.stored_names` gives them, recorded in the record's `renamed`."""
    frame = spark.sql(select_sql)
    renames = tuple(renamed(frame.columns).items())
    if renames:
        frame = frame.toDF(*stored_names(frame.columns))
    frame = frame.cache()
    view = "mvlattice_build_" + uuid.uuid4().hex[:12]
    try:
        rows = frame.count()
        record = replace(record_for(rows), renamed=renames)
        order = clustering_order(frame, sort_by) if sort_by and rows >= SORT_MIN_ROWS else ()
        frame.createOrReplaceTempView(view)
        properties = to_properties(record)
        if retention_seconds is not None:
            properties.update((retention_property(retention_seconds),))
        props = ", ".join(f"{sql_string(k)} = {sql_string(v)}" for k, v in properties.items())
        order_sql = f" ORDER BY {', '.join(q(c) for c in order)}" if order else ""
        # A small table is one file: one task writes it, and a reader opens one file.
        one_file = "/*+ COALESCE(1) */ " if rows < SORT_MIN_ROWS else ""
        tag = sql_string(commit_tag(record))
        spark.sql(
            f"CREATE OR REPLACE TABLE delta.{q(location)} USING delta "
            f"OPTIONS ('userMetadata' = {tag}) "
            f"TBLPROPERTIES ({props}) AS SELECT {one_file}* FROM {q(view)}{order_sql}"
        )
    finally:
        spark.catalog.dropTempView(view)
        frame.unpersist()
    return record


def clustering_order(frame: DataFrame, columns: Sequence[str]) -> tuple[str, ...]:
    """`columns` by their (approximate) number of distinct values in `frame`, fewest first."""
    from pyspark.sql import functions as F

    counts = frame.agg(*(F.approx_count_distinct(c).alias(f"_{i}") for i, c in enumerate(columns)))
    row = counts.first()
    assert row is not None
    return tuple(c for _, c in sorted(zip(row, columns, strict=True), key=lambda p: p[0]))


def register(spark: SparkSession, name: str, location: str) -> None:
    """Make the table at `location` queryable as `name` (database.table) in this session."""
    database, _, table = name.rpartition(".")
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {q(database)}")
    spark.sql(
        f"CREATE TABLE IF NOT EXISTS {q(database)}.{q(table)} USING delta "
        f"LOCATION {sql_string(location)}"
    )


def job_group_id(target: str) -> str:
    return f"mvlattice:{target}"


@contextlib.contextmanager
def job_group(spark: SparkSession, target: str, description: str) -> Iterator[None]:
    """Tag this thread's Spark jobs so `cancel(spark, target)` can stop them."""
    sc = spark.sparkContext
    previous = sc.getLocalProperty("spark.jobGroup.id")
    sc.setJobGroup(job_group_id(target), description, interruptOnCancel=True)
    try:
        yield
    finally:
        sc.setLocalProperty("spark.jobGroup.id", previous)  # type: ignore[arg-type]
        sc.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]


def cancel(spark: SparkSession, target: str) -> None:
    """Cancel the running Spark jobs of a build; the previous table version stays valid."""
    spark.sparkContext.cancelJobGroup(job_group_id(target))
