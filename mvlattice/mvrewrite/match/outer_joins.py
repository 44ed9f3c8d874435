"""Step 0, outer joins (beyond GL01, which matches inner joins only).

Both blocks are read as `sql.outer_joins` describes: filters over inner tables with LEFT joins
onto single tables (or one FULL join of two). Then, per table mapping:

- A LEFT join every row of which finds exactly one match is an inner join: its ON is exactly
  a never-NULL foreign key of an inner-joined table to a unique key (the same declared facts
  query-partial rewriting trusts). So an outer-join query may read an inner-join view.
- Each outer join of the query must be one of the view's: same kind, same NULL-supplying
  table, the same ON conditions. ON conditions are not filters, so nothing short of equal
  will do; the view's WHERE, applied after its joins like the query's, is compensated as
  usual. FULL joins are only ever matched this way.
- A LEFT join of the view onto a table the query inner-joins answers it once the rows the
  join added (no match: every column of the table NULL) are filtered out again. That takes a
  column of the table that is NULL in those rows only: one the ON compares (a match makes it
  non-NULL), one declared NOT NULL, or one the query's own filters require non-NULL (the
  query drops those rows anyway). It must be a view output *as is* — never a column the query
  holds equal to it, which the view's added rows do not. Such a view, with that filter, is
  exactly its inner-join version, which the other steps then match (its ON joins its WHERE).

Any other outer join — onto a table the query lacks or joins back, one the query has but the
view lacks — is not matched. A query with outer joins is never answered by a union with the
base tables (the base branch is built from inner joins).
"""

from __future__ import annotations

from dataclasses import replace

from mvlattice.mvrewrite.match.attempt import (
    MISSING_COLUMN,
    OUTER_JOIN,
    PREDICATE_NOT_IMPLIED,
    Attempt,
    Rejection,
)
from mvlattice.mvrewrite.match.keys import Keys
from mvlattice.sql import ir
from mvlattice.sql.canon import Classes, canonical
from mvlattice.sql.outer_joins import FULL, LEFT, OuterJoin, non_null_columns
from mvlattice.sql.spjg import Spjg
from mvlattice.sql.to_sql import sql_of

NO_CLASSES = Classes()

JoinKey = tuple[str, frozenset[str], frozenset[ir.Expr]]
Joined = tuple[str, frozenset[str]]  # an outer join's kind and NULL-supplying tables


def check(attempt: Attempt) -> Attempt | Rejection:
    query = lossless(attempt.query, attempt.keys)
    view = lossless(attempt.view_block, attempt.keys)
    if not query.outer and not view.outer:
        return _with(attempt, query, view)
    mapped = {_key(_to_query_space(attempt, j)): j for j in view.outer}
    for join in query.outer:
        if _key(join) not in mapped:
            return Rejection(OUTER_JOIN, f"the view lacks the query's {_describe(join)}")
    wanted = {_key(j) for j in query.outer}
    filters: list[ir.Expr] = []
    for key, join in mapped.items():
        if key in wanted:
            continue
        found = _inner_from_left(attempt, query, view, join)
        if isinstance(found, Rejection):
            return found
        view = replace(
            view,
            outer=tuple(j for j in view.outer if j != join),
            conjuncts=view.conjuncts + join.on,
        )
        filters.append(found)
    return replace(_with(attempt, query, view), outer_filters=tuple(filters))


def finish(attempt: Attempt) -> Attempt | Rejection:
    """Last step: the filters dropping the rows of the view's LEFT joins the query lacks."""
    if attempt.union is not None and attempt.query.outer:
        return Rejection(
            PREDICATE_NOT_IMPLIED,
            "the view lacks rows of the query's outer join; they are not read from the base "
            "tables (the other branch would be an inner join)",
        )
    if not attempt.outer_filters:
        return attempt
    return replace(attempt, filters=attempt.filters + attempt.outer_filters)


