"""Deadlines and cancellation for DuckDB queries: one thread watches every running query and
interrupts its cursor at its deadline or once its `cancel` event is set.

One thread for all, not one per query: starting a thread costs about as much as answering a
small query, and most queries end long before anyone would interrupt them.
"""

from __future__ import annotations

import threading
import time
from typing import Any

POLL = 0.02  # seconds between two looks at the running queries


class Watch:
    """One query's deadline; `why` says what interrupted it ("" when nothing did)."""

    def __init__(
        self,
        cursor: Any,
        timeout: float,
        cancel: threading.Event | None,  # noqa: ANN401
    ) -> None:
        self.cursor = cursor
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.cancel = cancel
        self.why = ""

    def reason(self, now: float) -> str:
        """Why the query must stop now ("" while it may go on)."""
        if self.cancel is not None and self.cancel.is_set():
            return "query cancelled: the client went away"
        if now >= self.deadline:
            return f"query cancelled after {self.timeout:g} s (the service's --query-timeout)"
        return ""


class Watchdog:
    def __init__(self) -> None:
        self._running: set[Watch] = set()
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)
        self._thread: threading.Thread | None = None

    def watch(self, cursor: Any, timeout: float, cancel: threading.Event | None) -> Watch:  # noqa: ANN401
        watch = Watch(cursor, timeout, cancel)
        with self._lock:
            self._running.add(watch)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._loop, name="mvlattice-tile-engine-watchdog", daemon=True
                )
                self._thread.start()
            self._work.notify()
        return watch

    def done(self, watch: Watch) -> None:
        """The query ended: it is interrupted no more (call before closing its cursor)."""
        with self._lock:
            self._running.discard(watch)

    def _loop(self) -> None:
        while True:
            with self._lock:
                while not self._running:
                    self._work.wait()
                now = time.monotonic()
                for watch in list(self._running):
                    why = watch.reason(now)
                    if why:
                        # Under the lock: a query that has ended (`done`) is never interrupted,
                        # so its cursor is never touched after it is closed.
                        self._running.discard(watch)
                        watch.why = why
                        watch.cursor.interrupt()
            time.sleep(POLL)
