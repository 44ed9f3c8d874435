"""The status page's routes: data-free shells and static files (open, see
`security.is_open`), and HTML fragments behind the bearer token like the JSON API.

Fragments are rendered from the same backend calls as the JSON routes; the shells' script
fetches them with the token, swaps them in and polls, so the page follows a refresh without a
reload. None of these routes is in the OpenAPI document: the JSON API is the contract.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from mvlattice.errors import MvlatticeError, NotFoundError
from mvlattice.http.errors import one_line
from mvlattice.http.ui.advice_view import advice_html
from mvlattice.http.ui.example import candidates, fallback
from mvlattice.http.ui.html import LANDING, PAGES, Page, shell
from mvlattice.http.ui.lattices_view import lattices_html
from mvlattice.http.ui.queries_view import queries_html
from mvlattice.http.ui.tiles_view import tiles_html

if TYPE_CHECKING:
    from mvlattice.http.service import Service

STATIC = Path(__file__).with_name("static")
ASSETS = {  # served by name only: nothing else under /ui/static/ exists
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
    "favicon.svg": "image/svg+xml",
}
EXPLAIN_PER_RENDER = 10  # misses explained per fragment render, so a poll stays cheap
QUERIES_SHOWN = 100

# No inline script or style, nothing from elsewhere: even a markup bug cannot run a script.
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def add_ui_routes(app: FastAPI, service: Service) -> None:
    _shell_routes(app, service.settings.token is not None)
    _fragment_routes(app, service)


def html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status, headers=HEADERS)


def _shell_routes(app: FastAPI, needs_token: bool) -> None:
    @app.get("/", include_in_schema=False)
    @app.get("/ui", include_in_schema=False)
    async def home() -> RedirectResponse:
        return RedirectResponse("/ui/", status_code=307)

    @app.get("/ui/", include_in_schema=False)
    async def landing() -> HTMLResponse:
        return html(shell(LANDING, needs_token))

    for page in PAGES:
        app.add_api_route(f"/ui/{page.slug}", _shell_of(page, needs_token), methods=["GET"],
                          include_in_schema=False)  # fmt: skip

    @app.get("/ui/static/{name}", include_in_schema=False)
    async def static(name: str) -> Response:
        if name not in ASSETS:
            raise NotFoundError(f"no file '{name}' under /ui/static/")
        body = (STATIC / name).read_bytes()
        headers = {**HEADERS, "Cache-Control": "max-age=3600"}
        return Response(body, media_type=ASSETS[name], headers=headers)


def _shell_of(page: Page, needs_token: bool) -> Any:
    async def route() -> HTMLResponse:
        return html(shell(page, needs_token))

    route.__name__ = f"ui_{page.slug}"
    return route


def _fragment_routes(app: FastAPI, service: Service) -> None:
    backend = service.backend

    @app.get("/ui/part/tiles", include_in_schema=False)
    async def tiles() -> HTMLResponse:
        entries = await run_in_threadpool(backend.tiles, None, None)
        return html(tiles_html(entries, service.schedule()))

    @app.get("/ui/part/lattices", include_in_schema=False)
    async def lattices() -> HTMLResponse:
        return html(lattices_html(await run_in_threadpool(_lattices, service)))

    @app.get("/ui/part/queries", include_in_schema=False)
    async def queries() -> HTMLResponse:
        await _explain_misses(service)
        entries = await run_in_threadpool(service.recent.shown, QUERIES_SHOWN)
        return html(queries_html(entries))

    @app.get("/ui/part/advice", include_in_schema=False)
    async def advice(request: Request) -> HTMLResponse:
        found = await service.advice.advice(None, None, request)
        return html(advice_html(found or []))

    @app.get("/ui/part/example", include_in_schema=False)
    async def example() -> JSONResponse:
        return JSONResponse(await _example(service), headers=HEADERS)


def _lattices(service: Service) -> list[dict[str, Any]]:
    """Every lattice with its plan, or what its planning does now; a lattice whose planning
    fails says why instead."""
    docs = []
    for listed in service.backend.lattices(None):
        name, model = listed["name"], listed.get("model")
        try:
            docs.append(service.backend.lattice_now(name, model))  # never waits minutes
        except MvlatticeError as exc:
            docs.append({**listed, "plan_error": one_line(exc)})
    return docs


async def _example(service: Service) -> dict[str, Any]:
    """The playground's first query: the first candidate the rewriter puts on a built tile
    (rewritten here, not logged: no user asked), else a count Spark answers from the tables."""
    backend = service.backend
    lattices = await run_in_threadpool(backend.lattices, None)
    tiles = await run_in_threadpool(backend.tiles, None, None)
    for found in candidates(lattices, tiles):

        def work(sql: str = found.sql, model: str | None = found.model) -> Any:
            return backend.rewrite(sql, False, model)

        try:
            done = await service.rewrite_thread(work)
        except MvlatticeError:
            continue  # a name the example wrote badly: try the next tile
        if done.rewritten:
            return {"sql": found.sql, "model": found.model, "tiles": list(done.materializations)}
    spare = fallback(lattices)
    return {"sql": spare.sql if spare else "", "model": spare and spare.model, "tiles": []}


async def _explain_misses(service: Service) -> None:
    """Explain the newest misses whose request did not ask for an explanation — now, off the
    request path, without logging (it is not a user's request); kept with the entry."""
    todo = [e for e in service.recent.newest(QUERIES_SHOWN) if e.miss and e.explain is None]
    for entry in todo[:EXPLAIN_PER_RENDER]:
        request = entry.request

        def work(sql: str = request.sql, model: str = request.model) -> Any:
            return service.backend.rewrite(sql, True, model or None).document.get("explain")

        try:
            explain = await service.rewrite_thread(work)
        except MvlatticeError as exc:
            explain = [{"view": None, "outcome": "error", "reason": "", "message": one_line(exc)}]
        service.recent.explained(entry.id, explain or [])
