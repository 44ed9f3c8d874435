"""Why a query goes to Spark rather than the tile engine."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Refusal:
    """The tile engine does not answer this query; `reason` says why, for `explain`."""

    reason: str
