"""Planning and building a workspace's tiles: the half of the Python API that runs jobs
(`Workspace` mixes it in; the other half serves queries)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from mvlattice.errors import SqlError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from mvlattice.jobs.batch import BatchResult, Progress
    from mvlattice.jobs.catalog import CatalogEntry
    from mvlattice.lattice.lattice import Lattice
    from mvlattice.lattice.statistic_provider import StatisticProvider
    from mvlattice.model.checks import Violation
    from mvlattice.model.constraints import Constraint
    from mvlattice.model.loader import Model
    from mvlattice.mvrewrite.rewriter import RewriteResult
    from mvlattice.plan.budget import Limits
    from mvlattice.plan.coverage import Coverage
    from mvlattice.plan.planner import LatticePlan, WorkloadInput
    from mvlattice.plan.workload import Workload
    from mvlattice.serving.state import ServingState
    from mvlattice.statistics.profile import Profile

# Hears one line of what a long step does (the planner, the statistics provider).
Say = Callable[[str], None]


class Building:
    """What `Workspace` gives these methods: its model, warehouse, session and serving state."""

    model: Model
    warehouse: str
    serving: ServingState

    @property
    def spark(self) -> SparkSession:
        raise NotImplementedError  # Workspace's session

    def rewrite(self, sql: str, explain: bool = True) -> RewriteResult:
        raise NotImplementedError  # Workspace's rewriter

    def flush_hits(self) -> None:
        raise NotImplementedError  # Workspace's hit counter

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
        query_log: bool = True,
    ) -> LatticePlan:
        """Choose tiles for a lattice (HRU96); see mvlattice.plan.planner.plan_model.
        `workload`: a file, a list of {dimensions, weight}, or a Workload; without one, the
        queries of the warehouse's query log that read the lattice (as `materialize` weighs
        its plan), else none; `provider`: exact or profiler (default: the lattice's
        statisticProvider); `max_size`: the largest column sets the profile counts up front;
        `progress(line)` hears what the provider does; `limits`: rows, bytes or a share of the
        fact table the tiles may take (mvlattice.plan.budget); `query_log=False`: without a
        workload, plan by the lattice alone, never by the query log."""
        from mvlattice.jobs.context import JobContext
        from mvlattice.jobs.planning import PLAN_PROFILE_SIZE, budget_for
        from mvlattice.plan.planner import plan_model
        from mvlattice.statistics.factory import provider_for

        size = PLAN_PROFILE_SIZE if max_size is None else max_size
        chosen = self.model.choose_lattice(lattice).name  # bad names fail before Spark starts
        if workload is None and query_log:
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
        query_log: bool = True,
    ) -> BatchResult:
        """Build declared materializations and the declared and planned tiles (HRU96, for
        `algorithm: true` lattices) as Delta tables, skipping fresh ones; a jobs BatchResult.
        The plan weighs `workload` (as `plan` takes it), else the queries of the warehouse's
        query log that read the lattice. `progress(event)` hears each target start and end;
        `say(line)` the planner (and whether the plan changed since the last one); `limits`
        and `query_log` as for `plan`."""
        from mvlattice.jobs.api import materialize

        if workload is None:
            workload = self._logged_workload(say) if query_log else {}
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
                        f"({len(workload.queries)} kinds of query; --no-query-log: "
                        "without it)")  # fmt: skip
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
