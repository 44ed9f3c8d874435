"""What the serving pipeline needs of the model it serves (a `Workspace` is one)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from mvlattice.serving.state import ServingState


class Host(Protocol):
    @property
    def serving(self) -> ServingState:
        """What serving keeps for this model between requests."""
        ...

    def analyze(self, sql: str) -> None:
        """Spark's parse and analysis of `sql` in the host's session (SqlError if rejected)."""
        ...

    def describe(self, sql: str) -> StructType:
        """Spark's output schema of `sql` in the host's session."""
        ...

    def run_sql(self, sql: str, limit: int | None) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Columns and rows of `sql` run on the host's session as the user's own SQL."""
        ...
