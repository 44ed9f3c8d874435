"""Appending the query log in batches on a background thread, off the request path.

Failures are per record, and nothing is retried forever: a request that cannot become a record
(`querylog.to_record` refuses malformed fields) is set aside alone; a batch the table refuses is
split in halves, so a record Spark will not store cannot sink the others (`append_isolating`);
a batch that fails whole (the store is down) is retried `attempts` times with backoff, then set
aside. Set-aside records are counted (`rejected`) and the last few kept for inspection
(`set_aside`). The same thread applies the retention (`querylog_retention.prune`) at start,
every `prune_every` seconds and every `PRUNE_APPENDS` appends, never during an append.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mvlattice.errors import first_line
from mvlattice.querylog import log as querylog
from mvlattice.querylog import retention as querylog_retention
from mvlattice.querylog.log import Literals, LogRecord, Request, to_record

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger("mvlattice.service")

PRUNE_APPENDS = 200  # a pruning (compaction) after this many appends, whatever the clock says
VACUUM_EVERY = 86_400.0  # seconds: a vacuum lists every file of the table, prunings need not
KEEP_SET_ASIDE = 100  # set-aside records kept in memory for inspection
Append = Callable[[Sequence[LogRecord]], int]


@dataclass(frozen=True, slots=True)
class LogOptions:
    """What `mvlattice serve` lets an operator choose about the query log."""

    retention: float | None = 30 * 86_400.0  # seconds a record is kept; None: forever
    literals: Literals = "keep"  # keep | blank (see `querylog.to_record`)
    prune_every: float | None = 6 * 3600.0  # seconds between prunings; None: never prune


@dataclass(frozen=True, slots=True)
class SetAside:
    """A request the log could not store, and why."""

    at: float  # when it was set aside (seconds since the epoch)
    sql: str  # its first 200 characters
    reason: str


@dataclass(frozen=True, slots=True)
class Isolated:
    """The outcome of `append_isolating`."""

    written: int
    unwritten: tuple[LogRecord, ...]
    failed_appends: int
    error: str | None  # the last append error


def append_isolating(append: Append, records: Sequence[LogRecord], *, budget: int) -> Isolated:
    """Append `records`; when the table refuses them, append halves, level by level, until the
    refused records stand alone. At most `budget` failed appends; and when the batch, its halves
    and their halves (seven appends) all failed, the table itself is failing, not a record: stop."""
    written = failed = 0
    error: str | None = None
    level: list[Sequence[LogRecord]] = [records]
    unwritten: list[LogRecord] = []
    for depth in range(64):
        refused: list[Sequence[LogRecord]] = []
        for chunk in level:
            if failed >= budget:
                refused.append(chunk)
                continue
            try:
                written += append(chunk)
            except Exception as exc:  # noqa: BLE001 - any refusal: isolate it
                failed, error = failed + 1, f"{type(exc).__name__}: {first_line(exc)[:300]}"
                refused.append(chunk)
        singles = [c for c in refused if len(c) == 1]
        unwritten.extend(r for c in singles for r in c)
        level = [half for c in refused if len(c) > 1 for half in _halves(c)]
        if not level or failed >= budget or (depth >= 2 and not written):
            unwritten.extend(r for c in level for r in c)
            break
    return Isolated(written, tuple(unwritten), failed, error)


def isolation_budget(count: int) -> int:
    """Failed appends allowed to isolate a few bad records among `count` (~4 per record)."""
    return 8 + 4 * math.ceil(math.log2(max(count, 2)))


class QueryLogWriter:
    """Buffers requests and appends them in batches on a daemon thread: when `batch` are
    waiting or the oldest has waited `interval` seconds, and on `close`. Past `max_pending`
    waiting the oldest are dropped (`dropped`); records that cannot be stored are set aside
    (`rejected`); `failures` counts failed appends."""

    def __init__(
        self,
        spark: SparkSession,
        warehouse: str,
        *,
        batch: int = 500,
        interval: float = 2.0,
        max_pending: int = 100_000,
        attempts: int = 4,
        options: LogOptions = LogOptions(),  # frozen, so one shared default is safe
    ) -> None:
        self.spark, self.warehouse = spark, warehouse
        self.batch, self.interval, self.attempts = batch, interval, max(1, attempts)
        self.options = options
        self._pending: deque[Request] = deque(maxlen=max_pending)
        self._wake = threading.Condition()
        self._closing = False
        self.written = self.dropped = self.failures = self.rejected = self.pruned = 0
        self.set_aside: deque[SetAside] = deque(maxlen=KEEP_SET_ASIDE)
        self._next_prune = self._next_vacuum = time.monotonic()  # at start
        self._appends = 0
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
        """Write what is waiting (one attempt per batch), then stop."""
        with self._wake:
            self._closing = True
            self._wake.notify()
        if self._thread.is_alive():
            self._thread.join(timeout)

    # -- the thread ------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._wake:
                if not self._closing:
                    self._wake.wait_for(self._due, timeout=self.interval)
                closing = self._closing
                taken = self._take()
            if taken:
                self._deliver(self._prepare(taken), closing=closing)
            if not closing and self._prune_due():
                self._prune()
            if closing and not self._pending:
                return

    def _due(self) -> bool:
        return self._closing or len(self._pending) >= self.batch

    def _take(self) -> list[Request]:
        count = min(len(self._pending), 10 * self.batch)
        return [self._pending.popleft() for _ in range(count)]

    def _prepare(self, requests: list[Request]) -> list[LogRecord]:
        records = []
        for request in requests:
            try:
                records.append(to_record(request, self.options.literals))
            except Exception as exc:  # noqa: BLE001 - one malformed request, not the batch
                self._set_aside([request], f"{type(exc).__name__}: {first_line(exc)[:300]}")
        return records

    def _deliver(self, records: list[LogRecord], *, closing: bool) -> None:
        """Append with isolation first, then plain retries after pauses; never forever."""
        if not records:
            return  # every request of the batch was set aside already
        for attempt in range(1 if closing else self.attempts):
            if attempt and not self._pause(min(30.0, self.interval * 2**attempt)):
                break  # closing: no more retries
            budget = isolation_budget(len(records)) if attempt == 0 else 1
            result = append_isolating(self._append, records, budget=budget)
            self.written += result.written
            self.failures += result.failed_appends
            if not result.unwritten:
                return
            records = list(result.unwritten)
            if result.written:  # the table took the others: these are refused for themselves
                self._set_aside(records, result.error or "refused")
                return
            log.warning("query log: append of %d records failed: %s", len(records), result.error)
        self._set_aside(records, "the query-log table kept failing; batch set aside")

    def _append(self, records: Sequence[LogRecord]) -> int:
        written = querylog.append(self.spark, self.warehouse, records)
        self._appends += 1
        return written

    def _pause(self, seconds: float) -> bool:
        """Wait `seconds` unless closing; False when closing."""
        with self._wake:
            return not self._wake.wait_for(lambda: self._closing, timeout=seconds)

    def _set_aside(self, items: Sequence[Request | LogRecord], reason: str) -> None:
        self.rejected += len(items)
        now = time.time()
        self.set_aside.extend(
            SetAside(now, str(getattr(i, "sql", ""))[:200], reason) for i in items
        )
        log.warning("query log: %d record(s) set aside: %s", len(items), reason)

    # -- retention -------------------------------------------------------------------------
    def _prune_due(self) -> bool:
        if self.options.prune_every is None:
            return False
        return self._appends >= PRUNE_APPENDS or time.monotonic() >= self._next_prune

    def _prune(self) -> None:
        self._appends = 0
        now = time.monotonic()
        self._next_prune = now + (self.options.prune_every or 0.0)
        vacuum = now >= self._next_vacuum
        try:
            done = querylog_retention.prune(
                self.spark, self.warehouse, self.options.retention, vacuum=vacuum
            )
            if vacuum and (done.deleted or done.files_after != done.files_before):
                self._next_vacuum = now + VACUUM_EVERY
        except Exception as exc:  # noqa: BLE001 - retention must never stop the log
            log.warning("query log: pruning failed: %s", first_line(exc)[:300])
            return
        self.pruned += done.deleted
        if done.deleted or done.files_after != done.files_before:
            log.info("query log: %s", done.describe())


def _halves(chunk: Sequence[LogRecord]) -> tuple[Sequence[LogRecord], Sequence[LogRecord]]:
    middle = len(chunk) // 2
    return chunk[:middle], chunk[middle:]
