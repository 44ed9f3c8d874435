"""Matching one query block against one view: the steps, in the order GL01 §3 applies them.

Each step is a pure function Attempt -> Attempt | Rejection; the first rejection ends the
attempt. A table occurring several times gives several mappings; each is tried in turn.
"""

from __future__ import annotations

from mvlattice.mvrewrite.match import (
    cardinality,
    equivalence,
    outer_joins,
    output_mapping,
    range_subsumption,
    residual_subsumption,
    rollup,
    table_mapping,
    union_compensation,
)
from mvlattice.mvrewrite.match.attempt import VIEW_UNSUPPORTED, Attempt, Rejection, Step
from mvlattice.mvrewrite.match.keys import Keys
from mvlattice.mvrewrite.views import View
from mvlattice.sql.spjg import Spjg

STEPS: tuple[Step, ...] = (
    outer_joins.check,  # outer joins: the same, inner from LEFT, or lossless (beyond GL01)
    cardinality.check,  # query-partial: extra view tables must be lossless joins
    equivalence.check,  # §3.1.2 equijoin subsumption
    range_subsumption.check,  # §3.1.2 range subsumption (and the union split)
    residual_subsumption.check,  # §3.1.2 residual subsumption
    output_mapping.check,  # §3.1.3 compensations, keys and outputs from view columns
    rollup.check,  # §3.2 grouping and aggregates
    union_compensation.check,  # Calcite's union rewriting
    outer_joins.finish,  # drop the rows of view LEFT joins the query has as inner joins
)


def match(query: Spjg, view: View, keys: Keys) -> Attempt | Rejection:
    """The first mapping that passes every step, else the rejection that got furthest."""
    problem = _unusable(view)
    if problem is not None:
        return problem
    attempts = table_mapping.mappings(query, view, keys)
    if isinstance(attempts, Rejection):
        return attempts
    furthest: tuple[int, Rejection] | None = None
    for attempt in attempts:
        result = _run(attempt)
        if isinstance(result, Attempt):
            return result
        if furthest is None or result[0] > furthest[0]:
            furthest = result
    assert furthest is not None
    return furthest[1]


def _run(attempt: Attempt) -> Attempt | tuple[int, Rejection]:
    for position, step in enumerate(STEPS):
        result = step(attempt)
        if isinstance(result, Rejection):
            return position, result
        attempt = result
    return attempt


def _unusable(view: View) -> Rejection | None:
    block = view.block
    if block is None:
        return Rejection(VIEW_UNSUPPORTED, f"the view's SQL is not matched: {view.problem}")
    if block.having or block.limit is not None or block.offset or block.distinct:
        return Rejection(
            VIEW_UNSUPPORTED,
            "the view's SQL has HAVING, LIMIT or DISTINCT over groups; it is never matched",
        )
    return None
