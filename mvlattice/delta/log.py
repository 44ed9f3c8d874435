"""Reading a Delta table's log: its latest version and table id, the actions of a commit, when
it happened, its newest data-changing commit.

The latest version of a path-based Delta table is the highest `_delta_log/<n>.json`: commit
files after the last checkpoint are never cleaned up, so the newest one is always there. When
the log cannot be listed that way, Spark's DESCRIBE HISTORY answers.

The table id (`metaData.id`) at a version is in that version's checksum file (`<n>.crc`, which
Delta writes with every commit), else in the newest commit up to it that carries `metaData`.
When neither is readable (no checksums, and the commit that set the metadata was cleaned up
behind a checkpoint), Spark's DESCRIBE DETAIL answers with the current id.
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING

from mvlattice.delta import storage
from mvlattice.delta.commits import Commit, parse_commit
from mvlattice.delta.newest import newest_commit as newest_local_commit
from mvlattice.settings import join_location
from mvlattice.sql.quote import path_identifier

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_COMMIT = re.compile(r"^(\d{20})\.json$")
# Commits read back before giving up (then: Spark for an id, "unknown" for the last writer).
_WALK_LIMIT = 100


def log_location(location: str) -> str:
    return join_location(location, "_delta_log")


def commit_location(location: str, version: int) -> str:
    return join_location(location, "_delta_log", f"{version:020d}.json")


def latest_version(spark: SparkSession | None, location: str) -> int | None:
    """The table's newest commit version; None when there is no Delta table there."""
    path = storage.local_name(location)
    if path is not None:
        found = newest_local_commit(os.path.join(path, "_delta_log"))
        if found is not None:
            return found.version
    try:
        names = storage.child_names(spark, log_location(location))
    except Exception:  # noqa: BLE001 - an unreadable location holds no table we can use
        names = ()
    version = newest_commit(names)
    if version is not None:
        return version
    if not names or spark is None:
        return None
    from mvlattice.delta.versions import table_version  # checkpoint-only logs: let Delta answer

    return table_version(spark, location)


def newest_commit(names: tuple[str, ...]) -> int | None:
    """The highest commit version among a log directory's file names."""
    return max((int(m.group(1)) for m in map(_COMMIT.match, names) if m), default=None)


def table_id(spark: SparkSession | None, location: str, version: int) -> str | None:
    """The table id at `version` — the version just read as the latest: the DESCRIBE DETAIL
    fallback gives the id of the table there now, which can only be a newer table than the one
    `version` was read from, and reads as changed next time, never as wrongly unchanged."""
    crc = checksum(spark, location, version)
    if crc is not None and crc["metadata"].get("id"):
        return str(crc["metadata"]["id"])
    for older in range(version, max(-1, version - _WALK_LIMIT), -1):
        actions = commit_actions(spark, location, older)
        if actions is None:
            break  # cleaned up behind a checkpoint: the checkpoint holds the metadata
        for action in actions:
            metadata = action.get("metaData")
            if isinstance(metadata, dict) and metadata.get("id"):
                return str(metadata["id"])
    if spark is None:
        return None
    from mvlattice.delta.versions import table_id as described_id

    return described_id(spark, f"delta.{path_identifier(location)}")


def last_data_commit(spark: SparkSession | None, location: str, version: int) -> Commit | None:
    """The newest commit up to `version` that changed the table's rows or schema, skipping
    commits that change no data (OPTIMIZE, VACUUM); None when it is no longer in the log."""
    for older in range(version, max(-1, version - _WALK_LIMIT), -1):
        actions = commit_actions(spark, location, older)
        if actions is None:
            return None
        commit = parse_commit(older, actions)
        if commit.changes_data:
            return commit
    return None


def commit_actions(spark: SparkSession | None, location: str, version: int) -> list[dict] | None:
    """The JSON actions of one commit; None when its file is gone (log cleanup)."""
    try:
        text = storage.read_text(spark, commit_location(location, version))
    except Exception:  # noqa: BLE001
        return None
    if text is None:
        return None
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def commits(
    spark: SparkSession | None, location: str, first: int, last: int
) -> tuple[Commit, ...] | None:
    """Commits `first`..`last` (inclusive), or None when any of them can no longer be read."""
    found = []
    for version in range(first, last + 1):
        actions = commit_actions(spark, location, version)
        if actions is None:
            return None
        found.append(parse_commit(version, actions))
    return tuple(found)


def commit_time(spark: SparkSession | None, location: str, version: int) -> float | None:
    """When `version` was committed (epoch seconds), from its commitInfo or its file."""
    for action in commit_actions(spark, location, version) or ():
        info = action.get("commitInfo")
        if info:
            stamp = info.get("inCommitTimestamp") or info.get("timestamp")
            if isinstance(stamp, int | float):
                return stamp / 1000.0
    try:
        return storage.modified_time(spark, commit_location(location, version))
    except Exception:  # noqa: BLE001
        return None


def checksum(spark: SparkSession | None, location: str, version: int) -> dict | None:
    """Delta's checksum file of a version (`<n>.crc`: table size, file count, metadata with
    the table properties) — read without a Spark job; None when absent or unreadable."""
    try:
        text = storage.read_text(
            spark, join_location(location, "_delta_log", f"{version:020d}.crc")
        )
        data = json.loads(text) if text else None
    except Exception:  # noqa: BLE001 - not written yet, or not ours to read: ask Spark
        return None
    return data if isinstance(data, dict) and isinstance(data.get("metadata"), dict) else None
