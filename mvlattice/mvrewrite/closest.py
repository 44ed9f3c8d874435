"""Why a query was not rewritten, in one explanation: the block's own reason when it has one,
else the reason of the view that got furthest in matching (the latest step that failed)."""

from __future__ import annotations

from mvlattice.mvrewrite.match.attempt import Reason
from mvlattice.mvrewrite.rewriter import NOT_REWRITABLE, Explanation, RewriteResult

# Furthest first: a view that failed at rollup had passed the join and the filter.
CLOSEST = (
    Reason.CANNOT_ROLL_UP,
    Reason.MISSING_COLUMN,
    Reason.PREDICATE_NOT_IMPLIED,
    Reason.EXTRA_TABLE,
    Reason.OUTER_JOIN,
    Reason.VIEW_UNSUPPORTED,
    Reason.UNSAFE,
    Reason.UNSUPPORTED,
    Reason.STALE,
    Reason.NOT_AVAILABLE,
    Reason.TABLES_NOT_CONTAINED,
)


def closest_miss(result: RewriteResult) -> Explanation | None:
    """The explanation that says best why `result` was not rewritten (None: no view at all)."""
    block = [e for e in result.explain if e.outcome == NOT_REWRITABLE and e.reason]
    if block:
        return block[0]
    misses = [e for e in result.explain if e.reason]
    if not misses:
        return None
    return min(misses, key=_closeness)


def _closeness(explanation: Explanation) -> tuple[int, str]:
    reason = explanation.reason
    rank = CLOSEST.index(reason) if reason in CLOSEST else len(CLOSEST)  # a code CLOSEST lacks
    return rank, str(reason)
