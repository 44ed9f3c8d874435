"""Running the service: Spark, the query-log writers and the refresh scheduler start before
the port opens; a stop (SIGTERM, Ctrl-C) lets running refreshes finish — a second Ctrl-C
abandons them, which is safe: Delta commits are atomic, the previous tile version stays valid.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import gc
import os
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any

from mvlattice.errors import UsageError
from mvlattice.http.app import create_app
from mvlattice.http.metrics import Metrics
from mvlattice.http.security import check_binding
from mvlattice.http.service import Service, Settings
from mvlattice.http.spark_watch import EXIT_SPARK_LOST, SparkWatch
from mvlattice.http.workspaces import WorkspaceBackend
from mvlattice.querylog.log import Request
from mvlattice.querylog.writer import LogOptions, QueryLogWriter
from mvlattice.spark import quiet_python_loggers
from mvlattice.workspace import Workspace

if TYPE_CHECKING:
    from mvlattice.http.connections import ConnectionGuard

Say = Callable[[str], None]


class Runtime:
    """Everything but HTTP: the backend's Spark, one query-log writer per warehouse, one
    scheduler per model with `refresh: {cron: …}` targets, and the HTTP jobs."""

    def __init__(
        self,
        workspaces: Mapping[str, Workspace],
        say: Say,
        *,
        log_interval: float = 2.0,
        query_timeout: float = 60.0,
        log_options: LogOptions | None = None,
        engine: str = "auto",
        max_bytes: int | None = None,
    ):
        self.workspaces = dict(workspaces)
        self.backend = WorkspaceBackend(self.workspaces, query_timeout, engine, max_bytes)
        self.metrics = Metrics()
        self.say = say
        self.log_interval = log_interval
        self.log_options = log_options or LogOptions()
        self.writers: dict[str, QueryLogWriter] = {}
        self.schedulers: list[Any] = []
        self.scheduled: list[tuple[str, Any]] = []  # (model, its scheduler)
        self.service: Service | None = None
        self.stopped = False
        self.clean = True  # False once a running refresh was abandoned

    def start(self, *, schedule: bool) -> None:
        self.backend.start()
        for ws in self.workspaces.values():
            if ws.warehouse not in self.writers:
                writer = QueryLogWriter(
                    ws.spark, ws.warehouse, interval=self.log_interval, options=self.log_options
                )
                self.writers[ws.warehouse] = writer.start()
        self.metrics.gauges["mvlattice_query_log_pending"] = lambda: sum(
            w.pending for w in self.writers.values()
        )
        self.metrics.gauges["mvlattice_query_log_written_total"] = lambda: sum(
            w.written for w in self.writers.values()
        )
        self.metrics.gauges["mvlattice_query_log_dropped_total"] = lambda: sum(
            w.dropped for w in self.writers.values()
        )
        self.metrics.gauges["mvlattice_query_log_rejected_total"] = lambda: sum(
            w.rejected for w in self.writers.values()
        )
        self.metrics.gauges["mvlattice_query_log_append_failures_total"] = lambda: sum(
            w.failures for w in self.writers.values()
        )
        self._engine_gauges()
        if schedule:
            for name, ws in self.workspaces.items():
                self._schedule(name, ws)

    def _engine_gauges(self) -> None:
        """The tile engine's memory against its budgets and its kept answers, summed over the
        served models."""
        engines = [ws.tile_engine for ws in self.workspaces.values()]
        gauges = {
            "mvlattice_tile_cache_bytes": lambda: sum(e.cache.bytes for e in engines),
            "mvlattice_tile_cache_budget_bytes": lambda: sum(e.cache.budget_bytes for e in engines),
            "mvlattice_tile_cache_peak_bytes": lambda: sum(e.cache.peak_bytes for e in engines),
            "mvlattice_kept_answers_bytes": lambda: sum(e.answers.bytes for e in engines),
            "mvlattice_kept_answers_served_total": lambda: sum(e.answers.hits for e in engines),
            "mvlattice_kept_answers_dropped_total": lambda: sum(e.answers.dropped for e in engines),
            "mvlattice_template_hits_total": lambda: sum(
                ws.serving.templates.hits for ws in self.workspaces.values()
            ),
            "mvlattice_template_misses_total": lambda: sum(
                ws.serving.templates.misses for ws in self.workspaces.values()
            ),
            # Rewrites the serving pipeline ran: one per request that rewrites, whichever
            # engine answers (a Spark-answered query is not rewritten a second time).
            "mvlattice_rewrite_runs_total": lambda: sum(
                ws.serving.rewrite_count.value for ws in self.workspaces.values()
            ),
        }
        self.metrics.gauges.update(gauges)

    def _schedule(self, name: str, ws: Workspace) -> None:
        from mvlattice.jobs.cron import scheduled_targets
        from mvlattice.jobs.scheduler import for_model

        targets = scheduled_targets(ws.model)
        if not targets:
            return
        scheduler = for_model(ws.spark, ws.model, ws.warehouse, say=self._scheduler_say(name))
        scheduler.runner = self._counted(scheduler.runner)
        scheduler.start()
        if not scheduler.running:  # another process runs this warehouse's scheduler
            return
        self.schedulers.append(scheduler)
        self.scheduled.append((name, scheduler))
        for t in targets:
            self.say(f"scheduled: refresh {t.kind} {t.name} at '{t.cron}' ({name})")

    def schedule(self) -> list[dict[str, Any]]:
        """Every scheduled job with its next run, soonest first (for the status page)."""
        runs = [
            {"model": model, "kind": job.kind, "name": job.name, "cron": job.cron,
             "next_run": _iso(job.next_run)}
            for model, scheduler in self.scheduled
            if scheduler.running
            for job in scheduler.jobs()
            if not job.retry
        ]  # fmt: skip
        return sorted(runs, key=lambda r: (r["next_run"] is None, r["next_run"] or ""))

    def _counted(self, runner: Callable[[str, str], tuple[bool, str]]) -> Callable:
        def run(kind: str, name: str) -> tuple[bool, str]:
            try:
                ok, summary = runner(kind, name)
            except Exception:
                self.metrics.refresh("schedule", "failed")
                raise
            self.metrics.refresh("schedule", "ok" if ok else "failed")
            if self.service is not None:
                self.service.advice.forget()  # the tiles changed: so may the advice
            return ok, summary

        return run

    def _scheduler_say(self, model: str) -> Say:
        return lambda line: self.say(f"scheduler ({model}): {line}")

    def record(self, request: Request) -> None:
        ws = self.workspaces.get(request.model) or next(iter(self.workspaces.values()))
        writer = self.writers.get(ws.warehouse)
        if writer is not None:
            writer.record(request)

    def stop(self, abandon: Callable[[], bool]) -> bool:
        """Stop jobs and schedulers (waiting for running refreshes unless `abandon()`), write
        the query log, stop Spark. False when a refresh was abandoned."""
        if self.stopped:
            return self.clean
        clean = True
        jobs = self.service.jobs if self.service else None
        if jobs is not None and jobs.active():
            self.say("stopping: waiting for running jobs (Ctrl-C again abandons them)")
        if jobs is not None:
            clean = jobs.stop(abandon=abandon) and clean
        for scheduler in self.schedulers:
            clean = _wait(functools.partial(scheduler.shutdown, wait=True), abandon) and clean
        for writer in self.writers.values():
            writer.close(timeout=120.0 if clean else 10.0)
        if clean:
            next(iter(self.workspaces.values())).close()  # one SparkSession for all models
        self.stopped, self.clean = True, clean
        return clean


def status_url(host: str, port: int, https: bool) -> str:
    """Where a browser on this machine finds the status pages (a wildcard binding is reached
    on the loopback address)."""
    shown = {"0.0.0.0": "127.0.0.1", "::": "[::1]", "": "127.0.0.1"}.get(host, host)
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"  # an IPv6 address in a URL
    return f"{'https' if https else 'http'}://{shown}:{port}/ui/"


def _exit_spark_lost(runtime: Runtime, say: Say, why: str) -> None:
    """Spark cannot start again in this process: write what the query log holds and exit
    for the supervisor to restart the service."""
    say(f"{why}; exiting with code {EXIT_SPARK_LOST} for the supervisor to restart the service")
    for writer in runtime.writers.values():
        with contextlib.suppress(Exception):  # the log's writer may need the JVM too
            writer.close(timeout=5.0)
    os._exit(EXIT_SPARK_LOST)


def _iso(when: dt.datetime | None) -> str | None:
    if when is None:
        return None
    return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _wait(action: Callable[[], None], abandon: Callable[[], bool]) -> bool:
    thread = threading.Thread(target=action, daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(0.2)
        if thread.is_alive() and abandon():
            return False
    return True


def check_port(host: str, port: int) -> None:
    """Fail in a second, not after Spark started, when the port is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def _connection_guard(settings: Settings, say: Say) -> ConnectionGuard:
    from mvlattice.http import connections

    limits = connections.ConnectionLimits(
        settings.header_timeout, settings.body_timeout, settings.max_connections
    )
    files = connections.raise_file_limit()
    guard = connections.connection_guard(limits, files)
    say(f"connections: at most {guard.cap} open (file limit {files or 'none'}); headers "
        f"within {limits.header_timeout:g} s, bodies within {limits.body_timeout:g} s")  # fmt: skip
    return guard


