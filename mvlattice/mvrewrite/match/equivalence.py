"""Step 3, equijoin subsumption (GL01 §3.1.2).

Every equivalence class of the view must lie inside one class of the query: the view may only
require equalities the query requires too. Query classes the view splits into several parts
need compensating equalities between the parts.
"""

from __future__ import annotations

from dataclasses import replace

from mvlattice.mvrewrite.match.atoms import text_columns, typed
from mvlattice.mvrewrite.match.attempt import (
    PREDICATE_NOT_IMPLIED,
    Attempt,
    EqualityCompensation,
    Rejection,
)
from mvlattice.mvrewrite.match.predicates import Predicates, analyze
from mvlattice.sql import ir


def check(attempt: Attempt) -> Attempt | Rejection:
    query_conjuncts = attempt.query.conjuncts + attempt.extra_equalities
    view_conjuncts = tuple(attempt.to_query_space(c) for c in attempt.view_block.conjuncts)
    type_of = typed((*attempt.query.tables, *attempt.extra), attempt.keys.type_of)
    query = analyze(query_conjuncts, text_columns(query_conjuncts, type_of))
    view = analyze(view_conjuncts, text_columns(view_conjuncts, type_of))
    for group in view.classes.groups:
        outside = [c for c in group if query.classes.rep(c) != query.classes.rep(group[0])]
        if outside:
            return Rejection(
                PREDICATE_NOT_IMPLIED,
                f"the view keeps only rows where {group[0]} = {outside[0]}; "
                "the query does not require that",
            )
    return replace(
        attempt,
        query_preds=query,
        view_preds=view,
        equalities=_compensations(query, view),
    )


def _compensations(query: Predicates, view: Predicates) -> tuple[EqualityCompensation, ...]:
    out = []
    for group in query.classes.groups:
        parts: dict[ir.Column, list[ir.Column]] = {}
        for column in group:
            parts.setdefault(view.classes.rep(column), []).append(column)
        if len(parts) > 1:
            out.append(EqualityCompensation(tuple(tuple(p) for p in parts.values())))
    return tuple(out)
