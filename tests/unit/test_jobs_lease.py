"""Leases (one builder per target, one scheduler per warehouse, across processes) — no Spark."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mvlattice.errors import ConflictError
from mvlattice.jobs.cron import ScheduledTarget
from mvlattice.jobs.freshness import Attempt, attempt_running
from mvlattice.jobs.lease import Lease, LeaseHeld, Leases
from mvlattice.jobs.scheduler import Scheduler
from mvlattice.jobs.state import StateStore, state_directory
from tests.support import wait_until

REPO = Path(__file__).resolve().parents[2]


class Clock:
    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def quiet(lease: Lease) -> Lease:
    """Stop a lease's heartbeat (the tests move a fake clock instead) but keep it held."""
    lease._stop.set()
    lease._thread.join()
    return lease


def test_one_holder_at_a_time_and_release_frees_it(tmp_path: Path) -> None:
    leases = Leases(tmp_path, ttl=60, clock=Clock())
    assert leases.holder("mvlattice.t") is None
    first = quiet(leases.acquire("mvlattice.t", "cli build"))
    held = leases.holder("mvlattice.t")
    assert held is not None and (held.pid, held.purpose) == (os.getpid(), "cli build")
    with pytest.raises(LeaseHeld) as refused:  # another thread of this process, too
        leases.acquire("mvlattice.t")
    assert refused.value.holder.token == first.holder.token
    assert f"pid {os.getpid()} since 1970-01-01T00:16:40Z" in str(refused.value)
    assert isinstance(refused.value, ConflictError)  # a 409 if it reaches the HTTP API
    leases.acquire("mvlattice.other").release()  # leases are per name
    first.release()
    assert leases.holder("mvlattice.t") is None
    leases.acquire("mvlattice.t").release()


def test_an_expired_lease_is_taken_over_and_its_old_holder_loses_it(tmp_path: Path) -> None:
    clock = Clock()
    leases = Leases(tmp_path, ttl=60, clock=clock)
    old = quiet(leases.acquire("mvlattice.t"))
    clock.now += 59
    renewed = leases.renew(old.holder)  # renewing pushes the expiry on
    assert renewed is not None and renewed.expires_at == clock.now + 60
    old.holder = renewed
    clock.now += 59
    assert leases.holder("mvlattice.t") is not None  # still live: renewed
    clock.now += 2
    assert leases.holder("mvlattice.t") is None  # expired: its builder stopped renewing
    new = quiet(leases.acquire("mvlattice.t"))  # taken over
    assert leases.renew(old.holder) is None  # the old holder learns it lost the lease
    old.lost = True
    old.release()  # and releasing it does not free the new holder's lease
    assert leases.holder("mvlattice.t").token == new.holder.token
    new.release()


def test_a_reused_pid_is_never_building(tmp_path: Path) -> None:
    # A lease left by a builder that died; after a restart its PID is now this (live) process.
    clock = Clock(10_000.0)
    leases = Leases(tmp_path, ttl=60, clock=clock)
    stale = {"name": "mvlattice.t", "host": os.uname().nodename, "pid": os.getpid(),
             "token": "dead", "acquired_at": 100.0, "expires_at": 160.0}  # fmt: skip
    leases._path("mvlattice.t", ".json").write_text(json.dumps(stale))
    assert leases.holder("mvlattice.t") is None
    attempt = Attempt("building", 100.0, pid=os.getpid(), host=os.uname().nodename)
    assert not attempt_running(attempt, leases.holder("mvlattice.t") is not None)
    taken = quiet(leases.acquire("mvlattice.t"))  # the refresh proceeds
    assert attempt_running(attempt, leases.holder("mvlattice.t") is not None)
    assert not attempt_running(Attempt("ok", 100.0), True)
    taken.release()


def test_the_heartbeat_keeps_a_lease_alive_past_its_ttl(tmp_path: Path) -> None:
    leases = Leases(tmp_path, ttl=0.4)
    with leases.acquire("mvlattice.t") as lease:
        first_expiry = lease.holder.expires_at

        def renewed_after_first_expiry() -> bool:  # so: live past its first ttl
            held = leases.holder("mvlattice.t")  # None once expired
            return held is not None and held.expires_at > first_expiry + leases.ttl

        wait_until(renewed_after_first_expiry, 10, "a renewal after the lease's first expiry")
        assert not lease.lost
    assert leases.holder("mvlattice.t") is None


def test_another_process_cannot_take_a_held_lease(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        from mvlattice.jobs.lease import LeaseHeld, Leases
        try:
            Leases({str(tmp_path)!r}).acquire("mvlattice.t").release()
            print("acquired")
        except LeaseHeld as held:
            print("held by", held.holder.pid)
    """)

    def other() -> str:
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             cwd=REPO, timeout=60, check=True)  # fmt: skip
        return run.stdout.strip()

    with Leases(tmp_path).acquire("mvlattice.t"):
        assert other() == f"held by {os.getpid()}"
    assert other() == "acquired"


def test_leases_live_in_the_warehouse(tmp_path: Path) -> None:
    leases = Leases.for_warehouse(str(tmp_path))
    assert leases.directory == state_directory(str(tmp_path)) / "leases"
    with leases.acquire("shop.by_year`; x"):  # any name makes a safe file name
        (found,) = leases.directory.glob("*.json")
        assert found.name.startswith("shop.by_year___x-")


class Runner:
    def __call__(self, kind: str, name: str) -> tuple[bool, str]:
        return True, "1 refreshed"


def scheduler(tmp_path: Path, key: str, says: list[str]) -> Scheduler:
    target = ScheduledTarget("lattice", "star", "0 3 * * *")
    return Scheduler(key, (target,), Runner(), tmp_path / "jobs.sqlite",
                     state=StateStore(tmp_path / "catalog.sqlite"), say=says.append)  # fmt: skip


def test_one_scheduler_per_warehouse(tmp_path: Path) -> None:
    says: list[str] = []
    # Another process holds the warehouse's scheduler lease (same file, foreign holder).
    foreign = Leases(tmp_path / "leases").acquire("scheduler", "scheduler")
    try:
        standby = scheduler(tmp_path, "a", says)
        assert standby.start() == () and not standby.running
        assert standby.standby is not None and standby.standby.pid == os.getpid()
        assert says and says[-1].startswith("not started: this warehouse's scheduler runs in")
        with pytest.raises(ConflictError, match="one scheduler per warehouse"):
            scheduler(tmp_path, "a", says).run_forever()
        standby.shutdown()
    finally:
        foreign.release()
    # This process's schedulers (one per model) share the lease it takes.
    first, second = scheduler(tmp_path, "a", says), scheduler(tmp_path, "b", says)
    assert first.start() and second.start() and first.running and second.running
    with pytest.raises(LeaseHeld):
        Leases(tmp_path / "leases").acquire("scheduler")
    first.shutdown()
    assert Leases(tmp_path / "leases").holder("scheduler") is not None  # second still runs
    second.shutdown()
    assert Leases(tmp_path / "leases").holder("scheduler") is None
