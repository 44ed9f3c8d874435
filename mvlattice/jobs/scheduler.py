"""Scheduled refresh with APScheduler 3 — the ONLY module that imports it.

- one cron job per lattice / materialization with `refresh: {cron: …}`;
- jobs persist in SQLite through SQLAlchemy (`<warehouse>/_mvlattice/scheduler.sqlite`), so a
  restart keeps them — and a run missed while the process was down still happens once on
  start (coalesced) when within the grace time;
- never two runs of one target at once (`max_instances=1`, plus a per-target lock shared by a
  job and its retries);
- a failed run is retried with exponential backoff (one-off jobs, persisted too);
- every outcome is recorded in the catalog's state store; nothing a run raises stops the
  scheduler;
- one process per warehouse runs its schedulers (they share the job store): the first takes
  the warehouse's `scheduler` lease (see `lease`) and keeps it while any of its schedulers
  runs; a scheduler started in another process stays stopped and says who holds it. Two
  builders of one target never overlap either way: each build holds the target's lease.

The refresh itself is a `Runner(kind, name) -> (ok, summary)` given by the caller, so the
scheduling logic knows nothing of Spark; `for_model` wires the real refresh in.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.combining import OrTrigger
from apscheduler.triggers.cron import CronTrigger

from mvlattice.errors import ConflictError
from mvlattice.jobs.cron import ScheduledTarget, cron_fields
from mvlattice.jobs.lease import Holder, Lease, LeaseHeld, Leases
from mvlattice.jobs.state import Outcome, StateStore

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from mvlattice.model.loader import Model

Runner = Callable[[str, str], tuple[bool, str]]  # (kind, name) -> (ok, summary)
Say = Callable[[str], None]

_RUNNING: dict[str, Scheduler] = {}  # scheduler key -> the scheduler running in this process
_REGISTRY_LOCK = threading.Lock()
# lease directory -> [the warehouse's scheduler lease, how many schedulers here rely on it]
_WAREHOUSE_LEASES: dict[str, list] = {}
SCHEDULER_LEASE = "scheduler"


@dataclass(frozen=True, slots=True)
class ScheduledJob:
    id: str
    kind: str
    name: str
    cron: str
    next_run: dt.datetime | None
    retry: bool = False


def scheduler_key(model_file: str, warehouse: str) -> str:
    return hashlib.sha1(f"{Path(model_file).resolve()}|{warehouse}".encode()).hexdigest()[:10]


def trigger_for(cron: str, timezone: object = None) -> CronTrigger | OrTrigger:
    """The model's crontab line as an APScheduler trigger (see `cron.cron_fields`)."""
    fields = cron_fields(cron)
    triggers = [CronTrigger(timezone=timezone, **f) for f in fields]
    return triggers[0] if len(triggers) == 1 else OrTrigger(triggers)


