"""The rewritten block as a plan: the view (with tables joined back), compensating filters,
re-aggregation, the query's outputs, then its ORDER BY and LIMIT on top."""

from __future__ import annotations

from mvlattice.mvrewrite.match.attempt import Attempt, UnionBranches
from mvlattice.sql import ir
from mvlattice.sql.spjg import Spjg

UNION_ALIAS = "u"


def build(attempt: Attempt) -> ir.Plan:
    if attempt.union is not None:
        return _union(attempt, attempt.union)
    plan = view_source(attempt, attempt.filters)
    if attempt.aggregate:
        plan = ir.Aggregate(plan, attempt.group_keys)
        if attempt.having:
            plan = ir.Filter(plan, ir.conjoin(attempt.having))  # type: ignore[arg-type]
    plan = ir.Project(plan, attempt.outputs, attempt.query.distinct)
    return order_and_limit(plan, attempt.query, attempt.order)


def _union(attempt: Attempt, union: UnionBranches) -> ir.Plan:
    """view branch UNION ALL base branch; grouped queries aggregate partial results again."""
    view_branch = view_source(attempt, attempt.filters)
    base_branch = base_source(attempt.query, union.base_filters)
    if union.grouped:
        if union.view_aggregates:
            view_branch = ir.Aggregate(view_branch, union.view_keys)
        base_branch = ir.Aggregate(base_branch, union.base_keys)
    branches = ir.SetOp(
        "union",
        (ir.Project(view_branch, union.view_outputs), ir.Project(base_branch, union.base_outputs)),
        distinct=False,
    )
    if not union.grouped:
        return order_and_limit(branches, attempt.query, union.outer_order)
    plan: ir.Plan = ir.Aggregate(ir.Derived(branches, UNION_ALIAS), union.outer_keys)
    if union.outer_having:
        plan = ir.Filter(plan, ir.conjoin(union.outer_having))  # type: ignore[arg-type]
    plan = ir.Project(plan, union.outer_outputs, attempt.query.distinct)
    return order_and_limit(plan, attempt.query, union.outer_order)


def view_source(attempt: Attempt, filters: tuple[ir.Expr, ...]) -> ir.Plan:
    """FROM the view, JOIN the tables it lacks, WHERE the compensating predicates."""
    sources = [ir.Scan(attempt.view.table, attempt.view_alias)]
    sources += [ir.Scan(attempt.query.table_of(r), r) for r in attempt.join_back]
    return from_clause(sources, filters)


def base_source(query: Spjg, predicates: tuple[ir.Expr, ...]) -> ir.Plan:
    """The query's own FROM over the base tables, filtered by `predicates`."""
    sources = [ir.Scan(t.table, t.rel) for t in query.tables]
    return from_clause(sources, predicates)


def from_clause(sources: list[ir.Scan], predicates: tuple[ir.Expr, ...]) -> ir.Plan:
    """Inner joins in order, each predicate in the ON of the first join that can evaluate it."""
    plan: ir.Plan = sources[0]
    seen = {sources[0].alias}
    remaining = list(predicates)
    for source in sources[1:]:
        seen.add(source.alias)
        on = [p for p in remaining if _rels(p) <= seen and source.alias in _rels(p)]
        remaining = [p for p in remaining if p not in on]
        plan = ir.Join(plan, source, "inner", ir.conjoin(tuple(on)))
    where = ir.conjoin(tuple(remaining))
    return ir.Filter(plan, where) if where is not None else plan


def order_and_limit(plan: ir.Plan, query: Spjg, order: tuple[ir.SortKey, ...]) -> ir.Plan:
    if order:
        plan = ir.Sort(plan, order)
    if query.limit is not None or query.offset:
        plan = ir.Limit(plan, query.limit, query.offset)
    return plan


def _rels(expr: ir.Expr) -> set[str]:
    return {c.rel for c in ir.columns(expr)}
