"""What the HTTP layer asks of mvlattice — a narrow interface, so the routes can be tested
against an in-memory fake and run against Workspaces (`workspaces.WorkspaceBackend`)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from mvlattice.http.jobs import Scope

if TYPE_CHECKING:
    from sqlglot import exp


@dataclass(frozen=True, slots=True)
class Rewritten:
    """The answer to a rewrite: the CLI's JSON document and what the log and metrics need."""

    model: str
    document: dict[str, Any]  # {"rewritten", "sql", "materializations", "explain"}
    rewritten: bool
    materializations: tuple[str, ...]
    seconds: float  # time spent rewriting


@dataclass(kw_only=True, frozen=True, slots=True)
class Answer:
    """The answer to a query: at most `limit` rows, and whether there were more."""

    model: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    truncated: bool
    rewritten: bool
    materializations: tuple[str, ...]
    sql: str  # what ran
    rewrite_seconds: float | None = None  # the rewriting part of the time, when known
    engine: str = "spark"  # who answered: local (the tile engine) | spark
    engine_reason: str = ""  # why Spark answered a rewritten query ("" when local did)
    miss: str = ""  # why a query to be rewritten was not (the nearest view's reason)


@dataclass(frozen=True, slots=True)
class SparkWork:
    """A query decided (rewritten once) that only Spark can answer: `run()` answers it, in one
    of the service's Spark query slots (SqlError / RefusedSqlError when it may not run,
    QueryTimeoutError past the deadline or once the query's cancel is set)."""

    run: Callable[[], Answer]


class Backend(Protocol):
    def models(self) -> tuple[str, ...]: ...

    def ready(self) -> bool: ...

    def rewrite(self, sql: str, explain: bool, model: str | None) -> Rewritten: ...

    def query(
        self,
        sql: str,
        rewrite: bool,
        limit: int,
        model: str | None,
        cancel: threading.Event | None = None,
    ) -> Answer:
        """Run client SQL in the sandbox (SqlError / RefusedSqlError when it may not run,
        QueryTimeoutError past the deadline or once `cancel` is set)."""
        ...

    def query_kept(self, sql: str, rewrite: bool, limit: int, model: str | None) -> Answer | None:
        """The answer kept for the same query while freshness, decided from local files
        alone, still approves every tile it was read from; else None. Cheap and free of
        Spark: the service asks it on its event loop."""
        ...

    def query_local(
        self,
        sql: str,
        rewrite: bool,
        limit: int,
        model: str | None,
        cancel: threading.Event | None = None,
        tree: exp.Query | None = None,
        check: Callable[[str], exp.Query | None] | None = None,
    ) -> Answer | SparkWork:
        """The answer when no Spark job is needed (the tile engine), else the decided query
        as SparkWork: answers from tiles never wait behind Spark jobs. `tree`: `sql` as the
        service's check parsed it (the pipeline then parses nothing); `check`: that check,
        for the backend to run unless the text's template answers it (no parse at all)."""
        ...

    def lattices(self, model: str | None) -> list[dict[str, Any]]: ...

    def lattice(self, name: str, model: str | None, plan: bool) -> dict[str, Any]: ...

    def lattice_now(self, name: str, model: str | None) -> dict[str, Any]: ...

    def tiles(self, model: str | None, lattice: str | None) -> list[dict[str, Any]]: ...

    def advice(
        self, model: str | None, since: str | None, stop: Callable[[], bool] = ...
    ) -> list[dict[str, Any]]:
        """Miss analytics per model (`mvlattice advise`), from the query log; QueryTimeoutError
        once `stop()` is true."""
        ...

    def log_versions(self, model: str | None) -> tuple[int | None, ...]:
        """The Delta version of each picked model's query log (what advice is kept by)."""
        ...

    def refresh_scope(self, tile: str, model: str | None) -> Scope:
        """The scope of refreshing a tile or materialization; NotFoundError when unknown,
        ConflictError when it is being built right now (by the scheduler, say)."""
        ...

    def materialize_scope(self, lattice: str, model: str | None) -> Scope: ...

    def run(self, kind: str, scope: Scope) -> tuple[bool, dict[str, Any]]:
        """Run a refresh or materialize job (on the jobs thread): (ok, result document)."""
        ...
