"""`auto: true` lattices (Calcite: "materialize tiles on demand"): when a query on such a lattice
found no tile, the rewriter asks for one at the query's dimensionality; it is built in the
background, one at a time, and later queries can use it."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_all
from typing import TYPE_CHECKING

from mvlattice.jobs.batch import BuildResult, run_batch
from mvlattice.jobs.context import JobContext
from mvlattice.jobs.targets import Target, tile_target
from mvlattice.lattice.lattice import Measure, TileSpec

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from mvlattice.model.loader import Model


class AutoTiles:
    def __init__(self, spark: SparkSession, model: Model, warehouse: str | None = None) -> None:
        self.ctx = JobContext.open(spark, model, warehouse, trigger="auto")
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mvlattice-auto")
        self._pending: dict[str, Future[BuildResult]] = {}
        self._lock = threading.Lock()

    def request(
        self, lattice: str, dimensions: Iterable[str], measures: Iterable[Measure] = ()
    ) -> Target | None:
        """Queue a build of the tile of `lattice` grouped by `dimensions` (labels) with the
        lattice's default measures plus `measures`; None when the lattice is not `auto`.
        A tile already queued is not queued twice; one already fresh is skipped by the build."""
        lat = self.ctx.model.lattice(lattice)
        if not lat.auto:
            return None
        wanted = {lat.column(d).label for d in dimensions}  # unknown labels: NotFoundError
        dims = tuple(label for label in lat.labels if label in wanted)
        spec = TileSpec(lat.name, dims, tuple(dict.fromkeys((*lat.default_measures, *measures))))
        target = tile_target(spec, self.ctx.warehouse, "auto")
        with self._lock:
            queued = self._pending.get(target.name)
            if queued is None or queued.done():
                self._pending[target.name] = self._executor.submit(self._build, target)
        return target

    def _build(self, target: Target) -> BuildResult:
        return run_batch(self.ctx, (target,)).results[0]

    def wait(self, timeout: float | None = None) -> tuple[BuildResult, ...]:
        """Wait for every queued build; their results (for tests and for shutting down)."""
        with self._lock:
            futures = list(self._pending.values())
        wait_all(futures, timeout=timeout)
        return tuple(f.result() for f in futures if f.done())

    def shutdown(self, wait: bool = True) -> None:
        self._executor.shutdown(wait=wait, cancel_futures=not wait)
