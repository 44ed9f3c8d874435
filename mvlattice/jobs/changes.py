"""Which refresh a tile needs, decided from the Delta commits since it was built.

Incremental refresh aggregates only the rows appended to the fact table and merges them into the
tile. That is correct only when every commit to the fact table since the recorded version did
nothing but add new data files (no `remove`: no delete, update, merge, overwrite or compaction —
a compaction would move appended rows into files we could not tell apart; no `metaData`: no
schema change), no dimension table changed at all, and every measure merges (no COUNT DISTINCT).
Anything else takes the full path, with the reason stated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote

from mvlattice.jobs.record import Version

# Actions an append may carry besides `add`: its commit info and idempotent-write markers.
HARMLESS = frozenset({"commitInfo", "txn"})

NONE, INCREMENTAL, FULL = "none", "incremental", "full"


@dataclass(frozen=True, slots=True)
class AddedFile:
    """A data file an `add` action brought: its path (relative to the table, decoded) and the
    partition values of its rows."""

    path: str
    partition: tuple[tuple[str, str | None], ...] = ()

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]


@dataclass(frozen=True, slots=True)
class Commit:
    """One Delta commit, reduced to what decides whether it only appended rows."""

    version: int
    operation: str
    added: tuple[AddedFile, ...]
    removes: int
    other_actions: tuple[str, ...]  # action kinds besides add/remove/commitInfo/txn
    unsafe_adds: int = 0  # adds with dataChange=false or a deletion vector

    @property
    def append_only(self) -> bool:
        return not self.removes and not self.other_actions and not self.unsafe_adds

    @property
    def added_files(self) -> tuple[str, ...]:
        """File names (without directories) of the data files added."""
        return tuple(f.name for f in self.added)


def parse_commit(version: int, actions: Iterable[Mapping]) -> Commit:
    """A commit from the JSON actions of `_delta_log/<version>.json`."""
    operation, added, removes, unsafe = "UNKNOWN", [], 0, 0
    other: list[str] = []
    for action in actions:
        for kind, body in action.items():
            if kind == "commitInfo":
                operation = str(body.get("operation", operation))
            elif kind == "add":
                if body.get("dataChange", True) is False or body.get("deletionVector"):
                    unsafe += 1
                values = body.get("partitionValues") or {}
                added.append(AddedFile(unquote(str(body["path"])), tuple(sorted(values.items()))))
            elif kind == "remove":
                removes += 1
            elif kind not in HARMLESS:
                other.append(kind)
    return Commit(version, operation, tuple(added), removes, tuple(dict.fromkeys(other)), unsafe)


@dataclass(frozen=True, slots=True)
class RefreshDecision:
    path: str  # none | incremental | full
    reason: str
    added: tuple[AddedFile, ...] = ()
    fact_version: int | None = None  # the version appended rows are read at

    @property
    def added_files(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.added)


def decide_refresh(
    *,
    recorded: Mapping[str, Version] | None,
    current: Mapping[str, Version],
    fact: str | None,
    blocker: str | None = None,
    definition_changed: bool = False,
    full: bool = False,
    fact_commits: tuple[Commit, ...] | None = None,
) -> RefreshDecision:
    """The refresh path for a tile (`fact` its lattice's fact table; None for a materialization).

    `blocker` is why appended rows cannot be merged whatever the commits say (e.g. COUNT
    DISTINCT); `fact_commits` are the fact table's commits after the recorded version up to the
    current one, or None when the log no longer holds them.
    """
    if recorded is None:
        return RefreshDecision(FULL, "not built yet")
    if definition_changed:
        return RefreshDecision(FULL, "its definition changed since it was built")
    changed = changed_sources(recorded, current)
    if full:
        return RefreshDecision(FULL, "a full rebuild was asked for")
    if not changed:
        return RefreshDecision(NONE, "fresh: no source table changed")
    return _changed(recorded, current, changed, fact, blocker, fact_commits)


def _changed(
    recorded: Mapping[str, Version],
    current: Mapping[str, Version],
    changed: tuple[str, ...],
    fact: str | None,
    blocker: str | None,
    fact_commits: tuple[Commit, ...] | None,
) -> RefreshDecision:
    if fact is None:
        return RefreshDecision(FULL, "materializations are rebuilt in full")
    others = [t for t in changed if t != fact]
    if others:
        return RefreshDecision(FULL, f"{_describe(others[0], recorded, current)} changed")
    old, new = recorded.get(fact), current.get(fact)
    if not (isinstance(old, int) and isinstance(new, int)) or new < old:
        return RefreshDecision(FULL, f"fact table {fact} has no Delta history to read changes from")
    if blocker is not None:
        return RefreshDecision(FULL, blocker)
    if fact_commits is None:
        return RefreshDecision(
            FULL, f"the Delta log of {fact} no longer holds versions {old + 1}–{new}"
        )
    return _appends(fact, old, new, fact_commits)


def _appends(fact: str, old: int, new: int, commits: tuple[Commit, ...]) -> RefreshDecision:
    if [c.version for c in commits] != list(range(old + 1, new + 1)):
        return RefreshDecision(FULL, f"versions {old + 1}–{new} of {fact} are not all readable")
    for commit in commits:
        if not commit.append_only:
            return RefreshDecision(
                FULL,
                f"version {commit.version} of {fact} ({commit.operation}) does more than append"
                + _what(commit),
            )
    files = tuple(f for c in commits for f in c.added)
    span = f"version {new}" if new == old + 1 else f"versions {old + 1}–{new}"
    return RefreshDecision(
        INCREMENTAL,
        f"{span} of {fact} only append rows ({len(files)} file{'s' if len(files) != 1 else ''})",
        files,
        new,
    )


def _what(commit: Commit) -> str:
    if commit.removes:
        return f": it removes {commit.removes} file(s)"
    if commit.other_actions:
        return f": it carries {', '.join(commit.other_actions)}"
    return ": it rewrites existing data files"


def changed_sources(
    recorded: Mapping[str, Version], current: Mapping[str, Version]
) -> tuple[str, ...]:
    """Sources whose version differs, is unknown (None) on either side, or is new or gone."""
    names = sorted(set(recorded) | set(current))
    return tuple(
        n
        for n in names
        if n not in recorded
        or n not in current
        or recorded[n] is None
        or current[n] is None
        or recorded[n] != current[n]
    )


def _describe(name: str, recorded: Mapping[str, Version], current: Mapping[str, Version]) -> str:
    old, new = recorded.get(name), current.get(name)
    if isinstance(old, int) and isinstance(new, int):
        return f"dimension table {name} (version {old} → {new})"
    return f"dimension table {name}"