class Scheduler:
    """Refreshes a model's targets on their cron schedules (background threads)."""

    def __init__(
        self,
        key: str,
        targets: tuple[ScheduledTarget, ...],
        runner: Runner,
        store_path: str | Path,
        *,
        state: StateStore | None = None,
        grace_seconds: float = 3600.0,
        retries: int = 3,
        backoff_seconds: float = 60.0,
        workers: int = 2,
        timezone: object = None,
        say: Say | None = None,
        leases: Leases | None = None,
    ) -> None:
        self.key, self.targets, self.runner, self.state = key, targets, runner, state
        self.leases = leases or Leases(Path(store_path).parent / "leases")
        self.standby: Holder | None = None  # who runs this warehouse's scheduler, if not us
        self._holds_lease = False
        self.retries, self.backoff, self.grace = retries, backoff_seconds, int(grace_seconds)
        self.say = say or (lambda _line: None)
        self.timezone = timezone
        self._locks: dict[str, threading.Lock] = {}
        Path(store_path).parent.mkdir(parents=True, exist_ok=True)
        self._scheduler = BackgroundScheduler(
            jobstores={"default": SQLAlchemyJobStore(url=f"sqlite:///{store_path}")},
            executors={"default": ThreadPoolExecutor(workers)},
            job_defaults={
                "coalesce": True,
                "max_instances": 1,
                "misfire_grace_time": self.grace,
            },
            **({"timezone": timezone} if timezone is not None else {}),
        )

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> tuple[ScheduledJob, ...]:
        """Load the persisted jobs, bring them in line with the model, and start running —
        unless another process runs this warehouse's scheduler: then stay stopped (`standby`
        names it), say so, and return no jobs."""
        self.standby = self._take_warehouse()
        if self.standby is not None:
            self.say(
                f"not started: this warehouse's scheduler runs in {self.standby.describe()} "
                "(one scheduler per warehouse)"
            )
            return ()
        with _REGISTRY_LOCK:
            _RUNNING[self.key] = self
        self._scheduler.start(paused=True)
        self._sync()
        self._scheduler.resume()
        return self.jobs()

    def shutdown(self, wait: bool = True) -> None:
        """Stop; with `wait`, running refreshes finish first (abandoning one is safe too: the
        previous tile version stays valid)."""
        if self._scheduler.running:
            self._scheduler.shutdown(wait=wait)
        with _REGISTRY_LOCK:
            if _RUNNING.get(self.key) is self:
                del _RUNNING[self.key]
        self._leave_warehouse()

    def _take_warehouse(self) -> Holder | None:
        """Hold the warehouse's scheduler lease (shared by this process's schedulers); the
        other process's holder when it is taken."""
        with _REGISTRY_LOCK:
            if self._holds_lease:
                return None
            key = str(self.leases.directory)
            entry = _WAREHOUSE_LEASES.get(key)
            if entry is None:
                try:
                    lease: Lease = self.leases.acquire(SCHEDULER_LEASE, "scheduler")
                except LeaseHeld as held:
                    return held.holder
                entry = _WAREHOUSE_LEASES[key] = [lease, 0]
            entry[1] += 1
            self._holds_lease = True
        return None

    def _leave_warehouse(self) -> None:
        with _REGISTRY_LOCK:
            if not self._holds_lease:
                return
            self._holds_lease = False
            key = str(self.leases.directory)
            entry = _WAREHOUSE_LEASES[key]
            entry[1] -= 1
            if entry[1] == 0:
                del _WAREHOUSE_LEASES[key]
                entry[0].release()

    def run_forever(self, poll_seconds: float = 1.0) -> None:
        """Run in the foreground until Ctrl-C (then stop cleanly); ConflictError when another
        process runs this warehouse's scheduler."""
        self.start()
        if self.standby is not None:
            raise ConflictError(
                f"this warehouse's scheduler already runs in {self.standby.describe()}; "
                "one scheduler per warehouse"
            )
        try:
            while self._scheduler.running:
                time.sleep(poll_seconds)
        except KeyboardInterrupt:
            self.say("stopping: waiting for running refreshes (Ctrl-C again abandons them)")
        finally:
            self.shutdown(wait=True)

    @property
    def running(self) -> bool:
        return bool(self._scheduler.running)

    # -- jobs ------------------------------------------------------------------------------
    def job_id(self, target: ScheduledTarget) -> str:
        return f"mvlattice:{self.key}:{target.kind}:{target.name}"

    def jobs(self) -> tuple[ScheduledJob, ...]:
        out = []
        for job in self._scheduler.get_jobs():
            if not job.id.startswith(f"mvlattice:{self.key}:"):
                continue
            _, _, kind, name, *rest = job.id.split(":", 4)
            cron = job.name.rpartition("[")[2].rstrip("]")
            out.append(ScheduledJob(job.id, kind, name, cron, job.next_run_time, bool(rest)))
        return tuple(sorted(out, key=lambda j: j.id))

    def run_now(self, kind: str, name: str) -> None:
        """Make a scheduled target's job run at once (it keeps its schedule afterwards)."""
        job_id = f"mvlattice:{self.key}:{kind}:{name}"
        self._scheduler.modify_job(job_id, next_run_time=dt.datetime.now(dt.UTC))

    def _sync(self) -> None:
        """Add the model's jobs; keep a stored job whose cron is unchanged (so a run missed
        while stopped still fires); drop jobs of targets no longer scheduled."""
        wanted = {self.job_id(t): t for t in self.targets}
        for job in self._scheduler.get_jobs():
            base = job.id.removesuffix(":retry")
            if job.id.startswith(f"mvlattice:{self.key}:") and base not in wanted:
                job.remove()
        for job_id, target in wanted.items():
            label = f"refresh {target.kind} {target.name} [{target.cron}]"
            existing = self._scheduler.get_job(job_id)
            if existing is not None and existing.name == label:
                existing.modify(misfire_grace_time=self.grace)  # keeps its next run time
                continue
            self._scheduler.add_job(
                "mvlattice.jobs.scheduler:run_scheduled",
                trigger_for(target.cron, self.timezone),
                args=[self.key, target.kind, target.name, 0],
                id=job_id,
                name=label,
                replace_existing=True,
            )

    # -- running ---------------------------------------------------------------------------
    def run_target(self, kind: str, name: str, attempt: int) -> bool:
        """One run: skipped while the same target runs; on failure a retry is scheduled."""
        base = f"mvlattice:{self.key}:{kind}:{name}"
        lock = self._locks.setdefault(base, threading.Lock())
        if not lock.acquire(blocking=False):
            self.say(f"{kind} {name}: already refreshing; this run is skipped")
            return False
        started = time.time()
        try:
            ok, summary = self.runner(kind, name)
        except Exception as exc:  # noqa: BLE001 - a run's failure never stops the scheduler
            ok, summary = False, f"{type(exc).__name__}: {str(exc).strip().splitlines()[0]}"
        finally:
            lock.release()
        self._record(kind, name, ok, summary, started, attempt)
        if not ok and attempt < self.retries:
            self._retry(base, kind, name, attempt + 1)
        return ok

    def _retry(self, base: str, kind: str, name: str, attempt: int) -> None:
        delay = self.backoff * 2 ** (attempt - 1)
        when = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=delay)
        self.say(f"{kind} {name}: retry {attempt}/{self.retries} in {delay:g}s")
        self._scheduler.add_job(
            "mvlattice.jobs.scheduler:run_scheduled",
            "date",
            run_date=when,
            args=[self.key, kind, name, attempt],
            id=f"{base}:retry",
            name=f"retry {attempt} {kind} {name}",
            replace_existing=True,
        )

    def _record(
        self, kind: str, name: str, ok: bool, summary: str, started: float, attempt: int
    ) -> None:
        self.say(f"{kind} {name}: {'ok' if ok else 'FAILED'} — {summary}")
        if self.state is None:
            return
        self.state.finish(
            Outcome(
                f"schedule:{kind}:{name}",
                "refreshed" if ok else "failed",
                None,
                f"attempt {attempt + 1}: {summary}",
                None,
                started,
                time.time(),
                None if ok else summary,
                "schedule",
            )
        )


