"""Admission for queries: a few run at once on threads of their own, a bounded number wait, and
beyond that a request is turned away at once (503 with Retry-After) — so a burst of slow queries
never takes the threads that answer `/healthz`, the catalog and the status page.

Every query has one deadline, from the moment it arrived: waiting for a slot, analysis,
optimization and the run all count against it. At the deadline the client gets 408 and the
query's cancel event is set (its Spark jobs stop). Work that cannot be interrupted (the JVM's
analyzer and optimizer run on the request's thread, not as a job) keeps its slot until it really
ends, and `/healthz` counts it as overrunning: the gate never admits more work than it has
slots, whatever the clients were told.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from mvlattice.errors import OverloadedError, QueryTimeoutError

T = TypeVar("T")

# How often a waiting query looks at its cancel event (set when its client goes away).
POLL_SECONDS = 0.1


class QueryGate:
    def __init__(self, running: int, waiting: int) -> None:
        self.running, self.waiting = max(1, running), max(0, waiting)
        self.active = 0  # slots taken, by answered and abandoned work alike
        self.queued = 0
        self.overrunning = 0  # work still running after its client was answered 408
        self._waiters: deque[asyncio.Future[None]] = deque()  # in order of arrival

    @property
    def saturated(self) -> bool:
        return self.active >= self.running and self.queued >= self.waiting

    def state(self) -> dict[str, Any]:
        return {"running": self.active, "waiting": self.queued, "max_running": self.running,
                "max_waiting": self.waiting, "saturated": self.saturated,
                "overrunning": self.overrunning}  # fmt: skip

    async def run(
        self, work: Callable[[], T], deadline: float, cancel: threading.Event, what: str
    ) -> T:
        """`work()` on a thread of its own once a slot is free, answered by `deadline`
        (`time.monotonic()`): QueryTimeoutError at the deadline or once `cancel` is set,
        OverloadedError at once when every slot and waiting place is taken. `what` says which
        limit the deadline is (for the message)."""
        await self._acquire(deadline, cancel, what)
        loop = asyncio.get_running_loop()
        done: asyncio.Future[T] = loop.create_future()
        thread = threading.Thread(
            target=self._work, args=(work, loop, done), name="mvlattice-query", daemon=True
        )
        thread.start()
        try:
            return await self._answer(done, deadline, cancel, what)
        except QueryTimeoutError:
            cancel.set()
            if not done.done():
                self.overrunning += 1
                done.add_done_callback(self._overrun_ended)
            raise

    async def _acquire(self, deadline: float, cancel: threading.Event, what: str) -> None:
        """A slot, first come first served: a query that arrives while others wait queues
        behind them (a freed slot passes straight to the longest waiting, so no newcomer
        overtakes it and no waiter starves until its deadline)."""
        if self.active < self.running and not self._waiters:
            self.active += 1
            return
        if self.saturated:
            raise OverloadedError(
                f"too many queries: {self.active} running and {self.queued} waiting; retry shortly",
                retry_after=1,
            )
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(turn)
        self.queued += 1
        try:
            while not turn.done():
                _check_deadline(deadline, cancel, what, waiting=True)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(turn), timeout=POLL_SECONDS)
        except BaseException:
            if turn.done():
                self._release()  # handed a slot, but leaving: it goes to the next in line
            else:
                turn.cancel()
                self._waiters.remove(turn)
            raise
        finally:
            self.queued -= 1

    def _work(
        self, work: Callable[[], T], loop: asyncio.AbstractEventLoop, done: asyncio.Future[T]
    ) -> None:
        try:
            result = work()
        except BaseException as exc:  # noqa: BLE001 - handed to the request that awaits it
            _call_in(loop, _settle, done, None, exc)
        else:
            _call_in(loop, _settle, done, result, None)
        finally:
            _call_in(loop, self._release)

    def _release(self) -> None:
        """A slot freed (on the event loop): the longest waiting query takes it over."""
        while self._waiters:
            turn = self._waiters.popleft()
            if not turn.done():
                turn.set_result(None)
                return
        self.active -= 1

    def _overrun_ended(self, done: asyncio.Future[Any]) -> None:
        self.overrunning -= 1
        if not done.cancelled():
            done.exception()  # seen: its client had a 408 already

    async def _answer(
        self, done: asyncio.Future[T], deadline: float, cancel: threading.Event, what: str
    ) -> T:
        while True:
            if done.done():  # work that ended sets `cancel` itself (it also means "done")
                if time.monotonic() >= deadline:
                    raise QueryTimeoutError(f"query cancelled after {what}")
                return done.result()
            _check_deadline(deadline, cancel, what, waiting=False)
            try:
                return await asyncio.wait_for(asyncio.shield(done), timeout=POLL_SECONDS)
            except TimeoutError:
                continue


def _check_deadline(deadline: float, cancel: threading.Event, what: str, *, waiting: bool) -> None:
    if cancel.is_set():
        raise QueryTimeoutError("query cancelled: the client went away")
    if time.monotonic() >= deadline:
        where = " while waiting for a query slot" if waiting else ""
        raise QueryTimeoutError(f"query cancelled{where} after {what}")


def _call_in(loop: asyncio.AbstractEventLoop, action: Callable[..., None], *args: Any) -> None:
    """`action(*args)` on the loop, unless the loop is gone (a stopped server: nobody waits)."""
    with contextlib.suppress(RuntimeError):  # "Event loop is closed"
        loop.call_soon_threadsafe(action, *args)


def _settle(done: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if done.done():
        return
    if error is not None:
        done.set_exception(error)
    else:
        done.set_result(result)
