"""The Python API: a model, its warehouse and a SparkSession with the model's tables."""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mvlattice.building import Building
from mvlattice.errors import JobError, MvlatticeError, first_line
from mvlattice.model.loader import Model, Table, load_model
from mvlattice.model.peek import peek_settings
from mvlattice.model.spark_tables import register_tables
from mvlattice.serving.state import ServingState
from mvlattice.settings import resolve_warehouse
from mvlattice.spark import build_session, jvm_running, resolve_master, spark_conf

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType
    from sqlglot import exp

    from mvlattice.engine.acceptance import Acceptance, Analyze
    from mvlattice.engine.tile_engine import Describe, TileEngine
    from mvlattice.mvrewrite.rewriter import QueryResult, RewriteResult
    from mvlattice.serving.request import Request, Runner


class Workspace(Building):
    """Everything mvlattice does for one model. Spark starts on first use, not before."""

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        warehouse: str | None = None,
        master: str | None = None,
        conf: Mapping[str, str] | None = None,
        *,
        on_spark_start: Callable[[str], None] | None = None,
    ) -> None:
        self.model_path = Path(model_path)
        self._explicit_master = master
        self._explicit_conf = dict(conf or {})
        self._spark: SparkSession | None = None
        # Hears a line as a JVM starts for this workspace (5 to 30 s a newcomer would otherwise
        # wait in silence), the model's loading included (CSV and Parquet columns).
        self.on_spark_start = on_spark_start
        peek = peek_settings(self.model_path)
        self.warehouse = resolve_warehouse(warehouse or peek.get("warehouse"))
        self.master = resolve_master(master, peek.get("master"))
        self._model_conf = peek.get("conf", {})
        self.model: Model = load_model(self.model_path, self.warehouse, self._columns_via_spark)
        self._registered = False
        self.serving = ServingState(lambda: self.spark, self.model, self.warehouse)
        atexit.register(self._flush_quietly)

    # -- Spark ----------------------------------------------------------------------------
    @property
    def spark(self) -> SparkSession:
        self._spark = self._spark_without_tables()
        if not self._registered and getattr(self, "model", None) is not None:
            from mvlattice.jobs.registration import check_model_tables

            check_model_tables(self._spark, self.model, self.warehouse)  # never share names
            register_tables(self._spark, self.model)
            from mvlattice.jobs.catalog import register_tiles  # built tiles, materializations

            register_tiles(self._spark, self.model, self.warehouse)
            self._registered = True
        return self._spark

    def _columns_via_spark(self, table: Table) -> tuple[str, ...] | None:
        """Columns of tables that neither the model nor a local Delta log describes."""
        if table.location is not None and _surely_missing(table.location):
            return None  # Spark could not read it either, and would take seconds to start
        spark = self._spark_without_tables()
        try:
            if table.location is None:
                return tuple(spark.table(table.catalog_name or table.qualified_name).columns)
            options = dict(table.options)
            if table.format == "csv":
                options.setdefault("header", "true")  # as the table is registered
            reader = spark.read.format(table.format or "delta").options(**options)
            return tuple(reader.load(table.location).columns)
        except Exception:  # noqa: BLE001 - any failure means "no such table" to the loader
            return None

    def _spark_without_tables(self) -> SparkSession:
        if self._spark is None:
            conf = spark_conf(self.master, self.warehouse, (self._model_conf, self._explicit_conf))
            say = self.on_spark_start if not jvm_running() else None
            began = time.monotonic()
            if say is not None:
                say(f"starting Spark ({self.master}) …")
            self._spark = build_session(self.master, self.warehouse, conf)
            if say is not None:
                say(f"Spark started in {time.monotonic() - began:.1f} s")
        return self._spark

    # -- API ------------------------------------------------------------------------------
    def sql(self, text: str) -> DataFrame:
        """Run SQL over the model's tables; bad SQL raises SqlError with Spark's reason."""
        from mvlattice.engine.acceptance import spark_sql_errors

        spark = self.spark
        with spark_sql_errors():
            return spark.sql(text)

    def collect(self, frame: DataFrame, limit: int | None = None) -> tuple[list[str], list[tuple]]:
        """Columns and rows of a DataFrame; failures at run time become JobError."""
        try:
            rows = (frame.limit(limit) if limit is not None else frame).collect()
        except MvlatticeError:
            raise
        except Exception as exc:  # noqa: BLE001 - executor failures arrive as many types
            raise JobError(f"query failed: {first_line(exc)}") from None
        return list(frame.columns), [tuple(r) for r in rows]

    def renamed_outputs(self) -> tuple[tuple[str, str, str], ...]:
        """(materialization, stored name, output as written) for each output of a declared
        materialization stored under another name (`mvlattice.sql.stored_names`); no Spark."""
        from mvlattice.mvrewrite.context import context_for

        context = context_for(self.model, tiles=())
        return tuple((v.name, s, n) for v in context.views for s, n in v.renamed.items())

    def rewrite(
        self,
        sql: str,
        explain: bool = True,
        use_index: bool = True,
        *,
        tree: exp.Query | None = None,
        accept: Analyze | None = None,
    ) -> RewriteResult:
        """The query rewritten onto tiles and materialized views (nothing runs): a mvrewrite
        RewriteResult (rewritten, sql, materializations, explain). Views and their freshness
        come from the tile catalog; unsupported SQL comes back unrewritten with the reason.
        `use_index=False` matches every view, not only the filter tree's candidates. `tree`:
        `sql` already parsed (`sql.parse.parse_query`), so that a request parses once.
        With `explain`, a rewritten query's explanation ends with which engine would answer
        it (`query`'s default, `auto`) and, when Spark, why. SQL Spark rejects raises SqlError
        (Spark's reason): `accept(sql)` asks Spark, by default this workspace's session (the
        service asks its sandbox's session, which reads no file paths)."""
        from mvlattice.serving.decide import decide_rewrite
        from mvlattice.serving.engine_choice import explain_engine

        decision = decide_rewrite(self, sql, explain=explain, use_index=use_index, tree=tree,
                                  accept=accept)  # fmt: skip
        result, availability = decision.result, decision.availability
        if not explain or not result.rewritten or availability is None:
            return result
        return explain_engine(self, result, availability)

    def query(
        self,
        sql: str,
        rewrite: bool = True,
        limit: int | None = None,
        use_index: bool = True,
        runner: Runner | None = None,
        *,
        tree: exp.Query | None = None,
        engine: str = "auto",
        describe: Describe | None = None,
        timeout: float | None = None,
        cancel: threading.Event | None = None,
        accept: Analyze | None = None,
        explain: bool = False,
    ) -> QueryResult:
        """Run a query, rewritten first unless `rewrite=False`; a mvrewrite QueryResult
        (columns, rows, the RewriteResult, elapsed_ms, and which engine answered). Views used
        get their hit counted. `engine`: `auto` lets the tile engine answer a rewritten query
        that reads only small fresh tiles (in the driver, with Spark's semantics), `spark`
        runs everything on Spark. `runner(sql, limit)` runs the SQL that results on Spark (the
        service's sandbox); by default it runs on this workspace's session as the user's own
        SQL. With a runner, the tile engine answers only when `describe(sql)` (the sandbox's
        check, returning Spark's output schema) is given too; `timeout` (seconds) and `cancel`
        bound its run as the runner bounds Spark's (QueryTimeoutError). `tree`: `sql` already
        parsed (`sql.parse.parse_query`), so that a request parses once. To be rewritten, a
        query must be one Spark accepts as written (`accept`, as `rewrite` takes it): else
        SqlError, as Spark fails it unrewritten. `explain`: each view's outcome in the result's
        RewriteResult, as `rewrite` gives it. The steps: `mvlattice.serving.pipeline`."""
        from mvlattice.serving.request import Request

        request = Request(sql=sql, rewrite=rewrite, limit=limit, use_index=use_index, tree=tree,
                          engine=engine, runner=runner, describe=describe, accept=accept,
                          timeout=timeout, cancel=cancel, explain=explain)  # fmt: skip
        return self.serve(request)

    def serve(self, request: Request) -> QueryResult:
        """`query` for a request an edge built already (`mvlattice.serving.request`)."""
        from mvlattice.serving.pipeline import serve

        _ = self.spark  # started before the query's clock: its time is not the JVM's start-up
        return serve(self, request)

    def kept_answer(
        self, sql: str, limit: int | None, describe: Describe | None
    ) -> QueryResult | None:
        """What `query(sql, limit=limit, describe=describe, runner=…)` would answer when the
        tile engine's answer to it is kept and still approved — decided from local Delta logs
        only, with no Spark job and no remote store, so a server may call it on its event loop
        — else None (then `query`)."""
        import time

        from mvlattice.serving.kept import kept_answer

        return kept_answer(self, (sql, limit, describe), time.perf_counter(), local_only=True)

    def describe(self, sql: str) -> StructType:
        """Spark's output schema of `sql` over the model's tables (SqlError if rejected)."""
        return self.sql(sql).schema

    def analyze(self, sql: str) -> None:
        """Spark's parser and analyzer over `sql` in this workspace's session (nothing runs)."""
        from mvlattice.engine.acceptance import analyze

        analyze(self.spark, sql)

    def run_sql(self, sql: str, limit: int | None) -> tuple[list[str], list[tuple]]:
        """Columns and rows of `sql` run as the user's own SQL (`sql`, then `collect`)."""
        return self.collect(self.sql(sql), limit)

    @property
    def tile_engine(self) -> TileEngine:
        """The in-driver engine for small tiles (made on first use, one per workspace)."""
        return self.serving.tile_engine

    @property
    def acceptance(self) -> Acceptance:
        """Spark's word on query texts, kept per text (made on first use, one per workspace)."""
        return self.serving.acceptance

    def _flush_quietly(self) -> None:
        with contextlib.suppress(Exception):
            self.flush_hits()

    def flush_hits(self) -> None:
        """Write the hits counted so far to the state store (the catalog reads them there)."""
        self.serving.catalog.flush_hits()

    def spark_alive(self) -> bool:
        """Whether Spark's JVM still answers (True before Spark started)."""
        if self._spark is None:
            return True
        try:
            return not self._spark.sparkContext._jsc.sc().isStopped()
        except Exception:  # noqa: BLE001 - a dead gateway fails in many ways: all mean "no"
            return False

    def close(self) -> None:
        with contextlib.suppress(Exception):  # a state store gone: the hits are lost, no more
            self.flush_hits()
        atexit.unregister(self._flush_quietly)
        self.serving.close()
        if self._spark is not None:
            self._spark.stop()
            self._spark = None

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _surely_missing(location: str) -> bool:
    """A plain local path (no scheme, no glob) that does not exist."""
    plain = not any(c in location for c in ":*?[{")
    return plain and not os.path.exists(location)


def open(
    model: str | os.PathLike[str],
    warehouse: str | None = None,
    master: str | None = None,
    conf: Mapping[str, str] | None = None,
) -> Workspace:
    """Open a model: `ws = mvlattice.open("models/foodmart.yaml"); ws.sql("select …")`."""
    return Workspace(model, warehouse, master, conf)