def run_scheduled(key: str, kind: str, name: str, attempt: int) -> None:
    """The persisted jobs' entry point: hand the run to this process's scheduler."""
    with _REGISTRY_LOCK:
        scheduler = _RUNNING.get(key)
    if scheduler is not None:
        scheduler.run_target(kind, name, attempt)


def for_model(
    spark: SparkSession,
    model: Model,
    warehouse: str | None = None,
    *,
    say: Say | None = None,
    grace_seconds: float = 3600.0,
    retries: int = 3,
    backoff_seconds: float = 60.0,
) -> Scheduler:
    """The scheduler of a model's cron targets, refreshing through `jobs.api.refresh`, its job
    store and outcomes in the warehouse — what `mvlattice schedule` and the service run."""
    from mvlattice.jobs.api import scheduled_runner
    from mvlattice.jobs.cron import scheduled_targets
    from mvlattice.jobs.state import state_directory

    where = warehouse or model.warehouse
    return Scheduler(
        scheduler_key(model.file, where),
        scheduled_targets(model),
        scheduled_runner(spark, model, where),
        state_directory(where) / "scheduler.sqlite",
        state=StateStore.for_warehouse(where),
        grace_seconds=grace_seconds,
        retries=retries,
        backoff_seconds=backoff_seconds,
        say=say,
    )
