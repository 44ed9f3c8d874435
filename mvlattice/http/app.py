"""The HTTP API's routes over a `Backend`: thin handlers, Spark work on worker threads.

Each rewrite/query request is timed, counted in the metrics and handed to the query log
(which writes off the request path); errors become JSON through `errors.status_of`.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import anyio
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from mvlattice.errors import (
    MvlatticeError,
    Outcome,
    OverloadedError,
    QueryTimeoutError,
    ResponseTooLargeError,
    SparkUnavailableError,
)
from mvlattice.http.backend import Answer, SparkWork
from mvlattice.http.errors import body, http_status, one_line, status_of
from mvlattice.http.metrics import CONTENT_TYPE
from mvlattice.http.middleware import RequestMetrics
from mvlattice.http.recent import HISTORY
from mvlattice.http.schemas import (
    Health,
    JobResponse,
    LatticeList,
    QueryLogList,
    QueryRequest,
    QueryResponse,
    RewriteRequest,
    RewriteResponse,
    ScheduleList,
    TileList,
    errors,
)
from mvlattice.http.security import (
    BearerAuth,
    BodyLimit,
    SameOrigin,
    allowed_hosts,
    check_query,
)
from mvlattice.http.service import Service
from mvlattice.http.ui.routes import add_ui_routes
from mvlattice.output import jsonable
from mvlattice.querylog.log import parse_since

ASGIApp = Any


def create_app(service: Service, lifespan: Any = None) -> ASGIApp:
    """The ASGI app: FastAPI routes inside metrics, bearer-token and body-size middlewares."""
    # Swagger UI and ReDoc load their scripts, unpinned, from a CDN: with a token set, such a
    # script would run on the origin whose status page keeps the token in sessionStorage.
    docs = service.settings.token is None
    app = FastAPI(
        title="mvlattice",
        version="1",
        description="Rewrite SQL onto tiles and materialized views; tile status and refresh.",
        lifespan=lifespan,
        docs_url="/docs" if docs else None,
        redoc_url="/redoc" if docs else None,
    )
    app.state.service = service
    _error_handlers(app)
    _query_routes(app, service)
    _catalog_routes(app, service)
    _ops_routes(app, service)
    add_ui_routes(app, service)
    settings = service.settings
    inner = BodyLimit(app, settings.max_body_bytes)
    authed = BearerAuth(inner, settings.token)
    outer = SameOrigin(authed, allowed_hosts(settings.allowed_hosts, settings.bind_host))
    return RequestMetrics(outer, service.metrics, app.router.routes)


# -- rewrite and query -------------------------------------------------------------------------
def _query_routes(app: FastAPI, service: Service) -> None:
    backend = service.backend

    @app.post(
        "/v1/rewrite", response_model=None, responses={200: {"model": RewriteResponse},
                                                       **errors(400, 401, 404, 413, 415)}
    )  # fmt: skip
    async def rewrite(req: RewriteRequest) -> JSONResponse:
        """Rewrite a query onto tiles and materializations (no execution)."""
        started = time.perf_counter()

        def work():
            check_query(req.sql)
            return backend.rewrite(req.sql, req.explain, req.model)

        try:
            out = await service.rewrite_thread(work)
        except Exception as exc:
            service.failed("rewrite", req.sql, req.model, started, exc)
            raise
        service.metrics.rewrite(_outcome(out.rewritten), out.seconds)
        service.log("rewrite", req.sql, out.model, started, out.document.get("explain"),
                    rewritten=out.rewritten, views=out.materializations,
                    outcome=Outcome.OK)  # fmt: skip
        doc = {**out.document, "model": out.model, "elapsed_ms": _ms(started)}
        return JSONResponse(jsonable(doc))

    @app.post(
        "/v1/query", response_model=None, responses={200: {"model": QueryResponse},
                                                     **errors(400, 401, 403, 404, 408, 413,
                                                              415, 421, 503)}
    )  # fmt: skip
    async def query(req: QueryRequest, request: Request) -> Response:
        """Run a query (rewritten first unless `rewrite` is false) in the sandbox: only the
        model's relations, bounded in time, rows and bytes."""
        started = time.perf_counter()
        settings = service.settings
        limit = settings.max_rows if req.limit is None else min(req.limit, settings.max_rows)
        cancel = threading.Event()

        def local() -> tuple[Answer, bytes] | SparkWork:
            # What text alone refuses never takes a query slot: the backend checks the text
            # unless its template (checked before) answers it.
            out = backend.query_local(req.sql, req.rewrite, limit, req.model, cancel,
                                      check=check_query)  # fmt: skip
            if isinstance(out, SparkWork):
                return out
            return out, answer_bytes(out, limit, started, max_bytes)

        def kept() -> tuple[Answer, bytes] | None:
            # No `check_query` here (a parse would hold the event loop): an answer is kept
            # under the sandbox's describer only for a text that passed it, in `local`.
            out = backend.query_kept(req.sql, req.rewrite, limit, req.model)
            return None if out is None else (out, answer_bytes(out, limit, started, max_bytes))

        max_bytes = settings.max_response_bytes
        deadline = time.monotonic() + settings.query_timeout
        what = f"{settings.query_timeout:g} s (the service's --query-timeout)"
        try:
            # A kept answer still approved is served right here: deciding so reads a few local
            # Delta logs, cheaper than handing the request to a thread and back. Other answers
            # from tiles take no Spark query slot: they never wait behind Spark jobs.
            answered = kept() or await service.rewrite_thread(local)
            if not isinstance(answered, SparkWork):
                out, payload = answered
                return _answered(service, req, out, payload, started)
            spark_work = answered

            def work() -> tuple[Answer, bytes]:
                out = spark_work.run()  # rewritten already, in `local`
                return out, answer_bytes(out, limit, started, settings.max_response_bytes)

            _check_spark(service)  # a dead JVM: 503 at once, not a failure per query
            service.running.add(cancel)
            try:
                # Waiting, analysis, optimization and the run share one deadline.
                work_done = service.gate.run(work, deadline, cancel, what)
                out, payload = await _until_disconnect(request, cancel, work_done)
            finally:
                service.running.discard(cancel)
        except Exception as exc:
            service.failed("query", req.sql, req.model, started, exc)
            raise
        return _answered(service, req, out, payload, started)


