"""A model's query sandbox: a SparkSession of its own (same catalog and tables, file-path SQL
off) where client queries are analyzed, checked against the model's policy and run bounded."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from mvlattice.jobs.naming import TILE_DATABASE
from mvlattice.sandbox.execution import collect_bounded
from mvlattice.sandbox.policy import Policy, check_plan, make_policy
from mvlattice.sandbox.spark_plan import analyze, builtin_functions, dataframe

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.types import StructType

    from mvlattice.model.loader import Model

DEFAULT_TIMEOUT = 60.0


class Sandbox:
    """Runs client SQL for one model: `run(sql, limit, cancel)` -> (columns, rows)."""

    def __init__(self, spark: SparkSession, model: Model, timeout: float = DEFAULT_TIMEOUT):
        self.session = spark.newSession()  # own SQL conf and current database, shared catalog
        self.session.conf.set("spark.sql.runSQLOnFiles", "false")
        # Implicit cartesian products (`FROM a, b` with no join condition) fail to plan.
        self.session.conf.set("spark.sql.crossJoin.enabled", "false")
        database = _default_database(model)
        if database is not None:
            self.session.catalog.setCurrentDatabase(database)
        self.policy: Policy = make_policy(
            model_relations(model), (TILE_DATABASE,), builtin_functions(self.session)
        )
        self.timeout = timeout

    def check(self, sql: str) -> None:
        """RefusedSqlError / SqlError unless the query may run."""
        check_plan(analyze(self.session, sql).roots, self.policy)

    def describe(self, sql: str) -> StructType:
        """The output schema of a query that may run (else what `check` raises), as Spark
        would answer it: the tile engine answers in Spark's types (`Workspace.query`)."""
        analyzed = analyze(self.session, sql)
        check_plan(analyzed.roots, self.policy)
        return dataframe(self.session, analyzed).schema

    def run(
        self, sql: str, limit: int | None, cancel: threading.Event | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        analyzed = analyze(self.session, sql)
        check_plan(analyzed.roots, self.policy)
        return collect_bounded(dataframe(self.session, analyzed), limit, self.timeout, cancel)


def model_relations(model: Model) -> tuple[str, ...]:
    """`database.table` of every table and materialization the model declares."""
    names = [t.qualified_name for t in model.tables]
    names += [t.catalog_name for t in model.tables if t.catalog_name]
    names += [f"{m.schema}.{m.table}" for m in model.materializations]
    return tuple(names)


def _default_database(model: Model) -> str | None:
    schema = next((s for s in model.schemas if s.name == model.default_schema), None)
    if schema is None or schema.type is None:
        return None
    return (schema.database if schema.type == "catalog" else None) or schema.name
