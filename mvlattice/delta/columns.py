"""Column names of a source table without starting Spark: declared, or from the Delta log."""

from __future__ import annotations

import json
from pathlib import Path


def delta_log_columns(location: str) -> tuple[str, ...] | None:
    """Columns from the newest `metaData` action in a local Delta log; None if not readable.

    Only local paths are read here; remote tables (s3a://, …) and logs whose JSON commits have
    been cleaned up after a checkpoint are answered by Spark instead.
    """
    if "://" in location and not location.startswith("file:"):
        return None
    log = Path(location.removeprefix("file:")) / "_delta_log"
    if not log.is_dir():
        return None
    for commit in sorted(log.glob("*.json"), reverse=True):
        schema = _schema_in(commit)
        if schema is not None:
            return tuple(f["name"] for f in schema.get("fields", ()))
    return None


def is_local_delta_table(location: str) -> bool:
    if "://" in location and not location.startswith("file:"):
        return False
    return (Path(location.removeprefix("file:")) / "_delta_log").is_dir()


def _schema_in(commit: Path) -> dict | None:
    try:
        lines = commit.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        if '"metaData"' not in line:
            continue
        action = json.loads(line).get("metaData")
        if action and action.get("schemaString"):
            return json.loads(action["schemaString"])
    return None
