"""How a Delta table is partitioned, and how many rows some of its partitions hold — read from
its log, no Spark job: Delta's checksum file of the version, else delta-rs for a local table.
None where neither can tell (the caller then does without)."""

from __future__ import annotations

import json
import warnings
from collections.abc import Collection
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from mvlattice.delta import log as deltalog
from mvlattice.delta import storage
from mvlattice.delta.commits import Partition

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# Delta's JSON type names of partition columns, as Spark SQL types.
SQL_TYPES = {
    "byte": "TINYINT",
    "short": "SMALLINT",
    "integer": "INT",
    "long": "BIGINT",
    "string": "STRING",
    "date": "DATE",
    "boolean": "BOOLEAN",
    "timestamp": "TIMESTAMP",
    "timestamp_ntz": "TIMESTAMP_NTZ",
    "float": "FLOAT",
    "double": "DOUBLE",
    "binary": "BINARY",
}


def partition_columns(
    spark: SparkSession | None, location: str, version: int
) -> tuple[tuple[str, str], ...] | None:
    """(column, Spark SQL type) of each partition column of the table at `version`, in the
    table's order (`()`: not partitioned; a type Delta names otherwise, e.g. `decimal(10,2)`,
    comes upper-cased); None when the log cannot tell."""
    crc = deltalog.checksum(spark, location, version)
    metadata = crc.get("metadata") if isinstance(crc, dict) else None
    if isinstance(metadata, dict) and "partitionColumns" in metadata:
        return _typed(metadata.get("partitionColumns") or [], metadata.get("schemaString"))
    return _local_columns(location, version)


def rows_in(location: str, version: int, partitions: Collection[Partition]) -> int | None:
    """Rows of the table at `version` in the given partitions (its files' statistics); None
    for remote tables, logs delta-rs cannot read and files without a row count."""
    files = _files(location, version)
    if files is None:
        return None
    wanted = set(partitions)
    total = 0
    for _path, partition, count in files:
        if partition in wanted:
            if count is None:
                return None
            total += count
    return total


def file_partitions(location: str, version: int) -> dict[str, Partition] | None:
    """Each data file of the table at `version` (its path as the log writes it, decoded) with
    its partition values; None for remote tables and logs delta-rs cannot read."""
    files = _files(location, version)
    return None if files is None else {path: partition for path, partition, _ in files}


def _files(location: str, version: int) -> list[tuple[str, Partition, int | None]] | None:
    """(path, partition values, rows) of each data file, read by delta-rs from the log."""
    import pyarrow as pa

    table = _open(location, version)
    if table is None:
        return None
    try:
        columns = sorted(table.metadata().partition_columns)
        adds = pa.table(table.get_add_actions(flatten=True))
    except Exception:  # noqa: BLE001 - not readable here: not known
        return None
    values = {c: adds.column(f"partition.{c}").to_pylist() for c in columns}
    counts = adds.column("num_records").to_pylist()
    paths = adds.column("path").to_pylist()
    return [
        (
            unquote(str(paths[i])),
            tuple((c, _text(values[c][i])) for c in columns),
            None if counts[i] is None else int(counts[i]),
        )
        for i in range(adds.num_rows)
    ]


def _text(value: Any) -> str | None:  # noqa: ANN401 - a partition value as delta-rs types it
    """A partition value as the Delta log writes it (dates ISO, booleans lower case)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _typed(columns: list[Any], schema_string: Any) -> tuple[tuple[str, str], ...] | None:
    try:
        fields = json.loads(schema_string)["fields"] if columns else []
    except (TypeError, ValueError, KeyError):
        return None
    types = {str(f.get("name")): f.get("type") for f in fields if isinstance(f, dict)}
    out = []
    for column in columns:
        kind = types.get(str(column))
        if not isinstance(kind, str):
            return None
        out.append((str(column), SQL_TYPES.get(kind, kind.upper())))
    return tuple(out)


def _local_columns(location: str, version: int) -> tuple[tuple[str, str], ...] | None:
    table = _open(location, version)
    if table is None:
        return None
    try:
        columns = list(table.metadata().partition_columns)
        schema = table.schema().to_json()
    except Exception:  # noqa: BLE001 - not readable here: not known
        return None
    return _typed(columns, schema)


def _open(location: str, version: int) -> Any:  # noqa: ANN401 - a deltalake.DeltaTable
    """The local table at `version`, read by delta-rs; None for remote tables and logs it
    cannot read."""
    path = storage.local_path(location)
    if path is None:
        return None
    try:
        from deltalake import DeltaTable

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            return DeltaTable(str(path), version=version)
    except Exception:  # noqa: BLE001 - not readable here: not known
        return None
