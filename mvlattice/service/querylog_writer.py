"""Appending the query log in batches on a background thread, off the request path."""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from typing import TYPE_CHECKING

from mvlattice.service import querylog
from mvlattice.service.querylog import Request, to_record

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger("mvlattice.service")


class QueryLogWriter:
    """Buffers requests and appends them in batches on a daemon thread: when `batch` are
    waiting or the oldest has waited `interval` seconds, and on `close`. When appends fail the
    records wait for the next try; past `max_pending` the oldest are dropped (and counted)."""

    def __init__(
        self,
        spark: SparkSession,
        warehouse: str,
        *,
        batch: int = 500,
        interval: float = 2.0,
        max_pending: int = 100_000,
    ) -> None:
        self.spark, self.warehouse = spark, warehouse
        self.batch, self.interval = batch, interval
        self._pending: deque[Request] = deque(maxlen=max_pending)
        self._wake = threading.Condition()
        self._closing = False
        self.written = self.dropped = self.failures = 0
        self._thread = threading.Thread(target=self._run, name="mvlattice-querylog", daemon=True)

    def start(self) -> QueryLogWriter:
        self._thread.start()
        return self

    def record(self, request: Request) -> None:
        with self._wake:
            if len(self._pending) == self._pending.maxlen:
                self.dropped += 1
            self._pending.append(request)
            if len(self._pending) >= self.batch:
                self._wake.notify()

    @property
    def pending(self) -> int:
        return len(self._pending)

    def close(self, timeout: float = 60.0) -> None:
        """Write what is waiting, then stop."""
        with self._wake:
            self._closing = True
            self._wake.notify()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._wake:
                if not self._closing:
                    self._wake.wait_for(self._due, timeout=self.interval)
                closing = self._closing
                taken = self._take()
            ok = self._write(taken, keep=not closing) if taken else True
            if closing and (not ok or not self._pending):
                return  # at shutdown a failing table is not retried forever

    def _due(self) -> bool:
        return self._closing or len(self._pending) >= self.batch

    def _take(self) -> list[Request]:
        count = min(len(self._pending), 10 * self.batch)
        return [self._pending.popleft() for _ in range(count)]

    def _write(self, requests: list[Request], *, keep: bool) -> bool:
        try:
            self.written += querylog.append(
                self.spark, self.warehouse, [to_record(r) for r in requests]
            )
            return True
        except Exception as exc:  # noqa: BLE001 - the log must never take the service down
            self.failures += 1
            log.warning("query log: append of %d records failed: %s", len(requests), exc)
            if keep:
                with self._wake:
                    self._pending.extendleft(reversed(requests))
                time.sleep(min(30.0, self.interval * 2 ** min(self.failures, 5)))
            return False
