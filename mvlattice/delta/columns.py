"""Column names and types of a source table without starting Spark: from its Delta log, read
by delta-rs (`reader.schema`)."""

from __future__ import annotations

from pathlib import Path

from mvlattice.delta import reader


def delta_log_columns(location: str) -> tuple[str, ...] | None:
    """Columns of the local Delta table at `location`, in order; None if not readable here.

    Only local paths are read here; remote tables (s3a://, …) and logs delta-rs cannot read
    are answered by Spark instead.
    """
    found = reader.schema(location)
    if found is None:
        return None
    return tuple(str(f["name"]) for f in found.get("fields", ()))


def delta_log_types(location: str) -> dict[str, str]:
    """Column -> Spark type name (`integer`, `decimal(10,2)`, …) of the local Delta table at
    `location`, for columns of primitive types; empty when not readable here."""
    found = reader.schema(location)
    fields = found.get("fields", ()) if found is not None else ()
    return {str(f["name"]): f["type"] for f in fields if isinstance(f.get("type"), str)}


def is_local_delta_table(location: str) -> bool:
    if "://" in location and not location.startswith("file:"):
        return False
    return (Path(location.removeprefix("file:")) / "_delta_log").is_dir()
