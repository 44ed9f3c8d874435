"""Leases: who may build a target (or run a warehouse's scheduler) right now, across processes.

A lease is a small JSON file, `<state directory>/leases/<name>-<hash>.json` (inside the warehouse
when it is local, see `state.state_directory`), naming its holder — host, pid, a random token per
acquisition — with when it was taken and when it expires. The holder renews it from a heartbeat
thread every `ttl / 4`; a holder that dies stops renewing, so its lease expires within `ttl` and
the next builder takes it over. "Being built" is a live lease, never a PID check: a container
restart that reuses the PID of a dead builder means nothing.

Every read-modify-write of a lease runs under an exclusive `flock` on its `.lock` file (never
deleted) and replaces the lease by write-to-temp + rename, so a reader never sees half a lease.

What is guaranteed: one holder at a time among the processes sharing the directory on a local
filesystem (or NFSv4, whose locks the kernel forwards). A warehouse on object storage (s3a://…)
keeps its state directory, leases included, on the local disk (~/.cache/mvlattice/state/…), as
the state store does: builders on one host exclude each other, builders on different hosts do
not (put them on one host, or give them a shared filesystem). Expiry uses wall clocks, so hosts
must agree on the time to within a fraction of `ttl`. A holder frozen past `ttl` (SIGSTOP) loses
its lease and may meet a second builder. In those cases a duplicate build costs time, never
correctness: every build is one atomic Delta commit of a complete tile, the later one wins.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from mvlattice.errors import ConflictError

TTL_SECONDS = 60.0


@dataclass(kw_only=True, frozen=True, slots=True)
class Holder:
    """Who holds a lease, as its file says."""

    name: str
    host: str
    pid: int
    token: str  # random per acquisition: two threads of one process are two holders
    acquired_at: float
    expires_at: float
    purpose: str = ""

    def live(self, now: float) -> bool:
        return now < self.expires_at

    def describe(self) -> str:
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.acquired_at))
        return f"{self.host} pid {self.pid} since {since}"


class LeaseHeld(ConflictError):
    """Someone else holds the lease (`holder`); a 409 if it reaches the HTTP API."""

    def __init__(self, holder: Holder) -> None:
        doing = f" ({holder.purpose})" if holder.purpose else ""
        super().__init__(f"{holder.name} is held by {holder.describe()}{doing}")
        self.holder = holder


class Leases:
    """The leases of one state directory."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        ttl: float = TTL_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.directory = Path(directory)
        self.ttl = ttl
        self.clock = clock

    @classmethod
    def for_warehouse(cls, warehouse: str, ttl: float = TTL_SECONDS) -> Leases:
        from mvlattice.jobs.state import state_directory

        return cls(state_directory(warehouse) / "leases", ttl)

    def holder(self, name: str) -> Holder | None:
        """The live holder of `name`, else None (never held, released, or expired)."""
        found = self._read(name)
        return found if found is not None and found.live(self.clock()) else None

    def acquire(self, name: str, purpose: str = "") -> Lease:
        """Take the lease (over an expired one, too); LeaseHeld when it is live elsewhere.
        The returned Lease is renewed in the background until it is released."""
        with self._locked(name):
            now = self.clock()
            current = self._read(name)
            if current is not None and current.live(now):
                raise LeaseHeld(current)
            mine = Holder(
                name=name,
                host=socket.gethostname(),
                pid=os.getpid(),
                token=secrets.token_hex(8),
                acquired_at=now,
                expires_at=now + self.ttl,
                purpose=purpose,
            )
            self._write(mine)
        return Lease(self, mine)

    def renew(self, held: Holder) -> Holder | None:
        """Push the expiry of `held` on; None when it is no longer ours (taken over)."""
        with self._locked(held.name):
            current = self._read(held.name)
            if current is None or current.token != held.token:
                return None
            renewed = replace(current, expires_at=self.clock() + self.ttl)
            self._write(renewed)
        return renewed

    def release(self, held: Holder) -> None:
        with self._locked(held.name):
            current = self._read(held.name)
            if current is not None and current.token == held.token:
                self._path(held.name, ".json").unlink(missing_ok=True)

    # -- files ---------------------------------------------------------------------------------
    def _path(self, name: str, suffix: str) -> Path:
        readable = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:80]
        digest = hashlib.sha1(name.lower().encode()).hexdigest()[:10]
        return self.directory / f"{readable}-{digest}{suffix}"

    @contextlib.contextmanager
    def _locked(self, name: str) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._path(name, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _read(self, name: str) -> Holder | None:
        try:
            doc = json.loads(self._path(name, ".json").read_text())
            return Holder(**doc)
        except (OSError, ValueError, TypeError):
            return None  # none, or not a lease we can read: as good as none

    def _write(self, holder: Holder) -> None:
        target = self._path(holder.name, ".json")
        temporary = target.with_suffix(f".{holder.token}.tmp")
        temporary.write_text(json.dumps(asdict(holder)))
        os.replace(temporary, target)


class Lease:
    """A lease held by this process: renewed by a daemon thread until `release()` (or the end
    of a `with` block). `lost` turns true when a renewal found it taken over."""

    def __init__(self, leases: Leases, holder: Holder) -> None:
        self.leases = leases
        self.holder = holder
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._heartbeat, name=f"mvlattice-lease {holder.name}", daemon=True
        )
        self._thread.start()

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.leases.ttl / 4):
            try:
                renewed = self.leases.renew(self.holder)
            except OSError:
                continue  # a storage hiccup: the next beat tries again before expiry
            if renewed is None:
                self.lost = True
                return
            self.holder = renewed

    def release(self) -> None:
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()
        if not self.lost:
            self.leases.release(self.holder)

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
