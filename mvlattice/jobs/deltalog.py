"""Reading a Delta table's log: its latest version, the actions of a commit, when it happened.

The latest version of a path-based Delta table is the highest `_delta_log/<n>.json`: commit
files after the last checkpoint are never cleaned up, so the newest one is always there. When
the log cannot be listed that way, Spark's DESCRIBE HISTORY answers.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from mvlattice.jobs import storage
from mvlattice.jobs.changes import Commit, parse_commit
from mvlattice.settings import join_location

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_COMMIT = re.compile(r"^(\d{20})\.json$")


def log_location(location: str) -> str:
    return join_location(location, "_delta_log")


def commit_location(location: str, version: int) -> str:
    return join_location(location, "_delta_log", f"{version:020d}.json")


def is_delta(spark: SparkSession | None, location: str) -> bool:
    return latest_version(spark, location) is not None


def latest_version(spark: SparkSession | None, location: str) -> int | None:
    """The table's newest commit version; None when there is no Delta table there."""
    try:
        names = storage.child_names(spark, log_location(location))
    except Exception:  # noqa: BLE001 - an unreadable location holds no table we can use
        names = ()
    versions = [int(m.group(1)) for m in map(_COMMIT.match, names) if m]
    if versions:
        return max(versions)
    if not names or spark is None:
        return None
    from mvlattice.delta import table_version  # checkpoint-only logs: let Delta answer

    return table_version(spark, location)


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
