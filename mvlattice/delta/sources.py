"""What a source table's data is right now, as one identity: what the statistics cache keys its
counts on and what a tile's freshness compares. One definition for both.

- Delta tables by location: the commit version (exact) and the table id at that version (a
  table deleted and recreated restarts its versions), read by `reader` (delta-rs, Spark when
  it must).
- Parquet/CSV tables: a fingerprint of their file listing (count, bytes, newest modification
  time). LIMITATION: a rewrite that keeps the same file names, sizes and times, or a clock that
  goes backwards, goes unnoticed; such tables also cannot be read "as of" the fingerprint.
- Tables of `catalog` schemas: their Delta version when DESCRIBE HISTORY works (and their id
  from DESCRIBE DETAIL), else unknown.

Absent and unreadable are told apart: a Delta location with no table has version None (absent,
as a catalog table whose version is unknown); one whose log cannot be read carries the reason
in `unreadable`, so callers can say so instead of taking the table for gone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from mvlattice.delta import reader, storage
from mvlattice.errors import TableUnreadable
from mvlattice.sql.quote import identifier

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Version = int | str | None  # Delta version | file-listing fingerprint | unknown


class SourceTable(Protocol):
    """What a source table must tell about itself (the model's `Table` does)."""

    @property
    def qualified_name(self) -> str: ...
    @property
    def location(self) -> str | None: ...
    @property
    def format(self) -> str | None: ...
    @property
    def catalog_name(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class SourceVersion:
    """One source's identity now. `version` None with `unreadable` None: absent or unknown."""

    version: Version
    table_id: str | None = None  # Delta tables only
    unreadable: str | None = None  # why the table's log could not be read (version is None)

    @property
    def cacheable(self) -> bool:
        """Whether counts over this data may be kept: a known version, and an id when Delta."""
        if isinstance(self.version, int):
            return self.table_id is not None
        return self.version is not None


def source_versions(
    spark: SparkSession | None, tables: Iterable[SourceTable]
) -> dict[str, SourceVersion]:
    """`schema.table` -> its `SourceVersion`, for each of `tables`."""
    return {table.qualified_name: source_version(spark, table) for table in tables}


def source_version(spark: SparkSession | None, table: SourceTable) -> SourceVersion:
    if table.location is None:
        if spark is None:
            return SourceVersion(None)
        return _catalog(spark, quoted(table.catalog_name or table.qualified_name))
    if (table.format or "delta") != "delta":
        try:
            return SourceVersion(fingerprint(spark, table.location))
        except Exception as exc:  # noqa: BLE001 - the store refused the listing
            return SourceVersion(None, unreadable=reader.first_line(exc))
    try:
        found = reader.snapshot(spark, table.location)
    except TableUnreadable as exc:
        return SourceVersion(None, unreadable=exc.reason)
    return SourceVersion(None) if found is None else SourceVersion(found.version, found.table_id)


def fingerprint(spark: SparkSession | None, location: str) -> str:
    """A Parquet/CSV table's file listing in one string: count, bytes, newest modification."""
    files = storage.data_files(spark, location)
    newest = max((f.mtime for f in files), default=0.0)
    return f"files={len(files)};bytes={sum(f.size for f in files)};mtime={newest:.3f}"


def quoted(name: str) -> str:
    """A dotted catalog name, each part quoted."""
    return ".".join(identifier(part) for part in name.split("."))


def _catalog(spark: SparkSession, name: str) -> SourceVersion:
    """A catalog table: its Delta version, then its id (a newer table's id reads as changed
    next time, never as wrongly unchanged); unknown when it is not Delta."""
    try:
        row = spark.sql(f"DESCRIBE HISTORY {name} LIMIT 1").first()
    except Exception:  # noqa: BLE001 - not a Delta table: its version is unknown
        return SourceVersion(None)
    if row is None:
        return SourceVersion(None)
    try:
        detail = spark.sql(f"DESCRIBE DETAIL {name}").first()
    except Exception:  # noqa: BLE001 - no id to key on
        detail = None
    delta = detail is not None and str(detail["format"]).lower() == "delta" and detail["id"]
    return SourceVersion(int(row["version"]), str(detail["id"]) if detail and delta else None)
