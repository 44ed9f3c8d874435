"""Step 5, residual subsumption (GL01 §3.1.2).

Predicates that are neither column equalities nor ranges are compared in canonical form under
the query's equivalence classes: each residual predicate of the view must also be one of the
query's; the query's residual predicates the view lacks are applied to the view.
"""

from __future__ import annotations

from dataclasses import replace

from mvlattice.mvrewrite.match.attempt import PREDICATE_NOT_IMPLIED, Attempt, Rejection
from mvlattice.sql.canon import canonical
from mvlattice.sql.to_sql import sql_of


def check(attempt: Attempt) -> Attempt | Rejection:
    query, view = attempt.query_preds, attempt.view_preds
    assert query is not None and view is not None
    wanted = set(query.residuals)
    kept = {canonical(r, query.classes) for r in view.residuals}
    for residual in sorted(kept - wanted, key=repr):
        return Rejection(
            PREDICATE_NOT_IMPLIED,
            f"the view keeps only rows where {sql_of(residual)}; the query does not require that",
        )
    extra = tuple(r for r in query.residuals if r not in kept)
    return replace(attempt, compensation=attempt.compensation + extra)
