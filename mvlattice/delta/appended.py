"""Only the rows appends added to a Delta table: its new data files, read directly.

Delta's own reader cannot be told to read some files (a `_metadata.file_name` filter is applied
after every file of the version is scanned), so the incremental path reads the appended Parquet
files itself, with the table's schema at that version and each file's partition values. That
is exact for tables without column mapping (physical column names = logical ones); for those
with it, the caller falls back to the filter on `_metadata.file_name` (correct, but it scans
the whole table).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from functools import reduce
from typing import TYPE_CHECKING

from mvlattice.delta import log as deltalog
from mvlattice.delta.commits import AddedFile
from mvlattice.settings import join_location
from mvlattice.sql.quote import identifier

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def appended_view(
    spark: SparkSession, location: str, version: int, added: Sequence[AddedFile]
) -> str | None:
    """A temporary view of the rows in `added` (files of the table at `location`, `version`);
    None when the table's layout needs Delta's reader (column mapping, unknown metadata).
    The caller drops the view (`spark.catalog.dropTempView`)."""
    metadata = _metadata(spark, location, version)
    if metadata is None:
        return None
    frame = _read(spark, location, metadata, added)
    name = "mvlattice_appended_" + uuid.uuid4().hex[:12]
    frame.createOrReplaceTempView(name)
    return name


def _metadata(spark: SparkSession, location: str, version: int) -> dict | None:
    crc = deltalog.checksum(spark, location, version)
    metadata = crc["metadata"] if crc is not None else None
    if metadata is None or not metadata.get("schemaString"):
        return None
    mode = (metadata.get("configuration") or {}).get("delta.columnMapping.mode", "none")
    return metadata if mode == "none" else None


def _read(
    spark: SparkSession, location: str, metadata: dict, added: Sequence[AddedFile]
) -> DataFrame:
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    schema = StructType.fromJson(json.loads(metadata["schemaString"]))
    partitions = set(metadata.get("partitionColumns") or ())
    data = StructType([f for f in schema.fields if f.name not in partitions])
    groups: dict[tuple, list[str]] = {}
    for file in added:
        path = file.path if "://" in file.path else join_location(location, file.path)
        groups.setdefault(file.partition, []).append(path)
    frames = []
    for values, paths in groups.items():
        frame = spark.read.schema(data).parquet(*paths)
        given = dict(values)
        for field in schema.fields:
            if field.name in partitions:
                value = F.lit(given.get(field.name)).cast(field.dataType)
                frame = frame.withColumn(field.name, value)
        frames.append(frame.select(*[F.col(identifier(f.name)) for f in schema.fields]))
    if not frames:
        return spark.createDataFrame([], schema)
    return reduce(lambda a, b: a.unionByName(b), frames)
