"""Cron translation and the APScheduler-backed scheduler, with a recording runner — no Spark.

The runner stands in for the refresh (tested with Spark elsewhere); APScheduler, its SQLite
job store and its threads are real.
"""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

import pytest

from mvlattice.jobs.cron import ScheduledTarget, cron_fields, day_names, scheduled_targets
from mvlattice.jobs.scheduler import Scheduler, trigger_for
from mvlattice.jobs.state import StateStore
from tests.support import move_next_run, wait_until
from tests.unit.test_jobs_support import shop_model

NIGHTLY = ScheduledTarget("lattice", "star", "0 3 * * *")
MV = ScheduledTarget("materialization", "adhoc.mv", "30 2 * * 1-5")


def test_crontab_days_become_apscheduler_day_names() -> None:
    assert day_names("*") == "*"
    assert day_names("0") == "sun" and day_names("7") == "sun"
    assert day_names("1-5") == "mon,tue,wed,thu,fri"
    assert day_names("*/2") == "tue,thu,sat,sun"  # crontab 0,2,4,6
    assert day_names("5-7") == "fri,sat,sun"
    assert day_names("sat,sun") == "sat,sun"
    assert day_names("0-6") == "*"


def test_day_of_month_or_day_of_week_as_crontab_means_it() -> None:
    assert cron_fields("0 3 * * 1-5") == (
        {
            "minute": "0",
            "hour": "3",
            "month": "*",
            "day": "*",
            "day_of_week": "mon,tue,wed,thu,fri",
        },
    )
    either = cron_fields("30 2 1 * 0")
    assert [f["day"] for f in either] == ["1", "*"]
    assert [f["day_of_week"] for f in either] == ["*", "sun"]
    utc = dt.UTC
    start = dt.datetime(2024, 1, 2, tzinfo=utc)  # a Tuesday
    fire = trigger_for("30 2 1 * 0", utc).get_next_fire_time(None, start)
    assert fire == dt.datetime(2024, 1, 7, 2, 30, tzinfo=utc)  # Sunday the 7th, not Feb 1st
    with pytest.raises(ValueError, match="bad hour field '25'"):
        cron_fields("0 25 * * *")


def test_scheduled_targets_of_a_model(tmp_path: Path) -> None:
    assert scheduled_targets(shop_model(tmp_path)) == (
        ScheduledTarget("lattice", "sales_star", "0 3 * * 1-5"),
        ScheduledTarget("materialization", "adhoc.sales_by_year_mv", "30 2 1 * 0"),
    )


