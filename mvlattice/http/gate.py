"""Admission for queries: a few run at once on threads of their own, a bounded number wait, and
beyond that a request is turned away at once (503 with Retry-After) — so a burst of slow queries
never takes the threads that answer `/healthz`, the catalog and the status page."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import anyio

from mvlattice.errors import OverloadedError

T = TypeVar("T")


class QueryGate:
    def __init__(self, running: int, waiting: int) -> None:
        self.running, self.waiting = max(1, running), max(0, waiting)
        self._limiter: anyio.CapacityLimiter | None = None  # made inside the event loop
        self._threads: anyio.CapacityLimiter | None = None
        self.queued = 0

    @property
    def active(self) -> int:
        return int(self._limiter.borrowed_tokens) if self._limiter is not None else 0

    @property
    def saturated(self) -> bool:
        return self.active >= self.running and self.queued >= self.waiting

    def state(self) -> dict[str, Any]:
        return {"running": self.active, "waiting": self.queued, "max_running": self.running,
                "max_waiting": self.waiting, "saturated": self.saturated}  # fmt: skip

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        limiter = self._limiter_here()
        if self.saturated:
            raise OverloadedError(
                f"too many queries: {self.active} running and {self.queued} waiting; retry shortly",
                retry_after=1,
            )
        self.queued += 1
        try:
            await limiter.acquire()
        finally:
            self.queued -= 1
        try:
            yield
        finally:
            limiter.release()

    async def run(self, work: Callable[[], T]) -> T:
        """`work` on one of the gate's own threads (call inside `slot()`)."""
        if self._threads is None:
            self._threads = anyio.CapacityLimiter(self.running)
        return await anyio.to_thread.run_sync(work, limiter=self._threads)

    def _limiter_here(self) -> anyio.CapacityLimiter:
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.running)
        return self._limiter
