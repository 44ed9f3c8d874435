"""A Delta table's current version and table id as Spark answers them (a Spark job each), for
logs nothing else can read; None when unreadable. Source identities: `sources`; local tables
are read through delta-rs first: `reader`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mvlattice.sql.quote import path_identifier
from mvlattice.sql.quote import string as literal

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def table_version(spark: SparkSession, location: str) -> int | None:
    """The latest commit version of the Delta table at `location`; None if it is not Delta."""
    from delta.tables import DeltaTable

    try:
        if not DeltaTable.isDeltaTable(spark, location):
            return None
        history = spark.sql(f"DESCRIBE HISTORY delta.{path_identifier(location)} LIMIT 1").first()
    except Exception:  # noqa: BLE001 - unreadable means "no version to key on"
        return None
    return int(history["version"]) if history is not None else None


def table_id(spark: SparkSession, relation: str) -> str | None:
    """The current table id (`metaData.id`) of the Delta table `relation` names (SQL: a
    quoted catalog name or delta.`<location>`); None when it is not a readable Delta table."""
    try:
        row = spark.sql(f"DESCRIBE DETAIL {relation}").first()
    except Exception:  # noqa: BLE001 - unreadable means "no identity to key on"
        return None
    if row is None or str(row["format"]).lower() != "delta" or not row["id"]:
        return None
    return str(row["id"])


__all__ = ["table_version", "table_id", "literal"]
