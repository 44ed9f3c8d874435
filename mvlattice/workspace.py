"""The Python API: a model, its warehouse and a SparkSession with the model's tables."""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mvlattice.document import read_document
from mvlattice.errors import JobError, MvlatticeError, SqlError
from mvlattice.model.loader import Model, Table, load_model
from mvlattice.model.spark_tables import register_tables
from mvlattice.serving.state import ServingState
from mvlattice.settings import resolve_warehouse
from mvlattice.spark import build_session, resolve_master, spark_conf

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType
    from sqlglot import exp

    from mvlattice.engine.acceptance import Acceptance, Analyze
    from mvlattice.engine.tile_engine import Describe, TileEngine
    from mvlattice.jobs.batch import BatchResult, Progress
    from mvlattice.jobs.catalog import CatalogEntry
    from mvlattice.lattice.lattice import Lattice
    from mvlattice.lattice.statistic_provider import StatisticProvider
    from mvlattice.model.checks import Violation
    from mvlattice.model.constraints import Constraint
    from mvlattice.mvrewrite.rewriter import QueryResult, RewriteResult
    from mvlattice.plan.budget import Limits
    from mvlattice.plan.coverage import Coverage
    from mvlattice.plan.planner import LatticePlan, WorkloadInput
    from mvlattice.plan.workload import Workload
    from mvlattice.serving.request import Request, Runner
    from mvlattice.statistics.profile import Profile


# Hears one line of what a long step does (the planner, the statistics provider).
Say = Callable[[str], None]


