"""Background jobs of the HTTP API (refresh a tile, materialize a lattice): ids, status, and
the conflict rule — two jobs touching the same tiles never run at once (409 instead).

Jobs run one at a time on a daemon worker thread, so a stop can abandon one safely: Delta
commits are atomic, an interrupted build leaves the previous tile version readable.
"""

from __future__ import annotations

import dataclasses
import itertools
import queue
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from mvlattice.errors import ConflictError, NotFoundError
from mvlattice.http.errors import log_bug, one_line, status_of


class JobStatus(StrEnum):
    """A job's status (the values are the HTTP API's)."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


QUEUED, RUNNING = JobStatus.QUEUED, JobStatus.RUNNING
SUCCEEDED, FAILED = JobStatus.SUCCEEDED, JobStatus.FAILED
Work = Callable[[], tuple[bool, dict[str, Any]]]  # -> (ok, result document)


@dataclass(frozen=True, slots=True)
class Scope:
    """What a job touches: a whole model, a lattice's tiles, or one tile/materialization."""

    model: str
    lattice: str | None = None
    target: str | None = None

    @property
    def wide(self) -> bool:
        return self.lattice is None and self.target is None

    def overlaps(self, other: Scope) -> bool:
        """Same model and: either is model-wide, both name the same target, or one is a
        lattice's batch and the other is that lattice (or one of its tiles)."""
        if self.model != other.model:
            return False
        if self.wide or other.wide:
            return True
        if self.target is not None and other.target is not None:
            return self.target == other.target
        return self.lattice is not None and self.lattice == other.lattice

    def describe(self) -> str:
        if self.target:
            return f"{self.target}"
        return f"lattice {self.lattice}" if self.lattice else f"model {self.model}"


@dataclass(frozen=True, slots=True)
class Job:
    id: str
    kind: str  # refresh | materialize
    scope: Scope
    status: JobStatus
    submitted_at: float
    started_at: float | None = None
    finished_at: float | None = None
    result: dict[str, Any] | None = None
    error: dict[str, str] | None = None

    @property
    def active(self) -> bool:
        return self.status in (QUEUED, RUNNING)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "model": self.scope.model,
            "lattice": self.scope.lattice,
            "target": self.scope.target,
            "status": self.status,
            "submitted_at": _iso(self.submitted_at),
            "started_at": _iso(self.started_at),
            "finished_at": _iso(self.finished_at),
            "result": self.result,
            "error": self.error,
        }


class JobRunner:
    """Accepts jobs, refuses overlapping ones, runs them in order on one worker thread."""

    def __init__(self, on_finish: Callable[[Job], None] | None = None, history: int = 200) -> None:
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()
        self._queue: queue.Queue[tuple[str, Work] | None] = queue.Queue()
        self._on_finish = on_finish or (lambda _job: None)
        self._history = history
        self._counter = itertools.count(1)
        self._worker = threading.Thread(target=self._run, name="mvlattice-jobs", daemon=True)
        self._worker.start()

    def submit(self, kind: str, scope: Scope, work: Work) -> Job:
        with self._lock:
            for other in self._jobs.values():
                if other.active and other.scope.overlaps(scope):
                    raise ConflictError(
                        f"{kind} of {scope.describe()} conflicts with job {other.id} "
                        f"({other.kind} of {other.scope.describe()}, {other.status})"
                    )
            job = Job(self._new_id(), kind, scope, QUEUED, time.time())
            self._jobs[job.id] = job
            self._trim()
        self._queue.put((job.id, work))
        return job

    def get(self, job_id: str) -> Job:
        with self._lock:
            job = self._jobs.get(job_id)
        if job is None:
            raise NotFoundError(f"no job '{job_id}' (jobs are kept while the service runs)")
        return job

    def active(self) -> tuple[Job, ...]:
        with self._lock:
            return tuple(j for j in self._jobs.values() if j.active)

    def stop(
        self, timeout: float | None = None, abandon: Callable[[], bool] = lambda: False
    ) -> bool:
        """Finish the running job (queued ones are dropped); False when it was abandoned,
        after `timeout` seconds or as soon as `abandon()` says so."""
        self._drop_queued()
        self._queue.put(None)
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._worker.is_alive():
            self._worker.join(0.2)
            late = deadline is not None and time.monotonic() > deadline
            if self._worker.is_alive() and (late or abandon()):
                return False
        return True

    # -- worker ------------------------------------------------------------------------------
    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            job_id, work = item
            if self._update(job_id, status=RUNNING, started_at=time.time()) is None:
                continue  # dropped while queued
            try:
                ok, result = work()
                job = self._update(
                    job_id, status=SUCCEEDED if ok else FAILED, result=result,
                    finished_at=time.time(),
                )  # fmt: skip
            except Exception as exc:  # noqa: BLE001 - a job's failure never stops the worker
                status, code, message = status_of(exc)
                if status == 500:
                    log_bug(exc)
                error = {"code": code, "message": message or one_line(exc)}
                job = self._update(job_id, status=FAILED, error=error, finished_at=time.time())
            if job is not None:
                self._on_finish(job)

    def _update(self, job_id: str, **changes: Any) -> Job | None:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or (job.status == FAILED and changes.get("status") == RUNNING):
                return None
            job = dataclasses.replace(job, **changes)
            self._jobs[job_id] = job
            return job

    def _drop_queued(self) -> None:
        with self._lock:
            for job_id, job in list(self._jobs.items()):
                if job.status == QUEUED:
                    error = {"code": "cancelled", "message": "the service stopped first"}
                    self._jobs[job_id] = dataclasses.replace(job, status=FAILED, error=error)

    def _trim(self) -> None:
        finished = [k for k, j in self._jobs.items() if not j.active]
        for key in finished[: max(0, len(self._jobs) - self._history)]:
            del self._jobs[key]

    def _new_id(self) -> str:
        return f"job-{next(self._counter)}-{secrets.token_hex(4)}"


def _iso(when: float | None) -> str | None:
    if when is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(when))
