"""Counting every HTTP request by method, route template and status (for `/metrics`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.routing import Match

from mvlattice.http.metrics import Metrics
from mvlattice.http.security import ASGIApp, Message, Receive, Scope, Send


class RequestMetrics:
    """Outermost middleware: sees the final status of every request, 401s and 413s included.
    Routes are labelled by template (`/v1/tiles/{name}/refresh`), unknown paths as
    `unmatched`, so labels stay few whatever clients send."""

    def __init__(self, app: ASGIApp, metrics: Metrics, routes: Sequence[Any] = ()) -> None:
        self.app, self.metrics, self.routes = app, metrics, tuple(routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            self.metrics.request(scope["method"], self._route(scope), status)

    def _route(self, scope: Scope) -> str:
        """The template of the route that served the request — or would have, when a
        middleware answered first (401, 413)."""
        route: Any = scope.get("route")
        if route is None:
            route = next((r for r in self.routes if r.matches(scope)[0] != Match.NONE), None)
        path = getattr(route, "path", None)
        return path if isinstance(path, str) else "unmatched"