def _check_spark(service: Service) -> None:
    state = service.spark_state()
    if state != "ok":
        raise SparkUnavailableError(
            f"Spark is {state.replace('_', ' ')}: queries that need Spark cannot run until the "
            "service restarts (answers from tiles still work)"
        )


def _answered(
    service: Service, req: QueryRequest, out: Any, payload: bytes, started: float
) -> Response:
    if req.rewrite:
        service.metrics.rewrite(_outcome(out.rewritten), out.rewrite_seconds)
    service.metrics.answered(out.engine)
    service.log("query", req.sql, out.model, started, rewritten=out.rewritten,
                views=out.materializations, outcome=Outcome.OK,
                engine=out.engine)  # fmt: skip
    return Response(payload, media_type="application/json")


async def _until_disconnect(request: Request, cancel: threading.Event, work: Any) -> Any:
    """Await `work`; set `cancel` (the query's Spark jobs stop) if the client goes away."""
    outcome: dict[str, Any] = {}

    async def watch() -> None:
        while not cancel.is_set():
            if await request.is_disconnected():
                cancel.set()
                return
            await anyio.sleep(0.25)

    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        try:
            outcome["value"] = await work
        except Exception as exc:  # noqa: BLE001 - re-raised below, outside the task group
            outcome["error"] = exc
        finally:
            group.cancel_scope.cancel()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def answer_bytes(out: Any, limit: int, started: float, max_bytes: int) -> bytes:
    """The answer's JSON, built on the query's thread: rows beyond `max_bytes` are cut (and
    `truncated` set); a first row alone over it is ResponseTooLargeError."""
    rows: list[bytes] = []
    size = 0
    truncated = out.truncated
    for row in out.rows:
        encoded = json_bytes(list(row))
        size += len(encoded) + 1
        if size > max_bytes:
            if not rows:
                raise ResponseTooLargeError(
                    f"the first row alone is larger than the {max_bytes:,}-byte response limit"
                )
            truncated = True
            break
        rows.append(encoded)
    head = {
        "columns": list(out.columns),
        "row_count": len(rows),
        "truncated": truncated,
        "limit": limit,
        "rewritten": out.rewritten,
        "materializations": list(out.materializations),
        "sql": out.sql,
        "model": out.model,
        "elapsed_ms": _ms(started),
        "engine": out.engine,
        "engine_reason": out.engine_reason,
        "miss": out.miss,
    }
    return json_bytes(head)[:-1] + b', "rows": [' + b",".join(rows) + b"]}"


def json_bytes(value: Any) -> bytes:
    return json.dumps(jsonable(value), ensure_ascii=False, allow_nan=False).encode("utf-8")


