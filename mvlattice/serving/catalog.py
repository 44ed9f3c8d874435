"""The tile catalog as the serving pipeline reads it: which views exist, their freshness as
of each query, their hits, and which of them Spark's catalog knows."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from mvlattice.jobs.catalog import CatalogAvailability
    from mvlattice.jobs.hits import HitCounter
    from mvlattice.jobs.lease import Leases
    from mvlattice.jobs.tables import TableReader
    from mvlattice.jobs.targets import Target
    from mvlattice.model.loader import Model
    from mvlattice.mvrewrite.model_context import RewriteContext

# Seconds a listing of the views that exist serves rewrites (freshness is asked every query).
TARGETS_TTL = 1.0


class ServingCatalog:
    """One per served model. `spark()` gives the session with the model's tables (it starts
    Spark on first use)."""

    def __init__(self, spark: Callable[[], SparkSession], model: Model, warehouse: str) -> None:
        self._spark = spark
        self.model = model
        self.warehouse = warehouse
        self._reader: TableReader | None = None
        self._hits: HitCounter | None = None
        self._leases: Leases | None = None
        self._known_tables: set[tuple[str, str]] = set()  # registered in Spark's catalog here
        self._targets: tuple[float, tuple[Target, ...]] | None = None  # (when listed, targets)

    def rewrite_views(self) -> tuple[RewriteContext, CatalogAvailability]:
        """Tiles (declared, built, planned) with row counts, and their freshness, from the
        jobs catalog; the rewrite context is prepared once per set of tiles."""
        from mvlattice.jobs.catalog import model_targets
        from mvlattice.mvrewrite.context import cached_context

        availability = self.availability()
        # Which views exist is listed at most every TARGETS_TTL seconds (this process's own
        # builds list again at once: `forget_views`); whether one may be read is asked on
        # every query.
        now = time.monotonic()
        listed = self._targets
        if listed is None or now - listed[0] > TARGETS_TTL:
            listed = self._targets = (now, model_targets(availability.ctx))
        targets = listed[1]
        tiles = tuple(dict.fromkeys(t.spec for t in targets if t.spec is not None))
        rows = tuple(sorted((t.name, float(t.estimated_rows)) for t in targets if t.estimated_rows))
        return cached_context(self.model, tiles, rows), availability

    def forget_views(self) -> None:
        """List the views again on the next rewrite (a build here changed them)."""
        self._targets = None

    def availability(self) -> CatalogAvailability:
        """Freshness as of now (one per query: it remembers the snapshots it approved)."""
        from mvlattice.jobs.catalog import CatalogAvailability

        reader, hits = self._readers()
        return CatalogAvailability(self._spark(), self.model, self.warehouse, reader=reader,
                                   hits=hits, leases=self._leases)  # fmt: skip

    def _readers(self) -> tuple[TableReader, HitCounter]:
        """One table reader (it caches tables' states by Delta version) and one hit counter
        (it writes hits in batches) for every request."""
        if self._hits is None:
            from mvlattice.jobs.hits import HitCounter
            from mvlattice.jobs.lease import Leases
            from mvlattice.jobs.state import StateStore
            from mvlattice.jobs.tables import TableReader

            self._reader = TableReader(self._spark())
            self._hits = HitCounter(StateStore.for_warehouse(self.warehouse))
            self._leases = Leases.for_warehouse(self.warehouse)
        assert self._reader is not None
        return self._reader, self._hits

    def table_of(self, view: str) -> str:
        """The table a view used by a rewrite is stored in (a materialization's name is not)."""
        for m in self.model.materializations:
            if m.name == view:
                return f"{m.schema}.{m.table}"
        return view

    def register_used(self, availability: CatalogAvailability, names: tuple[str, ...]) -> None:
        """Register the tiles a rewrite reads that the session's catalog lacks: built after
        it started, by another process too (`mvlattice refresh` while `serve` runs). The
        service's sandbox session shares this catalog."""
        from mvlattice.jobs.registration import ensure_registered

        for name in names:
            target = availability.target(self.table_of(name))
            if target is None or (target.name, target.location) in self._known_tables:
                continue
            ensure_registered(self._spark(), target.name, target.location, self.warehouse)
            self._known_tables.add((target.name, target.location))

    def flush_hits(self) -> None:
        """Write the hits counted so far to the state store (the catalog reads them there)."""
        if self._hits is not None:
            self._hits.flush()
