"""Step 5, residual subsumption (GL01 §3.1.2).

Predicates that are neither column equalities nor ranges are compared in canonical form under
the query's equivalence classes: each residual predicate of the view must also be one of the
query's; the query's residual predicates the view lacks are applied to the view.

A disjunction is also compared by implication (`implication`): a view's disjunction the
query's predicates imply is no obstacle (with a union split, only the rows the view branch
reads need to imply it), and a query's disjunction the view's predicates imply needs no
compensation. A normal form beyond its cap makes the view UNSUPPORTED for the block.
"""

from __future__ import annotations

from dataclasses import replace

from mvlattice.mvrewrite.match import implication
from mvlattice.mvrewrite.match.attempt import (
    PREDICATE_NOT_IMPLIED,
    UNSUPPORTED,
    Attempt,
    Rejection,
)
from mvlattice.mvrewrite.match.normal_form import CAP, TooLarge, compound
from mvlattice.mvrewrite.match.predicates import Predicates
from mvlattice.sql import ir
from mvlattice.sql.canon import canonical
from mvlattice.sql.to_sql import sql_of


def check(attempt: Attempt) -> Attempt | Rejection:
    query, view = attempt.query_preds, attempt.view_preds
    assert query is not None and view is not None
    wanted = set(query.residuals)
    kept = {canonical(r, query.classes) for r in view.residuals}
    for residual in sorted(kept - wanted, key=repr):
        proven = _query_implies(attempt, query, residual)
        if proven is not True:
            return proven or Rejection(
                PREDICATE_NOT_IMPLIED,
                f"the view keeps only rows where {sql_of(residual)}; "
                "the query does not require that",
            )
    extra = tuple(
        r for r in query.residuals if r not in kept and not _view_implies(query, view, kept, r)
    )
    return replace(attempt, compensation=attempt.compensation + extra)


def _query_implies(attempt: Attempt, query: Predicates, residual: ir.Expr) -> bool | Rejection:
    if not compound(residual) and not any(compound(r) for r in query.residuals):
        return False  # an opaque predicate is implied only by itself
    split = attempt.split
    narrowed = () if split is None else (((split.column, split.kind), split.view_range),)
    try:
        return implication.implies(query, residual, narrowed)
    except TooLarge:
        return Rejection(
            UNSUPPORTED,
            f"the view keeps only rows where {sql_of(residual)}; whether the query implies "
            f"that is not decided: a disjunctive normal form would exceed {CAP} disjuncts "
            "(or their comparison the work allowed)",
        )


def _view_implies(
    query: Predicates, view: Predicates, kept: set[ir.Expr], residual: ir.Expr
) -> bool:
    """Whether the view's rows all pass the query's `residual` (no compensation needed)."""
    if not compound(residual) and not any(compound(r) for r in kept):
        return False
    held = Predicates(
        query.classes, view.rekeyed(query.classes).ranges, tuple(kept), text=query.text
    )
    try:
        return implication.implies(held, residual)
    except TooLarge:
        return False  # compensating with the query's own predicate is always right