class Workspace:
    """Everything mvlattice does for one model. Spark starts on first use, not before."""

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        warehouse: str | None = None,
        master: str | None = None,
        conf: Mapping[str, str] | None = None,
    ) -> None:
        self.model_path = Path(model_path)
        self._explicit_master = master
        self._explicit_conf = dict(conf or {})
        self._spark: SparkSession | None = None
        peek = _peek_settings(self.model_path)
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
        if self._spark is None:
            conf = spark_conf(self.master, self.warehouse, (self._model_conf, self._explicit_conf))
            self._spark = build_session(self.master, self.warehouse, conf)
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
            self._spark = build_session(self.master, self.warehouse, conf)
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
            raise JobError(f"query failed: {_first_line(exc)}") from None
        return list(frame.columns), [tuple(r) for r in rows]

    def renamed_outputs(self) -> tuple[tuple[str, str, str], ...]:
        """(materialization, stored name, output as written) for each output of a declared
        materialization stored under another name (`mvlattice.sql.stored_names`); no Spark."""
        from mvlattice.mvrewrite.context import context_for

        context = context_for(self.model, tiles=())
        return tuple((v.name, s, n) for v in context.views for s, n in v.renamed.items())

    def validate_data(self) -> tuple[tuple[Constraint, ...], tuple[Violation, ...]]:
        from mvlattice.model.checks import check_data

        return check_data(self.spark, self.model)

    def plan(
        self,
        lattice: str | None = None,
        max_tiles: int | None = None,
        max_rows: float | None = None,
        workload: WorkloadInput = None,
        provider: str | None = None,
        progress: Say | None = None,
        max_size: int | None = None,
        limits: Limits | None = None,
    ) -> LatticePlan:
        """Choose tiles for a lattice (HRU96); see mvlattice.plan.planner.plan_model.
        `workload`: a file, a list of {dimensions, weight}, or a Workload; without one, the
        queries of the warehouse's query log that read the lattice (as `materialize` weighs
        its plan), else none; `provider`: exact or profiler (default: the lattice's
        statisticProvider); `max_size`: the largest column sets the profile counts up front;
        `progress(line)` hears what the provider does; `limits`: rows, bytes or a share of the
        fact table the tiles may take (mvlattice.plan.budget)."""
        from mvlattice.jobs.context import JobContext
        from mvlattice.jobs.planning import PLAN_PROFILE_SIZE, budget_for
        from mvlattice.plan.planner import plan_model
        from mvlattice.statistics.factory import provider_for

        size = PLAN_PROFILE_SIZE if max_size is None else max_size
        chosen = self.model.choose_lattice(lattice).name  # bad names fail before Spark starts
        if workload is None:
            workload = self._logged_workload(progress, only=chosen).get(chosen)

        def stats(lat: Lattice) -> StatisticProvider:
            return provider_for(
                self.spark,
                self.model,
                lat,
                kind=provider,
                warehouse=self.warehouse,
                max_size=size,
                progress=progress,
            )

        ctx = JobContext.open(self.spark, self.model, self.warehouse)
        budget = budget_for(ctx, self.model.lattice(chosen), limits)
        if max_rows is None and limits is not None:
            max_rows = limits.max_rows
        return plan_model(
            self.model,
            stats,
            lattice=chosen,
            max_tiles=max_tiles,
            max_rows=max_rows,
            workload=workload,
            budget=budget,
        )

    def materialize(
        self,
        lattice: str | None = None,
        *,
        full: bool = False,
        max_tiles: int | None = None,
        workload: WorkloadInput | Mapping[str, WorkloadInput] = None,
        progress: Progress | None = None,
        say: Say | None = None,
        limits: Limits | None = None,
    ) -> BatchResult:
        """Build declared materializations and the declared and planned tiles (HRU96, for
        `algorithm: true` lattices) as Delta tables, skipping fresh ones; a jobs BatchResult.
        The plan weighs `workload` (as `plan` takes it), else the queries of the warehouse's
        query log that read the lattice. `progress(event)` hears each target start and end;
        `say(line)` the planner; `limits` as for `plan`."""
        from mvlattice.jobs.api import materialize

        if workload is None:
            workload = self._logged_workload(say)
        try:
            return materialize(self.spark, self.model, self.warehouse, lattice=lattice,
                               full=full, max_tiles=max_tiles, workload=workload,
                               progress=progress, say=say, limits=limits)  # fmt: skip
        finally:
            self.serving.catalog.forget_views()  # this build changed them

    def coverage(self, workload: WorkloadInput, lattice: str | None = None) -> Coverage | None:
        """How much of a SQL workload the rewriter answers from the built tiles of a lattice,
        statement by statement (`Workspace.rewrite` decides), with the rows each reads before
        (the star) and after (the tiles read); None for a workload with no SQL."""
        from mvlattice.plan.coverage import rewriter_coverage
        from mvlattice.plan.planner import load_workload

        lat = self.model.choose_lattice(lattice)
        work = load_workload(workload, lat)
        if work is None:
            return None
        rows = {e.name: e.rows for e in self.tiles(lat.name) if e.kind == "tile"}

        def read(sql: str) -> tuple[str, ...] | None:
            try:
                result = self.rewrite(sql, explain=False)
            except SqlError:  # Spark rejects the statement: no tile answers it
                return None
            used = tuple(m for m in result.materializations if m in rows)
            return used if result.rewritten and used else None

        top = self.spark.sql(f"SELECT count(*) {lat.from_sql()}").first()
        return rewriter_coverage(work, read, rows.get, float(top[0]) if top else 0.0)

    def _logged_workload(self, say: Say | None, only: str | None = None) -> dict[str, Workload]:
        """Per lattice (or just lattice `only`), the logged queries that read its fact table
        (none: plain HRU)."""
        from mvlattice.plan.workload import workload_from_sql
        from mvlattice.querylog.log import query_log_weighted

        logged = query_log_weighted(self.warehouse, spark=self.spark)
        found: dict[str, Workload] = {}
        lattices = [lat for lat in self.model.lattices if only in (None, lat.name)]
        for lat in lattices if logged else ():
            workload = workload_from_sql(logged, lat)
            if workload.queries:
                found[lat.name] = workload
                if say:
                    say(f"lattice '{lat.name}': plan weighted by the query log "
                        f"({len(workload.queries)} kinds of query)")  # fmt: skip
        return found

    def materialize_plan(
        self, plan: LatticePlan, *, full: bool = False, progress: Progress | None = None
    ) -> BatchResult:
        """Build exactly the tiles of `plan` (from `plan(...)`, with whatever workload and
        statistics it was made), skipping fresh ones, and remember it as its lattice's plan
        (the catalog lists it, `gc` keeps its tiles); a jobs BatchResult. Unlike `materialize`
        it does not plan again, so the statistics the plan used are all it costs."""
        from mvlattice.jobs.api import materialize_plan

        try:
            return materialize_plan(
                self.spark, self.model, plan, self.warehouse, full=full, progress=progress
            )
        finally:
            self.serving.catalog.forget_views()

    def refresh(
        self,
        lattice: str | None = None,
        tile: str | None = None,
        *,
        full: bool = False,
        progress: Progress | None = None,
        dry_run: bool = False,
    ) -> BatchResult:
        """Bring tiles and materializations up to date: incrementally when only the fact
        table changed (and that is cheaper), else in full; a jobs BatchResult saying which
        and why. `dry_run`: what each would do, with the estimates, nothing built."""
        from mvlattice.jobs.api import refresh

        try:
            return refresh(self.spark, self.model, self.warehouse, lattice=lattice, tile=tile,
                           full=full, progress=progress, dry_run=dry_run)  # fmt: skip
        finally:
            self.serving.catalog.forget_views()

    def change_feeds(self) -> dict[str, bool | None]:
        """Per lattice fact table: whether it has Delta's change data feed (deletes and
        updates then refresh incrementally); None: not a Delta table read by location."""
        from mvlattice.jobs.changerows import change_feeds

        return change_feeds(self.spark, self.model)

    def tiles(self, lattice: str | None = None) -> tuple[CatalogEntry, ...]:
        """The tile catalog: a tuple of jobs CatalogEntry (status, rows, versions, hits)."""
        from mvlattice.jobs.api import tiles

        self.flush_hits()
        return tiles(self.spark, self.model, self.warehouse, lattice)

    def profile(
        self,
        lattice: str | None = None,
        max_size: int = 3,
        provider: str | None = None,
        *,
        progress: Say | None = None,
    ) -> Profile:
        """Distinct counts of a lattice's column sets, its unique keys and FDs (a statistics
        Profile), cached by the source tables' Delta versions; `progress(line)` hears passes."""
        from mvlattice.statistics.factory import profile_lattice

        name = self.model.choose_lattice(lattice).name  # bad names fail before Spark starts
        return profile_lattice(self.spark, self.model, name, kind=provider, max_size=max_size,
                               warehouse=self.warehouse, progress=progress)  # fmt: skip

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
        SqlError, as Spark fails it unrewritten. The steps: `mvlattice.serving.pipeline`."""
        from mvlattice.serving.request import Request

        request = Request(sql=sql, rewrite=rewrite, limit=limit, use_index=use_index, tree=tree,
                          engine=engine, runner=runner, describe=describe, accept=accept,
                          timeout=timeout, cancel=cancel)  # fmt: skip
        return self.serve(request)

    def serve(self, request: Request) -> QueryResult:
        """`query` for a request an edge built already (`mvlattice.serving.request`)."""
        from mvlattice.serving.pipeline import serve

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


def open(
    model: str | os.PathLike[str],
    warehouse: str | None = None,
    master: str | None = None,
    conf: Mapping[str, str] | None = None,
) -> Workspace:
    """Open a model: `ws = mvlattice.open("models/foodmart.yaml"); ws.sql("select …")`."""
    return Workspace(model, warehouse, master, conf)


def warehouse_of(model: str | os.PathLike[str], warehouse: str | None = None) -> str:
    """The warehouse a Workspace of `model` would use, found without loading the model."""
    return resolve_warehouse(warehouse or _peek_settings(Path(model)).get("warehouse"))


def _peek_settings(path: Path) -> dict[str, Any]:
    """The model's spark/warehouse settings, read before validation (which may need Spark)."""
    try:
        doc = read_document(path)
    except MvlatticeError:
        return {}  # load_model reports it properly
    if not isinstance(doc, Mapping):
        return {}
    spark = doc.get("spark")
    spark = spark if isinstance(spark, Mapping) else {}
    conf = spark.get("conf")
    conf = conf if isinstance(conf, Mapping) else {}
    out: dict[str, Any] = {
        "conf": {
            str(k): str(v).lower() if isinstance(v, bool) else str(v)
            for k, v in conf.items()
            if not isinstance(v, Mapping | list)
        }
    }
    if isinstance(spark.get("master"), str):
        out["master"] = spark["master"]
    if isinstance(doc.get("warehouse"), str):
        out["warehouse"] = doc["warehouse"]
    return out


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
