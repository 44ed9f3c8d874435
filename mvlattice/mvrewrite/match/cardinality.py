"""Step 2, query-partial rewriting (Calcite's compensatePartial, beyond GL01 §3.1).

A view may join tables the query does not read when each such join only adds columns: an
equi-join on all columns of a foreign key that is never NULL to a unique key of the added
table. Then every row of the rest of the view finds exactly one partner, and the query may be
thought of as containing the same join; its equalities join the query's predicates.
"""

from __future__ import annotations

from dataclasses import replace

from mvlattice.mvrewrite.match.attempt import EXTRA_TABLE, Attempt, Rejection
from mvlattice.mvrewrite.match.keys import ForeignKey
from mvlattice.mvrewrite.match.predicates import analyze
from mvlattice.sql import ir
from mvlattice.sql.canon import Classes
from mvlattice.sql.spjg import TableRef


def check(attempt: Attempt) -> Attempt | Rejection:
    if not attempt.extra:
        return attempt
    view_space = {TableRef(q, attempt.view_block.table_of(v)) for v, q in attempt.mapping}
    covered = {r.rel for r in view_space} - {e.rel for e in attempt.extra}
    tables = {r.rel: r.table for r in view_space}
    classes = analyze(attempt.to_query_space(c) for c in attempt.view_block.conjuncts).classes
    pending = list(attempt.extra)
    equalities: list[ir.Expr] = []
    while pending:
        step = _next_lossless(attempt, pending, covered, tables, classes)
        if step is None:
            return _rejection(pending[0])
        added, found = step
        pending.remove(added)
        covered.add(added.rel)
        equalities.extend(found)
    return replace(attempt, extra_equalities=tuple(equalities))


def _next_lossless(
    attempt: Attempt,
    pending: list[TableRef],
    covered: set[str],
    tables: dict[str, str],
    classes: Classes,
) -> tuple[TableRef, list[ir.Expr]] | None:
    for added in pending:
        for source in sorted(covered):
            for fk in attempt.keys.references(tables[source], added.table):
                if _lossless(attempt, fk, source, added, classes):
                    return added, _equalities(fk, source, added)
    return None


def _lossless(
    attempt: Attempt, fk: ForeignKey, source: str, added: TableRef, classes: Classes
) -> bool:
    keys = attempt.keys
    if not keys.never_null(fk) or not keys.is_unique(added.table, frozenset(fk.ref_columns)):
        return False
    return all(
        classes.rep(ir.Column(source, c)) == classes.rep(ir.Column(added.rel, r))
        for c, r in zip(fk.columns, fk.ref_columns, strict=True)
    )


def _equalities(fk: ForeignKey, source: str, added: TableRef) -> list[ir.Expr]:
    return [
        ir.Compare("=", ir.Column(source, c), ir.Column(added.rel, r))
        for c, r in zip(fk.columns, fk.ref_columns, strict=True)
    ]


def _rejection(table: TableRef) -> Rejection:
    return Rejection(
        EXTRA_TABLE,
        f"the view also joins {table.table}, which the query does not read, and that join is "
        "not on a non-NULL foreign key to a unique key, so it may drop or repeat rows "
        "(declare the keys in the model if they hold)",
    )