def serve(
    workspaces: Mapping[str, Workspace],
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    settings: Settings | None = None,
    schedule: bool = True,
    say: Say | None = None,
    tls: tuple[str, str] | None = None,
    log_options: LogOptions | None = None,
) -> None:
    """Run until stopped. Raises UsageError for a bad binding before anything starts.
    `tls`: (certificate file, key file) to serve HTTPS; `log_options`: the query log's
    retention and literals."""
    import uvicorn

    from mvlattice.http import connections

    settings = settings or Settings()
    say = say or (lambda line: print(f"mvlattice: {line}", file=sys.stderr, flush=True))
    check_binding(host, settings.token, tls is not None)
    check_port(host, port)
    guard = _connection_guard(settings, say)  # before Spark starts: its JVM inherits the limit
    runtime = Runtime(
        workspaces, say, query_timeout=settings.query_timeout, log_options=log_options,
        engine=settings.engine, max_bytes=settings.max_response_bytes,
    )  # fmt: skip
    lost: list[str] = []
    server: uvicorn.Server | None = None

    def spark_lost(why: str) -> None:
        lost.append(why)
        if server is not None:
            server.should_exit = True

    watch = SparkWatch(runtime.backend.spark_alive, spark_lost)
    runtime.service = service = Service(
        runtime.backend, settings, runtime.metrics, record=runtime.record,
        schedule=runtime.schedule, spark_state=watch.state,
    )  # fmt: skip
    say(f"starting Spark for {', '.join(workspaces)} …")
    runtime.start(schedule=schedule)
    watch.start()
    runtime.metrics.gauges.update(guard.gauges())

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        from starlette.concurrency import run_in_threadpool

        yield
        if not lost:  # with Spark gone, `_exit_spark_lost` ends the process instead
            await run_in_threadpool(runtime.stop, lambda: bool(server and server.force_exit))

    config = uvicorn.Config(
        create_app(service, lifespan),
        host=host,
        port=port,
        lifespan="on",
        http=connections.guarded_protocol(guard),
        access_log=False,
        timeout_graceful_shutdown=30,
        log_level="info",
        ssl_certfile=tls[0] if tls else None,
        ssl_keyfile=tls[1] if tls else None,
    )

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            # Cancel running queries as a stop begins (uvicorn would wait for them).
            service.cancel_queries()
            super().handle_exit(sig, frame)

    server = Server(config)
    quiet_python_loggers()  # uvicorn's logging set-up ran in Config()
    # Spark, the models and the routes made many long-lived objects; left to the cyclic
    # collector, each of its full passes over them stalls every request in flight. Frozen,
    # they are never traversed again.
    gc.collect()
    gc.freeze()
    say(f"status pages at {status_url(host, port, tls is not None)} (the HTTP API under /v1)")
    try:
        server.run()
    finally:
        watch.stop()
        if lost:
            _exit_spark_lost(runtime, say, lost[0])
        if not runtime.stop(lambda: bool(server.force_exit)):
            say("abandoned running refreshes; the previous tile versions stay valid")
            os._exit(130)
