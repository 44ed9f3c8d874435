"""Which built tiles may go: those dropped from their lattice's plan, those no longer declared,
and (when asked) those unused for longer than a given time. Never a declared tile, a declared
materialization, or a table a declared materialization reads."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BuiltTile:
    name: str
    location: str
    lattice: str
    origin: str  # declared | planned | auto
    built_at: float
    last_used: float | None = None


@dataclass(frozen=True, slots=True)
class Garbage:
    name: str
    location: str
    reason: str
    error: str | None = None  # removing it failed: what did not happen, and why


def choose_garbage(
    tiles: Iterable[BuiltTile],
    *,
    keep: frozenset[str],
    plans: Mapping[str, frozenset[str] | None],
    unused_seconds: float | None,
    now: float,
) -> tuple[Garbage, ...]:
    """`keep`: declared tiles and tables materializations read; `plans`: each lattice's last
    planned tile names (None: never planned, so nothing counts as dropped from a plan)."""
    out = []
    for tile in tiles:
        if tile.name in keep:
            continue
        reason = _reason(tile, plans.get(tile.lattice), unused_seconds, now)
        if reason is not None:
            out.append(Garbage(tile.name, tile.location, reason))
    return tuple(out)


def _reason(
    tile: BuiltTile, plan: frozenset[str] | None, unused: float | None, now: float
) -> str | None:
    in_plan = plan is not None and tile.name in plan
    if tile.origin == "declared" and not in_plan:
        return "no longer declared in the model"
    if tile.origin == "planned" and plan is not None and not in_plan:
        return f"no longer in the plan of lattice '{tile.lattice}'"
    idle = now - (tile.last_used if tile.last_used is not None else tile.built_at)
    if unused is not None and idle > unused:
        since = "last used" if tile.last_used is not None else "built, never used,"
        return f"{since} {_days(idle)} ago (limit {_days(unused)})"
    return None


def _days(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:.1f} days"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} hours"
    return f"{seconds:.0f} s"
