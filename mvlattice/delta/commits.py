"""One Delta commit, read from its JSON actions: what it added, removed and who wrote it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote

# Actions an append may carry besides `add`: its commit info and idempotent-write markers.
HARMLESS = frozenset({"commitInfo", "txn"})


# A data file's partition values, by partition column, sorted by column name.
Partition = tuple[tuple[str, str | None], ...]


@dataclass(frozen=True, slots=True)
class AddedFile:
    """A data file an `add` action brought: its path (relative to the table, decoded) and the
    partition values of its rows."""

    path: str
    partition: tuple[tuple[str, str | None], ...] = ()
    rows: int | None = None  # numRecords of its statistics, when the writer recorded them

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
    # Rows the commit adds, deletes or updates (an update twice: old and new values), from its
    # operationMetrics; None when the writer did not say.
    rows_changed: int | None = None
    # The partition values of every file it adds (and of its change files): partitions whose
    # rows it may have changed. `()` for an unpartitioned table's files.
    partitions: frozenset[Partition] = field(default=frozenset(), compare=False)
    # Each file it removes, with the partition values its `remove` action gives — which may
    # lack some: Delta leaves NULL values (and, in old logs, all of them) out of removes.
    removed: tuple[tuple[str, Partition], ...] = field(default=(), compare=False)

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
    rows_changed: int | None = None
    partitions: set[Partition] = set()
    removed: list[tuple[str, Partition]] = []
    for action in actions:
        for kind, body in action.items():
            changes_data = changes_data or _changes_data(kind, body)
            if kind in ("add", "cdc") and isinstance(body, Mapping):
                partitions.add(_partition(body))
            elif kind == "remove" and isinstance(body, Mapping):
                removed.append((unquote(str(body.get("path", ""))), _partition(body)))
            if kind == "commitInfo":
                operation = str(body.get("operation", operation))
                tag = body.get("userMetadata")
                user_metadata = None if tag is None else str(tag)
                rows_changed = _rows_changed(body.get("operationMetrics"))
            elif kind == "add":
                if body.get("dataChange", True) is False or body.get("deletionVector"):
                    unsafe += 1
                values = body.get("partitionValues") or {}
                added.append(
                    AddedFile(
                        unquote(str(body["path"])),
                        tuple(sorted(values.items())),
                        _records(body.get("stats")),
                    )
                )
            elif kind == "remove":
                removes += 1
            elif kind not in HARMLESS:
                other.append(kind)
    kinds = tuple(dict.fromkeys(other))
    return Commit(
        version,
        operation,
        tuple(added),
        removes,
        kinds,
        unsafe,
        user_metadata,
        changes_data,
        rows_changed,
        frozenset(partitions),
        tuple(removed),
    )


def _partition(body: Mapping) -> Partition:
    values = body.get("partitionValues") or {}
    return tuple(sorted((str(k), None if v is None else str(v)) for k, v in values.items()))


# operationMetrics that count changed rows, and how many feed rows each row makes.
_CHANGE_METRICS = {
    "numOutputRows": 1,  # WRITE / append (no copies)
    "numDeletedRows": 1,
    "numUpdatedRows": 2,
    "numTargetRowsInserted": 1,
    "numTargetRowsDeleted": 1,
    "numTargetRowsUpdated": 2,
}


def _rows_changed(metrics: object) -> int | None:
    """Rows an operation changed, from its metrics (strings of integers); None: not said."""
    if not isinstance(metrics, Mapping):
        return None
    if "numCopiedRows" in metrics or "numTargetRowsCopied" in metrics:
        metrics = {k: v for k, v in metrics.items() if k != "numOutputRows"}
    total, seen = 0, False
    for name, weight in _CHANGE_METRICS.items():
        value = metrics.get(name)
        if value is not None and str(value).isdigit():
            total, seen = total + weight * int(value), True
    return total if seen else None


def _records(stats: object) -> int | None:
    """numRecords of an add's statistics (a JSON string), when present and readable."""
    import json

    if not isinstance(stats, str):
        return None
    try:
        value = json.loads(stats).get("numRecords")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, int) else None


def _changes_data(kind: str, body: Mapping) -> bool:
    """Whether one action may change the rows or the schema (see `Commit.changes_data`)."""
    if kind in ("add", "remove"):
        return body.get("dataChange", True) is not False
    return kind != "commitInfo"
