"""What the serving pipeline needs of the model it serves (a `Workspace` is one)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from mvlattice.engine.acceptance import Acceptance
    from mvlattice.engine.tile_engine import TileEngine
    from mvlattice.jobs.catalog import CatalogAvailability
    from mvlattice.mvrewrite.model_context import RewriteContext
    from mvlattice.serving.decide import RewriteCount


class Host(Protocol):
    @property
    def tile_engine(self) -> TileEngine:
        """The in-driver engine for small tiles, with the answers it keeps."""
        ...

    @property
    def rewrite_count(self) -> RewriteCount:
        """How many rewrites the pipeline ran for this host."""
        ...

    @property
    def acceptance(self) -> Acceptance:
        """Spark's word on query texts, kept per text."""
        ...

    def analyze(self, sql: str) -> None:
        """Spark's parse and analysis of `sql` in the host's session (SqlError if rejected)."""
        ...

    def describe(self, sql: str) -> StructType:
        """Spark's output schema of `sql` in the host's session."""
        ...

    def availability(self) -> CatalogAvailability:
        """Freshness as of now (it remembers the snapshots it approved)."""
        ...

    def rewrite_views(self) -> tuple[RewriteContext, CatalogAvailability]:
        """The views a rewrite may read, and their freshness."""
        ...

    def table_of(self, view: str) -> str:
        """The table a view used by a rewrite is stored in."""
        ...

    def register_used(self, availability: CatalogAvailability, names: tuple[str, ...]) -> None:
        """Register in Spark's catalog the views a rewrite reads that it lacks."""
        ...

    def run_sql(self, sql: str, limit: int | None) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Columns and rows of `sql` run on the host's session as the user's own SQL."""
        ...
