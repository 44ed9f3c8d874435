"""Retention of the query log: records older than the retention are deleted, the small files the
writer's batches leave (one per append) are compacted, and Delta then vacuums the files no
version younger than its own retention (7 days by default) still reads — which is when deleted
records (and their literals) are physically gone.

The writer runs `prune` on its own thread, between appends, so one process never compacts while
it writes; appends of other processes (the CLI's `log_now`) commit alongside, as Delta allows
blind appends concurrent with a DELETE or an OPTIMIZE.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mvlattice.model.durations import parse_duration
from mvlattice.querylog.log import log_location

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_RETENTION = "30d"
FOREVER = "forever"
MAX_FILES = 8  # a snapshot of more data files than this is compacted


@dataclass(frozen=True, slots=True)
class Pruned:
    """What one pruning did."""

    deleted: int  # records older than `cutoff`
    files_before: int  # data files of the snapshot before compaction
    files_after: int
    cutoff: dt.datetime | None  # None: every record is kept

    def describe(self) -> str:
        kept = f"older than {self.cutoff.isoformat()}" if self.cutoff else "(retention: forever)"
        return (
            f"deleted {self.deleted} record{'s' if self.deleted != 1 else ''} {kept}; "
            f"data files {self.files_before} -> {self.files_after}"
        )


def parse_retention(text: str) -> float | None:
    """Seconds to keep records ('30d', '12h', '2w') or None for 'forever'. Zero is refused
    rather than read as either 'keep nothing' or 'keep everything'."""
    if text.strip().lower() == FOREVER:
        return None
    try:
        seconds = parse_duration(text.strip())
    except ValueError:
        seconds = 0.0
    if seconds <= 0:
        raise ValueError(f"'{text}': give a duration such as '30d' or '12h', or '{FOREVER}'")
    return seconds


def retention_argument(text: str) -> float | None:
    """`parse_retention` for argparse (`serve --query-log-retention`, `log --prune`)."""
    import argparse

    try:
        return parse_retention(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def prune(
    spark: SparkSession,
    warehouse: str,
    keep: float | None,
    *,
    now: dt.datetime | None = None,
    max_files: int = MAX_FILES,
    vacuum: bool = True,
) -> Pruned:
    """Delete records older than `keep` seconds (None: none), compact past `max_files` data
    files and, if `vacuum` and either happened, vacuum. Cheap when there is nothing to do: a
    count that file statistics answer, and the snapshot's file count."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    from mvlattice.delta.log import latest_version

    location = log_location(warehouse)
    cutoff = None if keep is None else (now or dt.datetime.now(dt.UTC)) - dt.timedelta(seconds=keep)
    if latest_version(spark, location) is None:
        return Pruned(0, 0, 0, cutoff)
    table = DeltaTable.forPath(spark, location)
    deleted = 0
    if cutoff is not None:
        old = F.col("time") < F.lit(cutoff)
        deleted = table.toDF().where(old).count()  # min/max stats on `time` skip new files
        if deleted:
            table.delete(old)
    before = _data_files(table)
    compact = before > max_files
    if compact:
        table.optimize().executeCompaction()
    if vacuum and (deleted or compact):
        _vacuum(spark, location, table)
    return Pruned(deleted, before, _data_files(table) if compact else before, cutoff)


def _vacuum(spark: SparkSession, location: str, table: object) -> None:
    """Remove files unreferenced for Delta's retention (7 days by default). LITE finds them in
    the Delta log instead of listing the folder — ten times cheaper; it refuses when the log
    no longer reaches back far enough, and then the full listing does it."""
    from mvlattice.sql.quote import path_identifier

    try:
        spark.sql(f"VACUUM delta.{path_identifier(location)} LITE").collect()
    except Exception:  # noqa: BLE001 - LITE's refusal: fall back to the listing
        table.vacuum()  # type: ignore[attr-defined]


def _data_files(table: object) -> int:
    return int(table.detail().first()["numFiles"])  # type: ignore[attr-defined]