# -- lattices, tiles, jobs ---------------------------------------------------------------------
def _catalog_routes(app: FastAPI, service: Service) -> None:
    backend, jobs = service.backend, service.jobs
    assert jobs is not None

    @app.get("/v1/lattices", response_model=LatticeList, responses=errors(400, 401, 404))
    async def lattices(model: str | None = None) -> dict[str, Any]:
        """Every lattice of the served models: dimensions, measures, declared tiles."""
        return {"lattices": await run_in_threadpool(backend.lattices, model)}

    @app.get("/v1/lattices/{name}", response_model=None, responses=errors(400, 401, 404))
    async def lattice(name: str, model: str | None = None, plan: bool = True) -> JSONResponse:
        """One lattice with its planned tiles (HRU96; `plan=false` skips planning)."""
        return JSONResponse(jsonable(await run_in_threadpool(backend.lattice, name, model, plan)))

    @app.get("/v1/tiles", response_model=None, responses={200: {"model": TileList},
                                                           **errors(400, 401, 404)})  # fmt: skip
    async def tiles(model: str | None = None, lattice: str | None = None) -> JSONResponse:
        """The tile catalog: status (fresh, stale, …), rows, versions, hits."""
        entries = await run_in_threadpool(backend.tiles, model, lattice)
        return JSONResponse(jsonable({"tiles": entries}))

    @app.get("/v1/advice", response_model=None, responses=errors(400, 401, 404, 503))
    async def advice(
        request: Request, model: str | None = None, since: str | None = None
    ) -> JSONResponse:
        """Miss analytics from the query log (`mvlattice advise`): misses by reason, grouped by
        the nearest tile and what it lacks, with the tile element to add to the model. Kept
        until the query log changes; one computation at a time (503 while another runs)."""
        parse_since(since)  # a bad `since` is a 400 at once, not a 503 behind running advice
        found = await service.advice.advice(model, since, request)
        if found is None:
            raise QueryTimeoutError("advice cancelled: its client went away")
        return JSONResponse(jsonable({"models": found}))

    @app.post("/v1/tiles/{name}/refresh", status_code=202, response_model=JobResponse,
              responses=errors(400, 401, 404, 409, 415))  # fmt: skip
    async def refresh(name: str, model: str | None = None) -> dict[str, Any]:
        """Refresh one tile or materialization in the background; returns the job."""
        scope = await run_in_threadpool(backend.refresh_scope, name, model)
        return jobs.submit("refresh", scope, lambda: backend.run("refresh", scope)).to_json()

    @app.post("/v1/lattices/{name}/materialize", status_code=202, response_model=JobResponse,
              responses=errors(400, 401, 404, 409, 415))  # fmt: skip
    async def materialize(name: str, model: str | None = None) -> dict[str, Any]:
        """Build a lattice's declared and planned tiles in the background; returns the job."""
        scope = await run_in_threadpool(backend.materialize_scope, name, model)
        return jobs.submit(
            "materialize", scope, lambda: backend.run("materialize", scope)
        ).to_json()

    @app.get("/v1/jobs/{job_id}", response_model=JobResponse, responses=errors(401, 404))
    async def job(job_id: str) -> dict[str, Any]:
        """A background job's status and, when done, its result."""
        return jobs.get(job_id).to_json()


def _ops_routes(app: FastAPI, service: Service) -> None:
    @app.get("/healthz", response_model=Health, responses=errors(503))
    async def healthz() -> Any:
        """Liveness and load; needs no token. `status` is `saturated` while every query slot
        and every waiting place is taken (new queries get 503 then); `spark_down` or
        `spark_unresponsive` (with status 503) when Spark's JVM died or stopped answering.
        `queries.overrunning` counts work still running after its client had a 408."""
        gate = service.gate
        spark = service.spark_state()
        status = "ok" if service.backend.ready() else "starting"
        if spark != "ok":
            status = f"spark_{spark}"
        elif status == "ok" and gate.saturated:
            status = "saturated"
        doc = {"status": status, "models": list(service.backend.models()),
               "queries": gate.state(), "spark": spark}  # fmt: skip
        return JSONResponse(doc, status_code=503) if spark != "ok" else doc

    # These two serve the status page first (and any client: README lists them).
    @app.get("/v1/querylog", response_model=QueryLogList, responses=errors(400, 401))
    async def querylog(limit: int = Query(100, ge=0, le=HISTORY)) -> dict[str, Any]:
        """The newest rewrite/query requests since the service started, newest first (the
        whole log: `mvlattice log`); a miss's explanation when it was asked for."""
        return {"entries": await run_in_threadpool(service.recent.shown, limit)}

    @app.get("/v1/schedule", response_model=ScheduleList, responses=errors(401))
    async def schedule() -> dict[str, Any]:
        """The refresh scheduler's jobs and their next run (empty with --no-scheduler)."""
        return {"runs": await run_in_threadpool(service.schedule)}

    @app.get("/metrics", response_class=PlainTextResponse, responses=errors(401))
    async def metrics() -> PlainTextResponse:
        """Prometheus text format."""
        return PlainTextResponse(service.metrics.render(), media_type=CONTENT_TYPE)


# -- errors ------------------------------------------------------------------------------------
def _error_handlers(app: FastAPI) -> None:
    async def mvlattice_error(_request: Request, exc: Exception) -> JSONResponse:
        status, code, message = status_of(exc)
        headers = None
        if isinstance(exc, OverloadedError):
            headers = {"Retry-After": str(exc.retry_after)}
        return JSONResponse(body(code, message), status_code=status, headers=headers)

    async def http_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        status, code, message = http_status(exc.status_code, str(exc.detail))
        return JSONResponse(body(code, message), status_code=status, headers=exc.headers)

    async def invalid(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return JSONResponse(body("bad_request", _validation_message(exc)), status_code=400)

    app.add_exception_handler(MvlatticeError, mvlattice_error)
    app.add_exception_handler(Exception, mvlattice_error)  # bugs: 500, traceback in the log
    app.add_exception_handler(HTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return one_line(Exception("; ".join(parts) or "invalid request"))


def _outcome(rewritten: bool) -> str:
    return "rewritten" if rewritten else "not_rewritten"


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000.0, 3)
