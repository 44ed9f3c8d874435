"""One Delta commit, read from its JSON actions: what it added, removed and who wrote it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import unquote

# Actions an append may carry besides `add`: its commit info and idempotent-write markers.
HARMLESS = frozenset({"commitInfo", "txn"})


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
    user_metadata: str | None = None  # commitInfo.userMetadata: who wrote it, if they said
    # False only when the commit leaves rows and schema alone: every add/remove says
    # dataChange=false and nothing else but commitInfo (OPTIMIZE, VACUUM's commits).
    changes_data: bool = True

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
    user_metadata, changes_data = None, False
    for action in actions:
        for kind, body in action.items():
            changes_data = changes_data or _changes_data(kind, body)
            if kind == "commitInfo":
                operation = str(body.get("operation", operation))
                tag = body.get("userMetadata")
                user_metadata = None if tag is None else str(tag)
            elif kind == "add":
                if body.get("dataChange", True) is False or body.get("deletionVector"):
                    unsafe += 1
                values = body.get("partitionValues") or {}
                added.append(AddedFile(unquote(str(body["path"])), tuple(sorted(values.items()))))
            elif kind == "remove":
                removes += 1
            elif kind not in HARMLESS:
                other.append(kind)
    kinds = tuple(dict.fromkeys(other))
    return Commit(
        version, operation, tuple(added), removes, kinds, unsafe, user_metadata, changes_data
    )


def _changes_data(kind: str, body: Mapping) -> bool:
    """Whether one action may change the rows or the schema (see `Commit.changes_data`)."""
    if kind in ("add", "remove"):
        return body.get("dataChange", True) is not False
    return kind != "commitInfo"
