"""Dropping a table so that no reader ever sees half of it. Its folder is first moved aside, by
one rename, into the warehouse's trash (`<warehouse>/_mvlattice/trash/<table>-<time>-<id>`): the
table is then whole at its location or absent from it, and absent reads as missing, never
fresh. Only then is its catalog entry dropped and the moved folder deleted. A gc killed between
the steps leaves a folder in the trash, which the next gc deletes. Failures are raised, for the
caller to report; nothing is ignored.

The rename is atomic on a local file system, HDFS and ABFS; on S3 and GCS it is a copy and a
delete, so there a killed gc can leave part of a table behind — a log without its data files,
which `tables.TableReader` reads as no table.
"""

from __future__ import annotations

import time
import uuid
from typing import TYPE_CHECKING

from mvlattice.delta import storage
from mvlattice.jobs.tilesql import q
from mvlattice.settings import join_location

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def trash_location(warehouse: str) -> str:
    return join_location(warehouse, "_mvlattice", "trash")


def move_aside(spark: SparkSession | None, warehouse: str, location: str) -> str | None:
    """Move the folder at `location` into the trash; where it went, or None when there was
    nothing at `location`."""
    if not storage.exists(spark, location):
        return None
    trash = trash_location(warehouse)
    storage.make_directory(spark, trash)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    name = location.rstrip("/").rpartition("/")[2]
    moved = join_location(trash, f"{name}-{stamp}-{uuid.uuid4().hex[:8]}")
    storage.rename(spark, location, moved)
    return moved


def leftovers(spark: SparkSession | None, warehouse: str) -> tuple[str, ...]:
    """Folders still in the trash (from an interrupted gc, or one that failed to delete)."""
    trash = trash_location(warehouse)
    return tuple(join_location(trash, name) for name in storage.child_names(spark, trash))


def unregister(spark: SparkSession, name: str) -> None:
    """Drop the table `name` (database.table) from this session's catalog; its files stay."""
    database, _, table = name.rpartition(".")
    spark.sql(f"DROP TABLE IF EXISTS {q(database)}.{q(table)}")
