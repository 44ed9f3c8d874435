"""What one client connection may hold: a deadline for a request's headers and one for its
body, a cap on open connections below the process's file limit, and that limit raised to its
hard limit at start.

Without them a client that opens connections and sends its headers a byte at a time
(slowloris) holds a file descriptor per connection as long as it likes: ~20,000 such requests
exhausted the process's descriptors, and /healthz and queries failed until they closed.

This is uvicorn's httptools protocol with timers: the header deadline runs from the connection
(or from the end of the previous response on a kept-alive connection) to the end of the
headers, however slowly bytes trickle in; the body deadline from the end of the headers to the
end of the body. At the cap, a new connection closes the oldest one that has no request in
progress (half-sent headers, or idle between requests) — the kind a slowloris holds, never one
being answered — and is closed itself when there is none. A client that sends a whole request
at once is never the oldest for long, so it gets in while half-sent connections keep coming.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

# Connections may use at most this share of the file limit: the rest is for Delta and Parquet
# files, DuckDB, the Spark gateway's sockets and the query log.
CONNECTION_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    header_timeout: float = 10.0  # seconds from a request's first byte to the end of its headers
    body_timeout: float = 30.0  # seconds from the end of the headers to the end of the body
    max_connections: int = 1024  # open at once (lowered to a share of the file limit)


@dataclass
class ConnectionGuard:
    """The limits in force and what they did, shared by the connections of one server."""

    limits: ConnectionLimits
    cap: int  # max_connections, lowered to a share of the file limit
    open: int = 0
    shed: int = 0  # connections closed at the cap
    header_timeouts: int = 0
    body_timeouts: int = 0
    # connections without a request in progress, oldest first (a dict keeps insertion order)
    idle: dict[GuardedProtocol, None] = field(default_factory=dict)

    def gauges(self) -> dict[str, Any]:
        """For `/metrics`."""
        return {
            "mvlattice_connections_open": lambda: self.open,
            "mvlattice_connections_limit": lambda: self.cap,
            "mvlattice_connections_shed_total": lambda: self.shed,
            "mvlattice_connections_header_timeouts_total": lambda: self.header_timeouts,
            "mvlattice_connections_body_timeouts_total": lambda: self.body_timeouts,
        }


def connection_guard(limits: ConnectionLimits, file_limit: int | None) -> ConnectionGuard:
    cap = limits.max_connections
    if file_limit is not None:
        cap = max(1, min(cap, int(file_limit * CONNECTION_SHARE)))
    return ConnectionGuard(limits, cap)


def raise_file_limit() -> int | None:
    """Raise the soft limit on open files to the hard limit where the system allows; the soft
    limit then in force (None when unlimited or unknown)."""
    if sys.platform == "win32":
        return None
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    # An unlimited hard limit is not a value setrlimit takes for the soft one (Linux caps it at
    # fs.nr_open, macOS at OPEN_MAX): try large finite values instead.
    wanted = [hard] if hard != resource.RLIM_INFINITY else [1 << 20, 10240]
    for value in wanted:
        if soft != resource.RLIM_INFINITY and soft >= value:
            break
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (value, hard))
        except (ValueError, OSError):
            continue
        soft = value
        break
    return None if soft == resource.RLIM_INFINITY else int(soft)


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the header and body deadlines and the cap; `guard`
    is set on the subclass `guarded_protocol` makes for one server."""

    guard: ConnectionGuard

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._timer: asyncio.TimerHandle | None = None
        super().connection_made(transport)
        guard = self.guard
        guard.open += 1
        if len(self.connections) > guard.cap and not self._shed_oldest():
            guard.shed += 1
            transport.close()
            return
        self._await_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.guard.idle.pop(self, None)
        self.guard.open -= 1
        super().connection_lost(exc)

    # A request's headers end, its body ends, its response ends: the connection then waits
    # for the next request's headers (uvicorn closes it sooner if nothing comes: keep-alive).
    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self.guard.idle.pop(self, None)
        self._arm(self.guard.limits.body_timeout, self._body_late)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._disarm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.cycle.response_complete and not self.pipeline:
            self._await_headers()

    def _await_headers(self) -> None:
        self.guard.idle.pop(self, None)
        self.guard.idle[self] = None
        self._arm(self.guard.limits.header_timeout, self._headers_late)

    def _shed_oldest(self) -> bool:
        """Close the oldest connection without a request in progress; False when none."""
        oldest = next(iter(self.guard.idle), None)
        if oldest is None:
            return False
        self.guard.shed += 1
        oldest._close()
        return True

    def _headers_late(self) -> None:
        self.guard.header_timeouts += 1
        limit = self.guard.limits.header_timeout
        self.transport.write(_timeout_response(f"request headers not received within {limit:g} s"))
        self._close()

    def _body_late(self) -> None:
        # The app may be reading the body: closing ends its wait (`http.disconnect`).
        self.guard.body_timeouts += 1
        self._close()

    def _close(self) -> None:
        self._disarm()
        self.guard.idle.pop(self, None)
        if not self.transport.is_closing():
            self.transport.close()

    def _arm(self, seconds: float, then: Callable[[], None]) -> None:
        self._disarm()
        self._timer = self.loop.call_later(seconds, then)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def guarded_protocol(guard: ConnectionGuard) -> type[HttpToolsProtocol]:
    """The protocol class for `uvicorn.Config(http=…)`, bound to one server's guard."""
    return type("GuardedHttpToolsProtocol", (GuardedProtocol,), {"guard": guard})


def _timeout_response(message: str) -> bytes:
    body = json.dumps({"error": {"code": "timeout", "message": message}}).encode()
    head = (
        "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body