def lossless(block: Spjg, keys: Keys) -> Spjg:
    """`block` with each LEFT join that keeps every row exactly once made inner."""
    for join in block.outer:
        if join.kind == LEFT and _is_lossless(block, keys, join):
            inner = replace(
                block,
                outer=tuple(j for j in block.outer if j != join),
                conjuncts=block.conjuncts + join.on,
            )
            return lossless(inner, keys)
    return block


def as_inner(block: Spjg) -> Spjg | None:
    """`block` with every LEFT join made inner, as an inner-join query matches it (None with a
    FULL join, which only the same FULL join matches)."""
    if any(j.kind == FULL for j in block.outer):
        return None
    on = tuple(c for j in block.outer for c in j.on)
    return replace(block, outer=(), conjuncts=block.conjuncts + on)


def outer_tables(block: Spjg) -> frozenset[Joined]:
    """What a view must hold for each of `block`'s outer joins: the kind and the tables."""
    return frozenset(
        (j.kind, frozenset(block.table_of(r) for r in j.null_supplying)) for j in block.outer
    )


def _is_lossless(block: Spjg, keys: Keys, join: OuterJoin) -> bool:
    nullable = {r for j in block.outer for r in j.null_supplying}
    table = block.table_of(join.rel)
    on = frozenset(canonical(c, NO_CLASSES) for c in join.on)
    for source in block.rels:
        if source in nullable:  # its foreign key is NULL in the rows its own join added
            continue
        for fk in keys.references(block.table_of(source), table):
            if not keys.never_null(fk) or not keys.is_unique(table, frozenset(fk.ref_columns)):
                continue
            equalities = (
                ir.Compare("=", ir.Column(source, c), ir.Column(join.rel, r))
                for c, r in zip(fk.columns, fk.ref_columns, strict=True)
            )
            if on == frozenset(canonical(e, NO_CLASSES) for e in equalities):
                return True
    return False


def _inner_from_left(
    attempt: Attempt, query: Spjg, view: Spjg, join: OuterJoin
) -> ir.Expr | Rejection:
    """The filter over the view dropping the rows its LEFT join onto `join.rel` added."""
    rel = _rel(attempt, join.rel)
    if join.kind != LEFT or rel not in query.rels or rel in attempt.join_back:
        return Rejection(OUTER_JOIN, f"the query lacks the view's {_describe(join)}")
    safe = set(attempt.keys.not_null.get(query.table_of(rel), frozenset()))
    for term in (*(attempt.to_query_space(c) for c in join.on), *query.conjuncts):
        safe |= non_null_columns(term, rel)
    for output in view.outputs:
        expr = attempt.to_query_space(output.expr)
        if isinstance(expr, ir.Column) and expr.rel == rel and expr.name in safe:
            return ir.Not(ir.IsNull(ir.Column(attempt.view_alias, output.name)))
    return Rejection(
        MISSING_COLUMN,
        f"the view's {_describe(join)} adds rows the query's inner join lacks; dropping them "
        f"takes an output of {query.table_of(rel)} that is never NULL on a match (its "
        f"joined key: {', '.join(sorted(safe)) or 'none'})",
    )


def _with(attempt: Attempt, query: Spjg, view: Spjg) -> Attempt:
    if query is attempt.query and view is attempt.view_block:
        return attempt
    return replace(attempt, query=query, view=replace(attempt.view, block=view))


def _to_query_space(attempt: Attempt, join: OuterJoin) -> OuterJoin:
    on = tuple(attempt.to_query_space(c) for c in join.on)
    return OuterJoin(join.kind, _rel(attempt, join.rel), on, _rel(attempt, join.other))


def _rel(attempt: Attempt, view_rel: str) -> str:
    return dict(attempt.mapping).get(view_rel, view_rel)


def _key(join: OuterJoin) -> JoinKey:
    on = frozenset(canonical(c, NO_CLASSES) for c in join.on)
    return join.kind, frozenset(join.null_supplying), on


def _describe(join: OuterJoin) -> str:
    kind = "FULL JOIN of" if join.kind == FULL else "LEFT JOIN onto"
    tables = " and ".join(join.null_supplying)
    on = " AND ".join(sql_of(c) for c in join.on) or "TRUE"
    return f"{kind} {tables} (ON {on})"
