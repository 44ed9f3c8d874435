"""What the service lets in: loopback unless a token is set, bearer tokens compared in constant
time, a bound on request bodies, and only queries (`SELECT` / `WITH`) as SQL.

The middlewares are plain ASGI so that they run before FastAPI reads or parses anything.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from mvlattice.errors import SqlError, UsageError
from mvlattice.service.http.errors import body_bytes, http_status

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

OPEN_PATHS = frozenset({"/healthz"})  # liveness probes need no token
# The status page's shells and static files hold no data (the page fetches everything else with
# the token the user gives it), so a browser can load them without an Authorization header.
UI_SHELLS = frozenset({"/", "/ui", "/ui/", "/ui/lattices", "/ui/tiles", "/ui/queries",
                       "/ui/playground"})  # fmt: skip
UI_STATIC = "/ui/static/"
MIN_TOKEN_LENGTH = 16


# -- binding and tokens ------------------------------------------------------------------------
def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_token(path: str | None) -> str | None:
    """The bearer token in a file (surrounding whitespace dropped); None without a file."""
    if path is None:
        return None
    try:
        token = Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise UsageError(f"cannot read token file {path}: {exc.strerror or exc}") from None
    if len(token) < MIN_TOKEN_LENGTH or any(c.isspace() for c in token):
        raise UsageError(
            f"token file {path}: the token must be at least {MIN_TOKEN_LENGTH} characters "
            "with no spaces"
        )
    return token


def check_binding(host: str, token: str | None) -> None:
    """Anything but loopback is reachable by others: it needs a token."""
    if not is_loopback(host) and token is None:
        raise UsageError(
            f"binding to {host} exposes the service beyond this machine; give --token-file "
            "(a file holding a bearer token) or bind to 127.0.0.1"
        )


def token_matches(header: str | None, token: str) -> bool:
    scheme, _, given = (header or "").partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode("utf-8"), token.encode("utf-8"))


# -- SQL -----------------------------------------------------------------------------------------
def check_query(sql: str) -> None:
    """Only one statement, and a query: SELECT, WITH … SELECT, or set operations of those."""
    if len(sql) <= MAX_CACHED_SQL:
        _accepted(sql)  # accepted queries are remembered; refusals raise and are not
        return
    _check(sql)


MAX_CACHED_SQL = 20_000


@functools.lru_cache(maxsize=4096)
def _accepted(sql: str) -> bool:
    _check(sql)
    return True


def _check(sql: str) -> None:
    try:
        trees = [t for t in sqlglot.parse(sql, read="spark") if t is not None]
    except SqlglotError as exc:
        raise SqlError(f"SQL does not parse: {_first_line(exc)}") from None
    if len(trees) != 1:
        raise SqlError(f"expected one SQL statement, got {len(trees)}")
    if not isinstance(trees[0], exp.Query):
        kind = trees[0].key.upper()
        raise SqlError(f"only queries (SELECT or WITH) are accepted, not {kind}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# -- middlewares -------------------------------------------------------------------------------
async def send_error(send: Send, status: int, message: str, headers: tuple = ()) -> None:
    status, code, message = http_status(status, message)
    payload = body_bytes(code, message)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


def is_open(path: str) -> bool:
    """Paths anyone may GET: liveness and the status page's data-free shells and files (one
    path segment under /ui/static/: the route serves only files it knows by name)."""
    if path in OPEN_PATHS or path in UI_SHELLS:
        return True
    name = path.removeprefix(UI_STATIC)
    return path.startswith(UI_STATIC) and bool(name) and "/" not in name and ".." not in name


class BearerAuth:
    """Every path but `/healthz` needs `Authorization: Bearer <token>` when a token is set."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.token is None or is_open(scope["path"]):
            await self.app(scope, receive, send)
            return
        header = _header(scope, b"authorization")
        if token_matches(header, self.token):
            await self.app(scope, receive, send)
            return
        challenge = ((b"www-authenticate", b'Bearer realm="mvlattice"'),)
        await send_error(send, 401, "a valid bearer token is required", challenge)


class BodyLimit:
    """Refuses bodies over `max_bytes` (413) — by Content-Length, or while reading — and hands
    the app the buffered body, so nothing downstream reads an unbounded stream."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await send_error(send, 413, self._message())
            return
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await send_error(send, 413, self._message())
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        await self.app(scope, _replay(b"".join(chunks), receive), send)

    def _message(self) -> str:
        return f"request body larger than {self.max_bytes} bytes"


def _replay(payload: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": payload, "more_body": False}
        return await receive()  # after the body: wait for the disconnect

    return replay


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return None
