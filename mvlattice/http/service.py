"""What the HTTP routes share: the service's settings, backend, metrics, jobs and query log."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from mvlattice.http.advice import AdviceRunner
from mvlattice.http.backend import Backend
from mvlattice.http.errors import status_of
from mvlattice.http.gate import QueryGate
from mvlattice.http.jobs import Job, JobRunner
from mvlattice.http.metrics import Metrics
from mvlattice.http.recent import RecentQueries
from mvlattice.querylog.log import Literals
from mvlattice.querylog.log import Request as LoggedRequest


@dataclass(frozen=True, slots=True)
class Settings:
    token: str | None = None
    max_body_bytes: int = 1 << 20
    max_rows: int = 10_000
    rewrite_threads: int = 4  # rewriting is pure Python: more threads only fight for the GIL
    allowed_hosts: tuple[str, ...] = ()  # names besides loopback that clients may address
    bind_host: str | None = None
    query_timeout: float = 60.0  # seconds; a query is cancelled at its deadline
    max_queries: int = 4  # queries running at once
    max_waiting: int = 64  # queries waiting for a slot; beyond it: 503 + Retry-After
    max_response_bytes: int = 16 << 20  # a query answer's JSON; rows beyond it are cut
    engine: str = "auto"  # who may answer /v1/query: auto (the tile engine when it can) | spark
    header_timeout: float = 10.0  # seconds to send a request's headers; then the connection closes
    body_timeout: float = 30.0  # seconds to send a body after its headers; then it closes
    max_connections: int = 1024  # open at once, at most half the file limit; beyond: closed
    literals: Literals = "keep"  # `--query-log-literals`: blank hides them wherever SQL is shown


@dataclass
class Service:
    """What the routes share: the backend, metrics, jobs and where log entries go."""

    backend: Backend
    settings: Settings = field(default_factory=Settings)
    metrics: Metrics = field(default_factory=Metrics)
    record: Callable[[LoggedRequest], None] = lambda _request: None
    jobs: JobRunner | None = None
    # the scheduler's next runs: [{model, kind, name, cron, next_run}] (none without one)
    schedule: Callable[[], list[dict[str, Any]]] = lambda: []
    recent: RecentQueries = field(init=False)
    advice: AdviceRunner = field(init=False)
    # Spark's JVM as last probed: ok | down | unresponsive (`spark_watch.SparkWatch`)
    spark_state: Callable[[], str] = lambda: "ok"
    gate: QueryGate = field(init=False)
    running: set[threading.Event] = field(default_factory=set)  # cancel events of live queries
    _rewrite_limiter: Any = field(default=None, init=False, repr=False)

    async def rewrite_thread(self, work: Callable[[], Any]) -> Any:
        """Run CPU-bound rewriting on a few threads of its own (made in the event loop)."""
        if self._rewrite_limiter is None:
            self._rewrite_limiter = anyio.CapacityLimiter(self.settings.rewrite_threads)
        return await anyio.to_thread.run_sync(work, limiter=self._rewrite_limiter)

    def __post_init__(self) -> None:
        self.gate = QueryGate(self.settings.max_queries, self.settings.max_waiting)
        self.recent = RecentQueries(literals=self.settings.literals)
        self.advice = AdviceRunner(self.backend.advice, self.backend.log_versions)
        self.metrics.gauges["mvlattice_advice_computations_total"] = lambda: self.advice.computed
        self.metrics.gauges["mvlattice_advice_running"] = lambda: self.advice.running
        if self.jobs is None:
            self.jobs = JobRunner(on_finish=self.job_finished)

    def cancel_queries(self) -> None:
        """Cancel every running query (their Spark jobs stop) and the advice being computed:
        the service is stopping."""
        for cancel in list(self.running):
            cancel.set()
        self.advice.cancel()

    def job_finished(self, job: Job) -> None:
        self.metrics.refresh("http", "ok" if job.status == "succeeded" else "failed")
        self.advice.forget()

    def log(
        self,
        kind: str,
        sql: str,
        model: str | None,
        started: float,
        explain: Any = None,
        **outcome: Any,
    ) -> None:
        latency = (time.perf_counter() - started) * 1000.0
        request = LoggedRequest(
            at=time.time(), sql=sql, kind=kind, latency_ms=latency, model=model or "", **outcome
        )
        self.record(request)
        self.recent.add(request, explain)

    def failed(
        self, kind: str, sql: str, model: str | None, started: float, exc: Exception
    ) -> None:
        _, code, message = status_of(exc)
        self.metrics.rewrite("error")
        self.log(kind, sql, model, started, rewritten=False, views=(), outcome=code,
                 message=message)  # fmt: skip
