"""Hit counters batched: a query only adds to a dict; the counts reach the state store (one
SQLite transaction) at most every `interval` seconds, on a thread of their own, and whenever
someone reads them (`flush`). A commit per query would cost more than the tile engine's answer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from mvlattice.jobs.state import StateStore


class HitCounter:
    def __init__(
        self, store: StateStore, interval: float = 2.0, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        self.interval = interval
        self.clock = clock
        self._pending: dict[str, tuple[int, float]] = {}
        self._lock = threading.Lock()
        self._flush_lock = threading.Lock()  # one writer at a time, in order
        self._last_flush = time.monotonic()

    def add(self, target: str) -> None:
        when = self.clock()
        with self._lock:
            count, last = self._pending.get(target, (0, when))
            self._pending[target] = (count + 1, max(last, when))
            due = time.monotonic() - self._last_flush >= self.interval
            if due:
                self._last_flush = time.monotonic()
        if due:
            threading.Thread(target=self.flush, name="mvlattice-hits", daemon=True).start()

    def flush(self) -> None:
        """Write every pending hit now (a failure keeps them for the next flush)."""
        with self._flush_lock:
            with self._lock:
                pending, self._pending = self._pending, {}
            try:
                self.store.record_hits(pending)
            except Exception:
                with self._lock:
                    for target, (count, when) in pending.items():
                        now_count, now_when = self._pending.get(target, (0, when))
                        self._pending[target] = (now_count + count, max(now_when, when))
                raise
