"""Whether each source is still the table a tile was built from, and whether the tile itself
still holds what mvlattice wrote — pure, from recorded and current facts.

Versions alone cannot tell: a Delta table deleted and recreated (or replaced by CREATE OR
REPLACE) restarts at version 0 and may reach the recorded version again, with other rows.
Its log's table id (`metaData.id`) is new, so a Delta source is unchanged only when both its
recorded id and version equal the current ones. An id that is unknown on either side (a tile
recorded before ids were kept, a log whose id cannot be read) proves nothing: not fresh.
Either way the old totals must not be kept: a full rebuild, never an incremental merge.

The tile itself: every commit mvlattice makes to it carries its record's tag (`commit_tag`) as
Delta `userMetadata`. When the newest commit that changed its data lacks the tag (a user's
DELETE FROM or INSERT INTO the tile), the rows no longer match the record: stale, full rebuild.
Commits that change no data (OPTIMIZE, VACUUM) do not count.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mvlattice.jobs.record import TableId, TileRecord, Version, commit_tag, legacy_tag

if TYPE_CHECKING:
    from mvlattice.delta.commits import Commit

RECREATED, UNKNOWN = "recreated", "unknown"


@dataclass(frozen=True, slots=True)
class IdentityChange:
    """A Delta source whose identity does not match the recorded one."""

    source: str
    kind: str  # recreated | unknown
    why: str = ""  # for unknown: which side lacks the id

    @property
    def message(self) -> str:
        if self.kind == RECREATED:
            return f"{self.source} was recreated (table id changed)"
        return f"the table id of {self.source} is unknown ({self.why})"


def identity_changes(
    recorded: Mapping[str, TableId], current: Mapping[str, TableId], versions: Mapping[str, Version]
) -> tuple[IdentityChange, ...]:
    """The Delta sources (those with a current int version in `versions`) whose current table
    id differs from the `recorded` one or is unknown on either side."""
    found = []
    for name in sorted(versions):
        if not isinstance(versions[name], int):
            continue  # not a Delta version: its change shows in the version itself
        old, new = recorded.get(name), current.get(name)
        if old is None:
            found.append(IdentityChange(name, UNKNOWN, "not recorded: built by an older mvlattice"))
        elif new is None:
            found.append(IdentityChange(name, UNKNOWN, "its Delta log does not say"))
        elif old != new:
            found.append(IdentityChange(name, RECREATED))
    return tuple(found)


def tile_change(record: TileRecord, last: Commit | None) -> str | None:
    """Why a tile's rows may not be what its `record` says, or None when its newest
    data-changing commit (`last`) is the one that wrote the record (tagged `commit_tag`).
    `last` None: that commit is no longer in the log, so who made it is unknown."""
    if record.source_ids is None:  # written before commits were tagged: cannot be told apart
        return "it was built by an older mvlattice (no source table ids, no commit tag)"
    if last is None:
        return "its newest data change can no longer be read from its Delta log"
    if last.user_metadata in (commit_tag(record), legacy_tag(record)):
        return None
    return f"version {last.version} of the table ({last.operation}) was not written by mvlattice"
