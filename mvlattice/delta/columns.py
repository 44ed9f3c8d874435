"""Column names and types of a source table without starting Spark: from its Delta log, read
by delta-rs (`reader.schema`)."""

from __future__ import annotations

import json
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
    return {str(f["name"]): _declared(f) for f in fields if isinstance(f.get("type"), str)}


def _declared(field: dict) -> str:
    """The type as declared: Delta stores CHAR(n)/VARCHAR(n) and collated strings as `string`
    with the declaration in the field's metadata, and they do not compare as plain strings
    (CHAR pads, a collation may ignore case)."""
    kind = str(field["type"])
    metadata = field.get("metadata") or {}
    if kind != "string" or not isinstance(metadata, dict):
        return kind
    declared = metadata.get("__CHAR_VARCHAR_TYPE_STRING")
    if isinstance(declared, str):
        return declared.lower()
    collations = metadata.get("__COLLATIONS")
    if isinstance(collations, str):  # delta-rs hands nested metadata back as JSON text
        collations = _json(collations)
    if isinstance(collations, dict):
        names = {str(c).split(".")[-1].upper() for c in collations.values()}
        if names - {"UTF8_BINARY"}:
            return f"string collate {sorted(names)[0].lower()}"
    return kind


def is_local_delta_table(location: str) -> bool:
    if "://" in location and not location.startswith("file:"):
        return False
    return (Path(location.removeprefix("file:")) / "_delta_log").is_dir()


def _json(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return {"unknown": text}  # unreadable: a collation all the same
