"""The model's tables registered in a SparkSession, so queries can name them `schema.table`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mvlattice.model.loader import Model, Table
from mvlattice.sql.quote import identifier as quote
from mvlattice.sql.quote import qualified
from mvlattice.sql.quote import string as literal

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def register_tables(spark: SparkSession, model: Model) -> None:
    """Make every table of the model queryable as `schema.table` (catalog schemas already are)."""
    for schema in model.schemas:
        if schema.type is None or (schema.type == "catalog" and schema.database == schema.name):
            continue
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {quote(schema.name)}")
        for table in schema.tables:
            name = f"{quote(schema.name)}.{quote(table.name)}"
            if schema.type == "catalog":
                # The model's name for a table that lives under another database.
                source = qualified(*str(table.catalog_name).split("."))
                spark.sql(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM {source}")
                continue
            spark.sql(_create_table_sql(schema.type, table))
    _use_default_schema(spark, model)


def _use_default_schema(spark: SparkSession, model: Model) -> None:
    """Unqualified table names in queries mean tables of the model's defaultSchema."""
    default = next((s for s in model.schemas if s.name == model.default_schema), None)
    if default is None or default.type is None:
        return
    database = default.database if default.type == "catalog" else default.name
    spark.catalog.setCurrentDatabase(database or default.name)


def _create_table_sql(kind: str, table: Table) -> str:
    name = f"{quote(table.schema)}.{quote(table.name)}"
    options = dict(table.options)
    if kind == "csv":
        options.setdefault("header", "true")
        options.setdefault("inferSchema", "true")
    opts = ""
    if options:
        opts = (
            " OPTIONS ("
            + ", ".join(f"{literal(k)} = {literal(v)}" for k, v in options.items())
            + ")"
        )
    location = literal(str(table.location))
    return f"CREATE TABLE IF NOT EXISTS {name} USING {kind}{opts} LOCATION {location}"
