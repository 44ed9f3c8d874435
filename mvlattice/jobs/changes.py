"""Which refresh a tile needs, decided from the Delta commits since it was built.

Incremental refresh aggregates only the rows appended to the fact table and merges them into the
tile. That is correct only when every commit to the fact table since the recorded version did
nothing but add new data files (no `remove`: no delete, update, merge, overwrite or compaction —
a compaction would move appended rows into files we could not tell apart; no `metaData`: no
schema change), no dimension table changed at all, and every measure merges (no COUNT DISTINCT)
— and every source is still the table the tile was built from, and the tile holds what
mvlattice wrote (see `identity`). Anything else takes the full path, with the reason stated.

Deletes and updates are incremental too when the fact table has Delta's change data feed
(`delta.enableChangeDataFeed`) over the whole span: no commit in it changes the table's metadata
(which could switch the feed off or the schema), so the feed holds every changed row, retracted
rows (`delete`, `update_preimage`) with their old values. Whether a tile's measures can take
retractions is the batch's question (see `retraction`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from mvlattice.delta.commits import AddedFile, Commit
from mvlattice.jobs.identity import identity_changes
from mvlattice.jobs.partitions import Touched, touched
from mvlattice.jobs.record import Snapshot, Version
from mvlattice.jobs.status import RefreshPath

NONE, INCREMENTAL, FULL = RefreshPath.NONE, RefreshPath.INCREMENTAL, RefreshPath.FULL


@dataclass(frozen=True, slots=True)
class RefreshDecision:
    path: RefreshPath  # none | incremental | full
    reason: str
    added: tuple[AddedFile, ...] = ()
    fact_version: int | None = None  # the version appended rows are read at
    feed: bool = False  # the changes are read from the change data feed (not only appends)
    from_version: int | None = None  # the fact version the tile holds

    change_rows: int | None = None  # rows added, deleted or updated; None: not known
    # What the change touched of the fact table, when only its rows changed and its log holds
    # every commit since the tile (see `partitions`); None: not known.
    partitions: Touched | None = None

    @property
    def added_files(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.added)


def decide_refresh(
    *,
    recorded: Snapshot | None,
    current: Snapshot,
    fact: str | None,
    tile_change: str | None,
    blocker: str | None = None,
    definition_changed: bool = False,
    full: bool = False,
    fact_commits: tuple[Commit, ...] | None = None,
    change_feed: bool = False,
) -> RefreshDecision:
    """The refresh path for a tile (`fact` its lattice's fact table; None for a materialization).

    `tile_change` is why the table's rows may not be what mvlattice wrote (see
    `identity.tile_change`); `blocker` is why appended rows cannot be merged whatever the
    commits say (e.g. COUNT DISTINCT); `fact_commits` are the fact table's commits after the
    recorded version up to the current one, or None when the log no longer holds them;
    `change_feed`: the fact table's current metadata enables the change data feed.
    """
    if recorded is None:
        return RefreshDecision(FULL, "not built yet")
    if definition_changed:
        return RefreshDecision(FULL, "its definition changed since it was built")
    if full:
        return RefreshDecision(FULL, "a full rebuild was asked for")
    if tile_change is not None:
        return RefreshDecision(FULL, f"{tile_change}: full rebuild")
    # Before versions: a recreated table's versions say nothing about the rows it held.
    moved = identity_changes(recorded.ids, current.ids, current.versions)
    if moved:
        return RefreshDecision(FULL, f"{moved[0].message}: full rebuild")
    changed = changed_sources(recorded.versions, current.versions)
    if not changed:
        return RefreshDecision(NONE, "fresh: no source table changed")
    return _changed(
        recorded.versions, current.versions, changed, fact, blocker, fact_commits, change_feed
    )


def _changed(
    recorded: Mapping[str, Version],
    current: Mapping[str, Version],
    changed: tuple[str, ...],
    fact: str | None,
    blocker: str | None,
    fact_commits: tuple[Commit, ...] | None,
    change_feed: bool = False,
) -> RefreshDecision:
    if fact is None:
        return RefreshDecision(FULL, "materializations are rebuilt in full")
    others = [t for t in changed if t != fact]
    if others:
        return RefreshDecision(FULL, f"{_describe(others[0], recorded, current)} changed")
    old, new = recorded.get(fact), current.get(fact)
    if not (isinstance(old, int) and isinstance(new, int)) or new < old:
        return RefreshDecision(FULL, f"fact table {fact} has no Delta history to read changes from")
    partitions = None if fact_commits is None else touched(fact_commits, old, new)
    if blocker is not None:
        return RefreshDecision(
            FULL, blocker, fact_version=new, from_version=old, partitions=partitions
        )
    if fact_commits is None:
        return RefreshDecision(
            FULL, f"the Delta log of {fact} no longer holds versions {old + 1}–{new}"
        )
    return replace(_appends(fact, old, new, fact_commits, change_feed), partitions=partitions)


def _appends(
    fact: str, old: int, new: int, commits: tuple[Commit, ...], change_feed: bool = False
) -> RefreshDecision:
    if [c.version for c in commits] != list(range(old + 1, new + 1)):
        return RefreshDecision(FULL, f"versions {old + 1}–{new} of {fact} are not all readable")
    files = tuple(f for c in commits for f in c.added)
    span = f"version {new}" if new == old + 1 else f"versions {old + 1}–{new}"
    for commit in commits:
        if not commit.append_only:
            if change_feed and _feed_covers(commit):
                continue
            return RefreshDecision(
                FULL,
                f"version {commit.version} of {fact} ({commit.operation}) does more than append"
                + _what(commit)
                + ("" if change_feed else f" and {fact} has no change data feed"),
                fact_version=new,
                from_version=old,
            )
    if any(not c.append_only for c in commits):
        counts = [c.rows_changed for c in commits]
        return RefreshDecision(
            INCREMENTAL,
            f"{span} of {fact} change rows; read from its change data feed",
            files,
            new,
            feed=True,
            from_version=old,
            change_rows=None if None in counts else sum(c or 0 for c in counts),
        )
    rows = [f.rows for f in files]
    return RefreshDecision(
        INCREMENTAL,
        f"{span} of {fact} only append rows ({len(files)} file{'s' if len(files) != 1 else ''})",
        files,
        new,
        from_version=old,
        change_rows=None if None in rows else sum(r or 0 for r in rows),
    )


def _feed_covers(commit: Commit) -> bool:
    """Whether the change data feed holds this commit's changes: it adds, removes and writes
    change files (`cdc`) only — no metadata action that could switch the feed or the schema."""
    return set(commit.other_actions) <= {"cdc"}


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
