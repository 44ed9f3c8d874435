"""Helpers shared by the unit and integration tests. No tests here.

`wait_until` is how a test waits for something to happen: it polls a condition until a
deadline and fails naming what it waited for — never a fixed sleep that hopes the thing is
done. `move_next_run` edits a scheduler's job store as if its process had been down over a
scheduled run, so the next scheduler started on that store runs the job at once (a missed run,
coalesced) instead of at a cron minute.
"""

from __future__ import annotations

import datetime as dt
import pickle
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T],
    timeout: float,
    what: str | Callable[[], str],
    interval: float = 0.01,
) -> T:
    """Poll `condition` until it returns something truthy, and return that. After `timeout`
    seconds, fail with an AssertionError saying what was awaited (`what` may be a callable, to
    add details such as a log's tail only when it fails). An exception `condition` raises ends
    the wait at once."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            said = what() if callable(what) else what
            raise AssertionError(f"still waiting after {timeout:g} s for {said}")
        time.sleep(interval)  # the polling interval, not a wait for the condition


def move_next_run(store: Path, job_id: str, when: dt.datetime) -> None:
    """Set a persisted APScheduler job's next run time (in the SQLite job store at `store`), as
    if the scheduler had been stopped over `when`."""
    db = sqlite3.connect(store)
    try:
        row = db.execute(
            "SELECT job_state FROM apscheduler_jobs WHERE id = ?", (job_id,)
        ).fetchone()
        assert row is not None, f"no job {job_id} in {store}"
        state = pickle.loads(row[0])
        state["next_run_time"] = when
        db.execute(
            "UPDATE apscheduler_jobs SET next_run_time = ?, job_state = ? WHERE id = ?",
            (when.timestamp(), pickle.dumps(state, pickle.HIGHEST_PROTOCOL), job_id),
        )
        db.commit()
    finally:
        db.close()
