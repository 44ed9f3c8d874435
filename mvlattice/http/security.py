"""What the service lets in: loopback unless a token is set, bearer tokens compared in constant
time, requests addressed to this service by name (DNS rebinding) from no foreign origin, POSTs
that a cross-site form cannot send, a bound on request bodies, and only queries (`SELECT` /
`WITH`) as SQL — which the sandbox (`mvlattice.sandbox`) then checks on Spark's analyzed plan.

The middlewares are plain ASGI so that they run before FastAPI reads or parses anything.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlglot import exp
from sqlglot.errors import SqlglotError

from mvlattice.errors import SqlError, UsageError, first_line
from mvlattice.http.errors import body_bytes, http_status
from mvlattice.sql.parse import parse_statements

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

OPEN_PATHS = frozenset({"/healthz"})  # liveness probes need no token
# The status page's shells and static files hold no data (the page fetches everything else with
# the token the user gives it), so a browser can load them without an Authorization header.
UI_SHELLS = frozenset({"/", "/ui", "/ui/", "/ui/lattices", "/ui/tiles", "/ui/queries",
                       "/ui/playground", "/ui/advice"})  # fmt: skip
UI_STATIC = "/ui/static/"
MIN_TOKEN_LENGTH = 16
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "localhost.localdomain"})
# Deeper than this is not a query a person or a tool writes; parsers recurse on it.
MAX_NESTING = 128
# A POST without a JSON body proves it is no cross-site form when it carries this header.
REQUEST_HEADER = b"x-mvlattice-request"


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


def check_binding(host: str, token: str | None, tls: bool = False) -> None:
    """Anything but loopback is reachable by others: it needs a token, and TLS so the token and
    the data do not cross the network in clear (or bind to loopback behind a reverse proxy)."""
    if is_loopback(host):
        return
    if token is None:
        raise UsageError(
            f"binding to {host} exposes the service beyond this machine; give --token-file "
            "(a file holding a bearer token) or bind to 127.0.0.1"
        )
    if not tls:
        raise UsageError(
            f"binding to {host} needs --tls-cert and --tls-key (HTTPS), or bind to 127.0.0.1 "
            "behind a reverse proxy that terminates TLS"
        )


def check_tls(cert: str | None, key: str | None) -> tuple[str, str] | None:
    """Both TLS files or neither; each must be readable."""
    if cert is None and key is None:
        return None
    if cert is None or key is None:
        raise UsageError("--tls-cert and --tls-key go together")
    for path in (cert, key):
        try:
            Path(path).read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    return cert, key


def token_matches(header: str | None, token: str) -> bool:
    scheme, _, given = (header or "").partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode("utf-8"), token.encode("utf-8"))


# -- SQL -----------------------------------------------------------------------------------------
def check_query(sql: str) -> exp.Query | None:
    """Only one statement, and a query: SELECT, WITH … SELECT, or set operations of those.
    Returns the parsed tree, for the serving pipeline to use rather than parse again; None for
    a text accepted before (remembered, not its tree: the rewriter qualifies trees in place
    and keeps its own per text)."""
    check_nesting(sql)
    if len(sql) > MAX_CACHED_SQL:
        return _check(sql)
    with _ACCEPTED_LOCK:
        if sql in _ACCEPTED:
            _ACCEPTED.move_to_end(sql)
            return None
    tree = _check(sql)
    with _ACCEPTED_LOCK:  # refusals raised above and are not remembered
        _ACCEPTED[sql] = None
        while len(_ACCEPTED) > ACCEPTED_KEPT:
            _ACCEPTED.popitem(last=False)
    return tree


MAX_CACHED_SQL = 20_000
ACCEPTED_KEPT = 4096
_ACCEPTED: OrderedDict[str, None] = OrderedDict()
_ACCEPTED_LOCK = threading.Lock()


def check_nesting(sql: str) -> None:
    """Refuse brackets nested deeper than MAX_NESTING before any parser recurses on them
    (quoted text and comments are skipped, so a string full of brackets is fine)."""
    depth = deepest = 0
    code = _code_chars(sql)
    for char in code:
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth = max(0, depth - 1)
    deepest = max(deepest, _type_nesting(code))
    if deepest > MAX_NESTING:
        raise SqlError(f"the query nests brackets {deepest} levels deep; the limit is "
                       f"{MAX_NESTING}")  # fmt: skip


_TYPE_BRACKET = re.compile(r"(?i)\b(?:array|map|struct)\s*<|>")


def _type_nesting(code: str) -> int:
    """How deep `array<map<…>>` types nest (Spark's parser recurses on each level)."""
    depth = deepest = 0
    for match in _TYPE_BRACKET.finditer(code):
        if match.group() == ">":
            depth = max(0, depth - 1)
        else:
            depth += 1
            deepest = max(deepest, depth)
    return deepest


def _code_chars(sql: str) -> str:
    """`sql` without quoted strings, quoted names and comments."""
    out, i, n = [], 0, len(sql)
    while i < n:
        c = sql[i]
        if c in "'\"`":
            i = _skip_quoted(sql, i, c)
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _skip_quoted(sql: str, start: int, quote: str) -> int:
    i = start + 1
    while i < len(sql):
        if sql[i] == "\\" and quote != "`":
            i += 2
        elif sql[i] == quote:
            return i + 1
        else:
            i += 1
    return i


def _check(sql: str) -> exp.Query:
    try:
        trees = parse_statements(sql)
    except SqlglotError as exc:
        raise SqlError(f"SQL does not parse: {first_line(exc)}") from None
    except (RecursionError, AttributeError, TypeError, ValueError, IndexError, KeyError) as exc:
        raise SqlError(f"SQL does not parse: {first_line(exc)}") from None
    if len(trees) != 1:
        raise SqlError(f"expected one SQL statement, got {len(trees)}")
    tree = trees[0]
    if not isinstance(tree, exp.Query):
        raise SqlError(f"only queries (SELECT or WITH) are accepted, not {tree.key.upper()}")
    return tree


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


def host_name(value: str) -> str:
    """The host of a configured name (--allowed-host, the bind address), lower-case, without
    port. Request headers go through `authority`, which refuses what is not host[:port]."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


# A host name as DNS has it (letters, digits, '-', '_' for service names), which covers dotted
# IPv4 addresses too; nothing else a URL's authority allows (userinfo '@', '%', '~', '!', …).
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?"
_REG_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*\.?")
_PORT = re.compile(r"[0-9]{1,5}")
DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class Authority:
    host: str  # lower-case; an IPv6 address without its brackets
    port: int | None


def authority(value: str) -> Authority | None:
    """A Host header's (or an origin's) host[:port]: a name, an IPv4 or a [bracketed] IPv6
    address, and digits for the port. None for anything else — `localhost:80@evil.com`, paths,
    spaces, zone ids, an empty or out-of-range port."""
    text = value.lower()
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or "%" in host or not _is_ipv6(host):
            return None
    else:
        host, colon, port_text = text.partition(":")
        rest = colon + port_text
        if not _REG_NAME.fullmatch(host):
            return None
    if not rest:
        return Authority(host, None)
    port = rest[1:]
    if rest[0] != ":" or not _PORT.fullmatch(port) or int(port) > 65535:
        return None
    return Authority(host, int(port))


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def same_origin(origin: str, scheme: str, addressed: Authority | None) -> bool:
    """Whether an Origin header names the service as this request addresses it: the same
    scheme, host and port (80 and 443 when not given) — a page on another port or served over
    another scheme is another origin, however its host is spelled."""
    origin_scheme, sep, rest = origin.strip().lower().partition("://")
    found = authority(rest) if sep else None
    if found is None or addressed is None or origin_scheme not in DEFAULT_PORTS:
        return False
    default = DEFAULT_PORTS.get(scheme)
    ours = (scheme, addressed.host, addressed.port or default)
    return (origin_scheme, found.host, found.port or DEFAULT_PORTS[origin_scheme]) == ours


def allowed_hosts(extra: tuple[str, ...], bind: str | None = None) -> frozenset[str]:
    """Loopback names, the names given with --allowed-host, and a specific bind address."""
    names = set(LOOPBACK_NAMES) | {host_name(h) for h in extra}
    if bind and bind not in ("0.0.0.0", "::", ""):
        names.add(host_name(bind))
    return frozenset(names)


class SameOrigin:
    """Refuses requests whose `Host` is not host[:port] (400) or not a name of this service
    (421: DNS rebinding), from an `Origin` other than the service as addressed (scheme, host
    and port) or a cross-site fetch, and POSTs that a cross-site form could send (not JSON and
    without the X-Mvlattice-Request header) — token or not. `/healthz` is exempt from the name
    check, so probes that address the service by IP work."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str]) -> None:
        self.app, self.hosts = app, hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        problem = self._problem(scope)
        if problem is None:
            await self.app(scope, receive, send)
        else:
            await send_error(send, problem[0], problem[1])

    def _problem(self, scope: Scope) -> tuple[int, str] | None:
        addressed, problem = self._addressed(scope)
        if problem is not None:
            return problem
        origin = _header(scope, b"origin")
        if origin is not None and not same_origin(origin, scope.get("scheme", "http"), addressed):
            return 403, f"cross-origin request from '{origin[:100]}' refused"
        if (_header(scope, b"sec-fetch-site") or "").lower() == "cross-site":
            return 403, "cross-site request refused"
        if scope["method"] not in ("GET", "HEAD", "OPTIONS") and not _json_or_marked(scope):
            return 415, ("requests other than GET need a JSON body (Content-Type: "
                         "application/json) or the X-Mvlattice-Request header")  # fmt: skip
        return None

    def _addressed(self, scope: Scope) -> tuple[Authority | None, tuple[int, str] | None]:
        """The Host header's authority, or why the request is refused for it."""
        hosts = [v for k, v in scope.get("headers", ()) if k.lower() == b"host"]
        addressed = authority(hosts[0].decode("latin-1")) if len(hosts) == 1 else None
        if hosts and addressed is None:
            return None, (400, BAD_HOST)
        known = addressed is not None and addressed.host in self.hosts
        if scope["path"] not in OPEN_PATHS and not known:
            name = addressed.host if addressed else ""
            return None, (421, f"this service does not answer to host '{name}'; start it "
                               "with --allowed-host NAME to allow that name")  # fmt: skip
        return addressed, None


BAD_HOST = "the Host header must be one host[:port] (a name, an IPv4 or [IPv6] address)"


def _json_or_marked(scope: Scope) -> bool:
    if _header(scope, REQUEST_HEADER) is not None:
        return True
    kind = (_header(scope, b"content-type") or "").split(";", 1)[0].strip().lower()
    return kind == "application/json"


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
