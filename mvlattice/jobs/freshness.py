"""A tile's status for the catalog and its state for the rewriter, from plain facts.

Fresh means exact: the table exists, was built from the current definition, its newest data
change is mvlattice's own commit, and every source's recorded version — and, for Delta
sources, table id — equals the source's current one. A stale table is still readable (its
last committed version); the rewriter may use it only within the target's `maxStaleness`, where
staleness is the time since the first source change the table does not reflect — never when a
source was recreated or its identity is unknown (when the old table stopped being current
cannot be told), nor when someone else changed the table's rows.

Catalog status: `building` while a build runs (its lease is live); else `fresh`; else `failed`
when the last attempt failed; else `stale` (built but behind) or `missing` (never built).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from mvlattice.jobs.availability import ViewCode, ViewState
from mvlattice.jobs.changes import changed_sources
from mvlattice.jobs.identity import identity_changes
from mvlattice.jobs.record import Snapshot, TileRecord
from mvlattice.jobs.status import TileStatus

FRESH, STALE, BUILDING = TileStatus.FRESH, TileStatus.STALE, TileStatus.BUILDING
FAILED, MISSING = TileStatus.FAILED, TileStatus.MISSING


@dataclass(frozen=True, slots=True)
class Attempt:
    """The last build attempt of a target, as the state store remembers it."""

    status: str  # building | ok | failed
    started_at: float
    finished_at: float | None = None
    error: str | None = None
    pid: int | None = None
    host: str | None = None
    path: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Facts:
    record: TileRecord | None  # None: no table (or not one of ours)
    current: Snapshot
    definition: str
    tile_change: str | None  # why the table's rows may not be mvlattice's (identity.tile_change)
    attempt: Attempt | None = None
    building: bool = False  # the attempt is running right now (its lease is live)
    max_staleness: float | None = None
    stale_since: float | None = None  # when the first unreflected source change happened
    now: float = 0.0


@dataclass(frozen=True, slots=True)
class Assessment:
    status: TileStatus
    view: ViewState
    changed: tuple[str, ...] = ()
    staleness_seconds: float | None = None


def assess(facts: Facts) -> Assessment:
    record = facts.record
    if record is None:
        return _absent(facts)
    if record.definition != facts.definition:
        message = "built from an older definition; refresh rebuilds it"
        return Assessment(_behind(facts), ViewState(False, ViewCode.STALE, message))
    if facts.tile_change is not None:
        message = f"{facts.tile_change}; refresh rebuilds it"
        return Assessment(_behind(facts), ViewState(False, ViewCode.STALE, message))
    current = facts.current
    if current.unreadable:
        return _unreadable(facts, current.unreadable)
    moved = identity_changes(record.snapshot.ids, current.ids, current.versions)
    if moved:
        message = "; ".join(m.message for m in moved) + "; refresh rebuilds it"
        names = tuple(sorted({m.source for m in moved}))
        return Assessment(_behind(facts), ViewState(False, ViewCode.STALE, message), names)
    changed = changed_sources(record.versions, current.versions)
    if not changed:
        status = BUILDING if facts.building else FRESH
        return Assessment(status, ViewState(True, ViewCode.FRESH))
    return _stale(facts, changed)


def _unreadable(facts: Facts, unreadable: Mapping[str, str]) -> Assessment:
    """A source whose log cannot be read: not absent (no rebuild would help), not fresh."""
    names = tuple(sorted(unreadable))
    which = "; ".join(f"{name} cannot be read ({unreadable[name]})" for name in names)
    view = ViewState(False, ViewCode.STALE, f"{which}; not used until it can be read")
    return Assessment(_behind(facts), view, names)


def _absent(facts: Facts) -> Assessment:
    if facts.building:
        return Assessment(
            BUILDING, ViewState(False, ViewCode.BUILDING, "its first build is running")
        )
    attempt = facts.attempt
    if attempt is not None and attempt.status == "failed":
        return Assessment(
            FAILED, ViewState(False, ViewCode.FAILED, f"build failed: {attempt.error}")
        )
    return Assessment(MISSING, ViewState(False, ViewCode.MISSING, "not built yet"))


def _behind(facts: Facts) -> TileStatus:
    if facts.building:
        return BUILDING
    failed = facts.attempt is not None and facts.attempt.status == "failed"
    return FAILED if failed else STALE


def _stale(facts: Facts, changed: tuple[str, ...]) -> Assessment:
    status = _behind(facts)
    age = None if facts.stale_since is None else max(0.0, facts.now - facts.stale_since)
    which = ", ".join(changed)
    limit = facts.max_staleness
    if limit is not None and age is not None and age <= limit:
        view = ViewState(
            True, ViewCode.STALE_ACCEPTED, f"{which} changed {age:.0f}s ago (≤ {limit:g}s)"
        )
    elif facts.building:
        view = ViewState(False, ViewCode.BUILDING, f"{which} changed; a refresh is running")
    elif status == FAILED:
        assert facts.attempt is not None
        view = ViewState(
            False, ViewCode.FAILED, f"{which} changed; last refresh failed: {facts.attempt.error}"
        )
    else:
        view = ViewState(False, ViewCode.STALE, f"{which} changed since it was built")
    return Assessment(status, view, changed, age)


def attempt_running(attempt: Attempt | None, leased: bool) -> bool:
    """A `building` attempt counts as running only while its target's lease is live (see
    `lease`: renewed by the builder, expired within a minute of its death) — never by asking
    whether its PID lives, which a restarted container may have given to another process. A
    `building` attempt without a live lease was left by a dead builder: interrupted (failed)."""
    return attempt is not None and attempt.status == "building" and leased


def interrupted(attempt: Attempt) -> Attempt:
    """The failed attempt a dead `building` attempt really is."""
    from dataclasses import replace

    return replace(
        attempt, status="failed", error=f"interrupted: process {attempt.pid} ended mid-build"
    )