class Recorder:
    """A runner that records its calls; `fail` makes runs fail, `gate` holds them."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[tuple[str, str]] = []
        self.fail = fail
        self.gate: threading.Event | None = None

    def __call__(self, kind: str, name: str) -> tuple[bool, str]:
        self.calls.append((kind, name))
        if self.gate is not None:
            self.gate.wait(10)
        if self.fail:
            raise RuntimeError("the cluster is gone")
        return True, "1 refreshed"


def make(tmp_path: Path, targets, runner, **kw) -> Scheduler:
    state = StateStore(tmp_path / "catalog.sqlite")
    return Scheduler("k", tuple(targets), runner, tmp_path / "jobs.sqlite", state=state, **kw)


def test_jobs_persist_across_restarts_and_follow_the_model(tmp_path: Path) -> None:
    first = make(tmp_path, [NIGHTLY, MV], Recorder())
    jobs = first.start()
    assert [(j.kind, j.name, j.cron) for j in jobs] == [
        ("lattice", "star", "0 3 * * *"),
        ("materialization", "adhoc.mv", "30 2 * * 1-5"),
    ]
    assert all(j.next_run is not None for j in jobs)
    first.shutdown()
    changed = ScheduledTarget("lattice", "star", "15 4 * * *")
    second = make(tmp_path, [changed], Recorder())
    jobs = second.start()  # the stored jobs are read back, changed and pruned
    assert [(j.name, j.cron) for j in jobs] == [("star", "15 4 * * *")]
    assert (jobs[0].next_run.hour, jobs[0].next_run.minute) == (4, 15)
    second.shutdown()


def just_gone() -> ScheduledTarget:
    """A target that was due at each of the last three minutes (UTC) and is next due in about
    57 minutes: a job store stopped five minutes ago missed several of its runs, and no new
    run comes while the test runs."""
    minute = dt.datetime.now(dt.UTC).minute
    minutes = ",".join(str((minute - n) % 60) for n in (3, 2, 1))
    return ScheduledTarget("lattice", "star", f"{minutes} * * * *")


def test_a_run_missed_while_stopped_runs_once_on_start(tmp_path: Path) -> None:
    target = just_gone()
    first = make(tmp_path, [target], Recorder(), timezone=dt.UTC)
    first.start()
    first.shutdown()
    past = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    move_next_run(tmp_path / "jobs.sqlite", first.job_id(target), past)
    runner = Recorder()
    second = make(tmp_path, [target], runner, grace_seconds=3600, timezone=dt.UTC)
    second.start()
    try:
        wait_until(lambda: runner.calls, 10, "the missed run")
        assert second.jobs()[0].next_run > dt.datetime.now(dt.UTC)  # back on its schedule
    finally:
        second.shutdown()  # waits for the runs it started: every missed run is made by now
    assert runner.calls == [("lattice", "star")]  # coalesced: once, not once per missed time
    gone = make(tmp_path, [target], Recorder(), grace_seconds=30, timezone=dt.UTC)
    move_next_run(tmp_path / "jobs.sqlite", first.job_id(target), past)
    late = Recorder()
    gone.runner = late
    gone.start()
    try:  # the job's next run leaves the past once the scheduler has taken up the missed run
        wait_until(
            lambda: gone.jobs()[0].next_run > dt.datetime.now(dt.UTC),
            10,
            "the scheduler to take up the missed run",
        )
    finally:
        gone.shutdown()  # waits for that run: made or skipped by now
    assert late.calls == []  # missed by more than the grace time (all by over 60 s): skipped


def test_failures_are_recorded_and_retried_with_backoff(tmp_path: Path) -> None:
    runner = Recorder(fail=True)
    scheduler = make(tmp_path, [NIGHTLY], runner, retries=2, backoff_seconds=600)
    scheduler.start()
    try:
        scheduler.run_now("lattice", "star")
        wait_until(lambda: any(j.retry for j in scheduler.jobs()), 10, "the retry job")
        retry = next(j for j in scheduler.jobs() if j.retry)
        delay = (retry.next_run - dt.datetime.now(dt.UTC)).total_seconds()
        assert 500 < delay <= 600
        assert scheduler.running  # the failure did not stop it
        outcome = scheduler.state.outcomes("schedule:lattice:star")[0]
        assert outcome.status == "failed"
        assert outcome.error == "RuntimeError: the cluster is gone"
        assert scheduler.run_target("lattice", "star", attempt=2) is False  # last attempt
    finally:
        scheduler.shutdown()


def test_never_two_runs_of_one_target_at_once(tmp_path: Path) -> None:
    runner = Recorder()
    runner.gate = threading.Event()
    scheduler = make(tmp_path, [NIGHTLY], runner)
    first = threading.Thread(target=scheduler.run_target, args=("lattice", "star", 0))
    first.start()
    wait_until(lambda: len(runner.calls) == 1, 10, "the first run to start")
    assert scheduler.run_target("lattice", "star", 0) is False  # skipped, not queued
    runner.gate.set()
    first.join(10)
    assert runner.calls == [("lattice", "star")]
    assert scheduler.run_target("lattice", "star", 0) is True


def test_a_batch_summary_says_what_happened() -> None:
    from mvlattice.jobs.api import summarize
    from mvlattice.jobs.batch import BatchResult, BuildResult

    results = (
        BuildResult("mvlattice.a", "tile", "refreshed", "incremental", "appends", 3),
        BuildResult("mvlattice.b", "tile", "skipped", "none", "fresh", 1),
        BuildResult("mvlattice.c", "tile", "failed", "full", "not built yet", error="boom"),
    )
    assert summarize(BatchResult(results)) == (
        "1 refreshed, 1 fresh, 1 failed, 1 incremental; mvlattice.c: boom"
    )
    assert summarize(BatchResult(())) == "nothing to do"
