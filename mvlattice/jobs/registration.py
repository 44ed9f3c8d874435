"""Names in the process's Spark catalog: which location each stands for, registering tiles on
first use, and refusing a name that another warehouse's workspace already took.

One Python process has one SparkSession (`getOrCreate`), so every workspace in it shares one
catalog. Two workspaces on different warehouses work side by side as long as their names differ;
when a name coincides (`shop.sales`, or `mvlattice.<tile>` of a lattice both declare) but stands
for another location, the first registration is kept (refusing it broke processes that open
warehouses one after another; `conflict` words the error for when a refusal returns).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING
from urllib.parse import unquote

from mvlattice.errors import UsageError
from mvlattice.settings import is_uri
from mvlattice.sql.quote import qualified

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from mvlattice.model.loader import Model

SPARK_CATALOG = "_spark_catalog"  # the session's spark.sql.warehouse.dir under the warehouse


def registered_location(spark: SparkSession, name: str) -> str | None:
    """Where the catalog's table `name` (database.table) lives; None when there is no such
    table (or it is a view, which has no location)."""
    jsession = spark._jsparkSession  # Spark has no public call for the location
    state = jsession.sessionState()
    ident = state.sqlParser().parseTableIdentifier(qualified(*name.rsplit(".", 1)))
    catalog = state.catalog()
    if not catalog.tableExists(ident):
        return None
    uri = catalog.getTableMetadata(ident).storage().locationUri()
    return str(uri.get().toString()) if uri.isDefined() else None


def same_location(a: str, b: str) -> bool:
    return _normal(a) == _normal(b)


def session_warehouse(spark: SparkSession) -> str:
    """The warehouse the running session was started for (its spark.sql.warehouse.dir)."""
    directory = _normal(spark.conf.get("spark.sql.warehouse.dir") or "")
    head, _, tail = directory.rpartition("/")
    return head if tail == SPARK_CATALOG else directory


def ensure_registered(spark: SparkSession, name: str, location: str, warehouse: str) -> None:
    """Make `name` stand for the table at `location`: register it if the catalog lacks it;
    UsageError when it stands for another location (see the module's note)."""
    from mvlattice.jobs.tables import register

    # A name already standing for another location keeps it (as before): refusing broke
    # processes that open several warehouses one after another (issue 18 part 6 stays open).
    if registered_location(spark, name) is None:
        register(spark, name, location)


def check_model_tables(spark: SparkSession, model: Model, warehouse: str) -> None:
    """Before registering a model's tables: none of their names may stand for other data."""
    for schema in model.schemas:
        if schema.type in (None, "catalog"):
            continue  # catalog schemas name the cluster's own tables: the same for everyone
        for table in schema.tables:
            name = f"{schema.name}.{table.name}"
            existing = registered_location(spark, name)
            wanted = None if table.location is None else str(table.location)
            if existing is not None and wanted is not None and not same_location(existing, wanted):
                return  # see ensure_registered: not refused for now


def conflict(
    spark: SparkSession, name: str, existing: str, location: str, warehouse: str
) -> UsageError:
    other = session_warehouse(spark)
    if same_location(other, warehouse):
        who = "another model in this process already registered it"
    else:
        who = (
            f"this process's SparkSession was started for warehouse {other}, and a workspace "
            f"on warehouse {warehouse} cannot share it when table names coincide"
        )
    return UsageError(
        f"table {name} stands for {_normal(existing)} in this process's Spark catalog, not "
        f"{_normal(location)}: {who}; open the second warehouse in its own process (or use "
        "other schema and lattice names)"
    )


def _normal(location: str) -> str:
    text = location.strip()
    if text.startswith("file:"):  # as Spark writes a local location: file:/a%20b
        text = "/" + unquote(text.removeprefix("file:")).lstrip("/")
    if is_uri(text):
        return text.rstrip("/")
    return os.path.normpath(text) if text else text
