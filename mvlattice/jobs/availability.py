"""The narrow interface through which the rewriter learns whether a view's table may be read.

The jobs package implements it from the tile catalog (built? fresh? within maxStaleness?); tests
use `AllUsable` or a dict. The rewriter never imports `mvlattice.jobs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol


class ViewCode(StrEnum):
    """Whether and why a view's table may be read (the values appear in explanations)."""

    FRESH = "FRESH"
    STALE_ACCEPTED = "STALE_ACCEPTED"  # stale, but within the target's maxStaleness
    STALE = "STALE"
    MISSING = "MISSING"
    BUILDING = "BUILDING"
    FAILED = "FAILED"


@dataclass(frozen=True, slots=True)
class ViewState:
    usable: bool
    code: ViewCode
    message: str = ""


class Availability(Protocol):
    def state(self, table: str) -> ViewState:
        """State of the view stored in `table` (its qualified name, e.g. mvlattice.star__…)."""
        ...


class AllUsable:
    """Every view is readable; for tests and for callers that manage freshness themselves."""

    def state(self, table: str) -> ViewState:
        return ViewState(True, ViewCode.FRESH)
