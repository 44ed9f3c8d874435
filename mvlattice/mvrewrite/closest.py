"""Why a query was not rewritten, in one explanation, and the nearest view to answering it.

The nearest view is named by one rule wherever it is shown — `mvlattice rewrite`, `advise` (CLI
and `GET /v1/advice`) and the status page's Queries — so they name the same view for the same
explanations: the view that got furthest along GL01's checks (§3), by its reason in `NEAREST`;
ties go to the first in the rewriter's order (the catalog's order of views). The rule reads the
explanations alone, as the Queries page has nothing else: how many columns a view lacks, or its
rows, are not in them (a rejection names the first thing missing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from mvlattice.mvrewrite.match.attempt import Reason
from mvlattice.mvrewrite.rewriter import MATCHED, NOT_REWRITABLE, Explanation, RewriteResult

# Nearest first. A view that matched (lost to a cheaper one, or only its data is unreadable:
# stale, or not built) needs no change; one that failed at rollup had every column and passed
# the join and the filter (it lacks a measure); one missing a column passed the join and the
# filter; and so back to a view over other tables. A code this lacks is furthest.
NEAREST = (
    Reason.NOT_CHOSEN,
    Reason.STALE,
    Reason.NOT_AVAILABLE,
    Reason.CANNOT_ROLL_UP,
    Reason.MISSING_COLUMN,
    Reason.PREDICATE_NOT_IMPLIED,
    Reason.EXTRA_TABLE,
    Reason.OUTER_JOIN,
    Reason.UNSAFE,
    Reason.UNSUPPORTED,
    Reason.TABLES_NOT_CONTAINED,
    Reason.VIEW_UNSUPPORTED,
)

# An explanation as the rewriter returns it, or as JSON (the query log, the Queries page).
E = TypeVar("E", Explanation, Mapping[str, Any])


def nearest_first(explain: Iterable[E]) -> list[E]:
    """The explanations about a view, nearest first (ties keep the rewriter's order).

    >>> far = {"view": "a", "outcome": "rejected", "reason": "TABLES_NOT_CONTAINED"}
    >>> near = {"view": "b", "outcome": "rejected", "reason": "MISSING_COLUMN"}
    >>> [e["view"] for e in nearest_first([far, {"view": None}, near])]
    ['b', 'a']
    """
    return sorted((e for e in explain if _field(e, "view")), key=nearness)


def nearest_view(explain: Iterable[E]) -> E | None:
    """The explanation of the view nearest to answering the query (None: no view at all)."""
    ranked = nearest_first(explain)
    return ranked[0] if ranked else None


def nearness(explanation: Explanation | Mapping[str, Any]) -> int:
    """The place of an explanation's reason in `NEAREST` (lower is nearer)."""
    reason = str(_field(explanation, "reason") or "")
    if _field(explanation, "outcome") == MATCHED:
        reason = Reason.NOT_CHOSEN  # matched: only a cheaper view beat it
    return NEAREST.index(Reason(reason)) if reason in NEAREST else len(NEAREST)


def closest_miss(result: RewriteResult) -> Explanation | None:
    """The explanation that says best why `result` was not rewritten: the block's own reason,
    else the nearest view's, else any reason (None: no view at all)."""
    block = [e for e in result.explain if e.outcome == NOT_REWRITABLE and e.reason]
    if block:
        return block[0]
    near = nearest_view(e for e in result.explain if e.reason)
    return near or next((e for e in result.explain if e.reason), None)


def _field(explanation: Explanation | Mapping[str, Any], name: str) -> Any:
    if isinstance(explanation, Mapping):
        return explanation.get(name)
    return getattr(explanation, name)


def miss_reason(result: RewriteResult) -> str:
    """One line saying why `result` (rewritten with explanations) was not rewritten."""
    closest = closest_miss(result)
    if closest is None:
        return "no tile or materialized view is built yet (`mvlattice materialize` builds them)"
    if closest.view is None:
        return f"{closest.reason}: {closest.message}"
    return f"the closest view, {closest.view}: {closest.reason}: {closest.message}"
