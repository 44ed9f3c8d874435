"""Where things live when the caller does not say: the warehouse and the Spark master."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_WAREHOUSE = "warehouse"


def resolve_warehouse(explicit: str | os.PathLike[str] | None = None) -> str:
    """--warehouse, else $MVLATTICE_WAREHOUSE, else ./warehouse. Local paths become absolute."""
    value = os.fspath(explicit) if explicit else os.environ.get("MVLATTICE_WAREHOUSE")
    value = value or DEFAULT_WAREHOUSE
    if is_uri(value):
        return value.rstrip("/")
    return str(Path(value).expanduser().resolve())


def is_uri(location: str) -> bool:
    return "://" in location


def join_location(base: str, *parts: str) -> str:
    """Join path parts onto a local path or a URI (s3a://bucket/x) without mangling the scheme."""
    if is_uri(base):
        return "/".join([base.rstrip("/"), *(p.strip("/") for p in parts)])
    return str(Path(base, *parts))


def under(base: str, location: str) -> str:
    """A model location: absolute paths and URIs stay, relative ones are under `base`."""
    if is_uri(location) or Path(location).expanduser().is_absolute():
        return location if is_uri(location) else str(Path(location).expanduser())
    return join_location(base, location)
