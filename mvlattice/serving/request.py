"""A query as an edge hands it to the serving pipeline: built once, never changed."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mvlattice.errors import UsageError

if TYPE_CHECKING:
    from sqlglot import exp

    from mvlattice.engine.acceptance import Analyze
    from mvlattice.engine.tile_engine import Describe

ENGINES = ("auto", "spark")  # who may answer: auto (the tile engine when it can) | spark
# Runs the SQL a query comes to on Spark: (sql, row limit) -> (columns, rows).
Runner = Callable[[str, int | None], tuple[list[str], list[tuple[Any, ...]]]]
# An edge's check of a client's text (raises what it refuses); the parsed tree, or None.
Check = Callable[[str], "exp.Query | None"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """One query and the bounds of the edge that received it.

    `runner` runs SQL on Spark (the service's sandbox); without one, the host's own session
    runs it as the user's SQL. With a runner, the tile engine answers only when `describe`
    (the sandbox's check, returning Spark's output schema) is given too. `accept` is Spark's
    word on the text as written (the host's session by default). `tree`: `sql` already parsed.
    """

    sql: str
    rewrite: bool = True
    limit: int | None = None
    use_index: bool = True
    tree: exp.Query | None = None
    engine: str = "auto"
    runner: Runner | None = None
    describe: Describe | None = None
    accept: Analyze | None = None
    timeout: float | None = None  # seconds the tile engine may run (None: its default)
    cancel: threading.Event | None = None
    explain: bool = False  # each view's outcome for the query, in its RewriteResult
    # The edge's check of the text, run after the kept answer and the template steps: a text
    # of a template the check passed before is not parsed again.
    check: Check | None = None

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise UsageError(f"unknown engine '{self.engine}'; engines: {', '.join(ENGINES)}")

    @property
    def kept_key(self) -> tuple[str, int | None, Describe | None]:
        """What a kept answer is filed under: the text, the limit and the describer (the
        sandbox must have approved the SQL for the describer asking)."""
        return (self.sql, self.limit, self.describe)

    @property
    def local_allowed(self) -> bool:
        """Whether the tile engine may answer at all (its own checks come later)."""
        own_spark = self.runner is None
        return self.rewrite and self.engine == "auto" and (own_spark or self.describe is not None)
