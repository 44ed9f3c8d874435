"""The catalog's own memory, beside the tiles: build attempts, outcomes, hits, last plans.

A small SQLite database (`<warehouse>/_mvlattice/catalog.sqlite`; for a warehouse on object
storage, under ~/.cache/mvlattice/state/, since SQLite needs a local file). What a tile holds
and which versions it was built from is NOT kept here: that lives in the tile's Delta table
properties, committed with its data. Each call opens its own connection, so threads and
processes can share the store.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import sqlite3
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from mvlattice.jobs.freshness import Attempt
from mvlattice.settings import is_uri

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS attempts (target TEXT PRIMARY KEY, status TEXT NOT NULL, "
    "started_at REAL NOT NULL, finished_at REAL, error TEXT, pid INTEGER, host TEXT, "
    "path TEXT, reason TEXT)",
    "CREATE TABLE IF NOT EXISTS outcomes (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "target TEXT NOT NULL, status TEXT NOT NULL, path TEXT, reason TEXT, rows INTEGER, "
    "started_at REAL NOT NULL, finished_at REAL NOT NULL, error TEXT, trigger TEXT)",
    "CREATE TABLE IF NOT EXISTS usage (target TEXT PRIMARY KEY, hits INTEGER NOT NULL, "
    "last_used REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS plans (lattice TEXT PRIMARY KEY, tiles TEXT NOT NULL, "
    "planned_at REAL NOT NULL)",
)


@dataclass(frozen=True, slots=True)
class Outcome:
    target: str
    status: str  # built | refreshed | skipped | busy | failed
    path: str | None
    reason: str | None
    rows: int | None
    started_at: float
    finished_at: float
    error: str | None = None
    trigger: str | None = None  # cli | api | schedule | auto


@dataclass(frozen=True, slots=True)
class Usage:
    hits: int
    last_used: float


def state_directory(warehouse: str) -> Path:
    if is_uri(warehouse):
        digest = hashlib.sha1(warehouse.encode()).hexdigest()[:12]
        return Path.home() / ".cache" / "mvlattice" / "state" / digest
    return Path(warehouse) / "_mvlattice"


class StateStore:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.host = socket.gethostname()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._db() as db:
            for statement in SCHEMA:
                db.execute(statement)

    @classmethod
    def for_warehouse(cls, warehouse: str) -> StateStore:
        return cls(state_directory(warehouse) / "catalog.sqlite")

    @contextlib.contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30)
        try:
            with db:
                yield db
        finally:
            db.close()

    # -- attempts --------------------------------------------------------------------------
    def begin(self, target: str, started_at: float) -> None:
        with self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO attempts VALUES (?, 'building', ?, NULL, NULL, ?, ?, "
                "NULL, NULL)",
                (target, started_at, os.getpid(), self.host),
            )

    def finish(self, outcome: Outcome) -> None:
        """Close the attempt (ok or failed) and append the outcome to the history."""
        status = "failed" if outcome.status == "failed" else "ok"
        o = outcome
        with self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO attempts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    o.target,
                    status,
                    o.started_at,
                    o.finished_at,
                    o.error,
                    os.getpid(),
                    self.host,
                    o.path,
                    o.reason,
                ),
            )
            db.execute(
                "INSERT INTO outcomes (target, status, path, reason, rows, started_at, "
                "finished_at, error, trigger) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    o.target,
                    o.status,
                    o.path,
                    o.reason,
                    o.rows,
                    o.started_at,
                    o.finished_at,
                    o.error,
                    o.trigger,
                ),
            )

    def log(self, outcome: Outcome) -> None:
        """Append an outcome to the history without touching the attempt (a build skipped
        because another process holds its lease: that attempt is the other's)."""
        o = outcome
        with self._db() as db:
            db.execute(
                "INSERT INTO outcomes (target, status, path, reason, rows, started_at, "
                "finished_at, error, trigger) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (o.target, o.status, o.path, o.reason, o.rows, o.started_at, o.finished_at,
                 o.error, o.trigger),
            )  # fmt: skip

    def attempt(self, target: str) -> Attempt | None:
        with self._db() as db:
            row = db.execute(
                "SELECT status, started_at, finished_at, error, pid, host, path, reason "
                "FROM attempts WHERE target = ?",
                (target,),
            ).fetchone()
        return Attempt(*row) if row else None

    def outcomes(self, target: str | None = None, limit: int = 100) -> tuple[Outcome, ...]:
        where, args = ("WHERE target = ?", (target,)) if target else ("", ())
        with self._db() as db:
            rows = db.execute(
                "SELECT target, status, path, reason, rows, started_at, finished_at, error, "
                f"trigger FROM outcomes {where} ORDER BY id DESC LIMIT ?",
                (*args, limit),
            ).fetchall()
        return tuple(Outcome(*r) for r in rows)

    # -- usage -----------------------------------------------------------------------------
    def record_hit(self, target: str, when: float) -> None:
        with self._db() as db:
            db.execute(
                "INSERT INTO usage VALUES (?, 1, ?) ON CONFLICT(target) DO UPDATE SET "
                "hits = hits + 1, last_used = max(last_used, excluded.last_used)",
                (target, when),
            )

    def record_hits(self, hits: Mapping[str, tuple[int, float]]) -> None:
        """Many targets' hits in one transaction: target -> (hits, last used)."""
        if not hits:
            return
        with self._db() as db:
            db.executemany(
                "INSERT INTO usage VALUES (?, ?, ?) ON CONFLICT(target) DO UPDATE SET "
                "hits = hits + excluded.hits, last_used = max(last_used, excluded.last_used)",
                [(target, count, when) for target, (count, when) in hits.items()],
            )

    def usage(self, target: str) -> Usage | None:
        with self._db() as db:
            row = db.execute(
                "SELECT hits, last_used FROM usage WHERE target = ?", (target,)
            ).fetchone()
        return Usage(*row) if row else None

    # -- plans -----------------------------------------------------------------------------
    def save_plan(self, lattice: str, tiles: list[dict], when: float) -> None:
        """The tiles (as `record.spec_json`) of the lattice's newest plan."""
        with self._db() as db:
            db.execute(
                "INSERT OR REPLACE INTO plans VALUES (?, ?, ?)", (lattice, json.dumps(tiles), when)
            )

    def plan(self, lattice: str) -> list[dict] | None:
        """The tiles of the lattice's last plan; None when it was never planned."""
        with self._db() as db:
            row = db.execute("SELECT tiles FROM plans WHERE lattice = ?", (lattice,)).fetchone()
        return list(json.loads(row[0])) if row else None

    # -- forgetting ------------------------------------------------------------------------
    def forget(self, target: str) -> None:
        with self._db() as db:
            for table in ("attempts", "usage"):
                db.execute(f"DELETE FROM {table} WHERE target = ?", (target,))
