"""`GET /v1/advice` computed once per query-log version, one computation at a time.

Advice explains every distinct missed query again (`advise.advisor`): 300 of them took minutes.
So a result is kept per (model, since, the Delta versions of the query logs it read, the jobs
this service finished): asked again before anything new is logged, it is answered at once. One
computation runs at a time: a request with the same arguments waits for the running one's
result; one with other arguments gets 503 with Retry-After. When every request waiting for a
computation has gone away, it is cancelled: it stops before explaining its next miss (the
miss being explained and the read of the log, a Spark job, run to their end), and its result is
not kept.

A relative `since` ('2h') is resolved when the advice is computed; the answer's `since` says
the start it used. Tiles built by another process show in the advice once a query is logged.
"""

from __future__ import annotations

import asyncio
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from mvlattice.errors import OverloadedError

KEEP = 16  # results kept (model × since × log version)
POLL = 0.25  # seconds between checks that a waiting client is still there
RETRY_AFTER = 5  # seconds, for a request that finds advice with other arguments running

Advice = list[dict[str, Any]]
Compute = Callable[[str | None, str | None, Callable[[], bool]], Advice]


class Client(Protocol):
    async def is_disconnected(self) -> bool: ...


@dataclass
class _Run:
    key: Hashable
    task: asyncio.Future[Advice]
    stop: threading.Event = field(default_factory=threading.Event)
    waiters: int = 0


class AdviceRunner:
    """Kept results and the one running computation; used from the event loop only."""

    def __init__(self, compute: Compute, versions: Callable[[str | None], Hashable]) -> None:
        self.compute, self.versions = compute, versions
        self.computed = 0  # computations started (for /metrics)
        self._kept: OrderedDict[Hashable, Advice] = OrderedDict()
        self._running: _Run | None = None
        self._jobs = 0  # jobs finished here: a build changes what the tiles answer

    @property
    def running(self) -> int:
        return 0 if self._running is None else 1

    def cancel(self) -> None:
        """Stop the running computation (the service is stopping)."""
        if self._running is not None:
            self._running.stop.set()

    def forget(self) -> None:
        """A refresh or build finished: advice computed before it may be out of date."""
        self._jobs += 1

    async def advice(self, model: str | None, since: str | None, client: Client) -> Advice | None:
        """The advice for these arguments; None when `client` went away before it was ready."""
        versions = await anyio.to_thread.run_sync(self.versions, model)
        key = (model, since, versions, self._jobs)
        if key in self._kept:
            self._kept.move_to_end(key)
            return self._kept[key]
        run = self._join(key, model, since)
        run.waiters += 1
        try:
            return await _unless_gone(client, run.task)
        finally:
            run.waiters -= 1
            if run.waiters == 0 and not run.task.done():
                run.stop.set()  # nobody waits for it any more

    def _join(self, key: Hashable, model: str | None, since: str | None) -> _Run:
        run = self._running
        if run is None:
            return self._start(key, model, since)
        if run.key != key:
            raise OverloadedError("advice for other arguments is being computed; retry later",
                                  retry_after=RETRY_AFTER)  # fmt: skip
        if run.stop.is_set():
            raise OverloadedError("advice is being cancelled; retry in a second")
        return run

    def _start(self, key: Hashable, model: str | None, since: str | None) -> _Run:
        stop = threading.Event()

        def work() -> Advice:
            return self.compute(model, since, stop.is_set)

        task = asyncio.ensure_future(anyio.to_thread.run_sync(work))
        run = self._running = _Run(key, task, stop)
        self.computed += 1
        task.add_done_callback(lambda done: self._finished(run, done))
        return run

    def _finished(self, run: _Run, task: asyncio.Future[Advice]) -> None:
        self._running = None
        if task.cancelled() or task.exception() is not None or run.stop.is_set():
            return
        self._kept[run.key] = task.result()
        while len(self._kept) > KEEP:
            self._kept.popitem(last=False)


async def _unless_gone(client: Client, task: asyncio.Future[Advice]) -> Advice | None:
    """`task`'s result (its error raised); None as soon as `client` has gone away. Waiting
    never cancels `task`: other requests may be waiting for it too."""
    while True:
        try:
            return await asyncio.wait_for(asyncio.shield(task), POLL)
        except TimeoutError:
            if await client.is_disconnected():
                return None
