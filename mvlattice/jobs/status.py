"""The words the catalog and the builder report in: a target's status and a build's result.

Their values are the JSON contract (the HTTP API, `--json` output, the state store's rows).
"""

from __future__ import annotations

from enum import StrEnum


class TileStatus(StrEnum):
    """A target's status in the catalog (see `freshness`)."""

    FRESH = "fresh"
    STALE = "stale"  # built, but behind its sources
    BUILDING = "building"  # a build is running (its lease is live)
    FAILED = "failed"  # the last attempt failed
    MISSING = "missing"  # never built


class BuildStatus(StrEnum):
    """What one build of a target did."""

    BUILT = "built"
    REFRESHED = "refreshed"
    SKIPPED = "skipped"  # fresh already
    BUSY = "busy"  # another builder holds it
    FAILED = "failed"
    PLANNED = "planned"  # refresh --dry-run: what a build would do, nothing built


class RefreshPath(StrEnum):
    """How a target's rows were (or are to be) brought up to date."""

    NONE = "none"  # fresh: nothing to do
    FULL = "full"  # from the star (or the materialization's SQL)
    ROLLUP = "rollup"  # from a finer tile
    INCREMENTAL = "incremental"  # the appended rows, merged in
    PARTITIONS = "partitions"  # the fact table's touched partitions recomputed, others kept
