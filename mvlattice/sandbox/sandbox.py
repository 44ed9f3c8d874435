"""A model's query sandbox: a SparkSession of its own (same catalog and tables, file-path SQL
off) where client queries are analyzed, checked against the model's policy and run bounded."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from mvlattice.errors import RefusedSqlError
from mvlattice.jobs.naming import TILE_DATABASE
from mvlattice.sandbox.execution import collect_bounded
from mvlattice.sandbox.plan_tree import PlanNode
from mvlattice.sandbox.policy import Policy, check_parsed, check_plan, make_policy
from mvlattice.sandbox.spark_plan import (
    Analyzed,
    analyze,
    builtin_functions,
    check_parsed_only,
    dataframe,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from mvlattice.model.loader import Model

DEFAULT_TIMEOUT = 60.0
SUBSTITUTE = "spark.sql.variable.substitute"


class Sandbox:
    """Runs client SQL for one model: `run(sql, limit, cancel)` -> (columns, rows)."""

    def __init__(
        self,
        spark: SparkSession,
        model: Model,
        timeout: float = DEFAULT_TIMEOUT,
        max_bytes: int | None = None,
    ):
        self.session = spark.newSession()  # own SQL conf and current database, shared catalog
        self.session.conf.set("spark.sql.runSQLOnFiles", "false")
        # Implicit cartesian products (`FROM a, b` with no join condition) fail to plan.
        self.session.conf.set("spark.sql.crossJoin.enabled", "false")
        # `${env:…}` / `${system:…}` in client text would read the environment and the JVM's
        # settings. Spark's parser reads this from the thread's active session, which may be
        # the root one: mvlattice turns it off there too (`spark.spark_conf`); should anything
        # turn it back on, text with `${` is refused (`_check_text`).
        self.session.conf.set(SUBSTITUTE, "false")
        _no_fallback_substitution(spark)
        self._substitutes = str(spark.conf.get(SUBSTITUTE, "false")).lower() != "false"
        database = _default_database(model)
        if database is not None:
            self.session.catalog.setCurrentDatabase(database)
        self.policy: Policy = make_policy(
            model_relations(model),
            (TILE_DATABASE,),
            builtin_functions(self.session),
            time_travel=[t.qualified_name for t in model.tables if t.time_travel],
        )
        self.timeout = timeout
        self.max_bytes = max_bytes  # about the bytes of rows fetched into Python per query

    def check(self, sql: str) -> None:
        """RefusedSqlError / SqlError unless the query may run."""
        self._checked(sql)

    def precheck(self, sql: str) -> None:
        """What must be refused before Spark analyzes a client's text at all (substitution,
        old versions, type strings parsed while analyzing): RefusedSqlError, else nothing."""
        self._check_text(sql)
        check_parsed_only(self.session, sql, self._check_parsed)

    def describe(self, sql: str) -> StructType:
        """The output schema of a query that may run (else what `check` raises), as Spark
        would answer it: the tile engine answers in Spark's types (`Workspace.query`)."""
        return self.frame(sql).schema

    def frame(self, sql: str) -> DataFrame:
        """A DataFrame of exactly the checked plan (else what `check` raises)."""
        return dataframe(self.session, self._checked(sql))

    def run(
        self, sql: str, limit: int | None, cancel: threading.Event | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        frame = self.frame(sql)  # analysis may take long: the cancel is looked at after it
        return collect_bounded(frame, limit, self.timeout, cancel, self.max_bytes)

    def _checked(self, sql: str) -> Analyzed:
        self._check_text(sql)
        analyzed = analyze(self.session, sql, self._check_parsed)
        check_plan(analyzed.roots, self.policy)
        return analyzed

    def _check_parsed(self, roots: tuple[PlanNode, ...]) -> None:
        check_parsed(roots, self.policy)

    def _check_text(self, sql: str) -> None:
        if self._substitutes and "${" in sql:
            raise RefusedSqlError(
                f"refused: '${{' in a query while {SUBSTITUTE} is on (the text would be "
                "substituted from the environment); turn it off in the model's spark.conf"
            )


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


def _no_fallback_substitution(spark: SparkSession) -> None:
    """Spark's fallback conf (what a thread with no active session reads) has substitution on
    whatever the session says; turn it off there too."""
    jvm: Any = spark._jvm
    jvm.org.apache.spark.sql.internal.SQLConf.getFallbackConf().setConfString(SUBSTITUTE, "false")
