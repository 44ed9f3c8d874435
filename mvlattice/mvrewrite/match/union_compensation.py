"""Step 8, union compensation (Calcite's union rewriting; GL01 only rejects such views).

When the view keeps a tighter range of one class than the query needs, the query is answered
as (view rows, compensated) UNION ALL (base rows the view does not hold). The base branch adds
the complement of the view's range, with NULL included: a row whose value is NULL fails the
view's predicate, so it is not in the view and must come from the base tables. The two
branches are disjoint, so UNION ALL keeps every row exactly once.

Grouped queries compute partial aggregates per branch, grouped by the query's keys, and roll
them up over the union (SUM of SUMs, SUM of COUNTs, MIN of MINs, …). COUNT(DISTINCT …) cannot
be combined that way and is not rewritten.
"""

from __future__ import annotations

from dataclasses import replace

from mvlattice.mvrewrite.match.attempt import (
    CANNOT_ROLL_UP,
    UNSUPPORTED,
    Attempt,
    Rejection,
    UnionBranches,
    UnionSplit,
)
from mvlattice.mvrewrite.match.compose import UNION_ALIAS
from mvlattice.mvrewrite.match.output_mapping import is_output_ref, missing
from mvlattice.mvrewrite.match.predicates import Predicates, range_of
from mvlattice.mvrewrite.match.ranges import Range
from mvlattice.mvrewrite.match.rollup import (
    average,
    canonical_in,
    coalesce_zero,
    finish,
    parts,
    resummed,
    roll_up,
    same_grouping,
    view_aggregates,
)
from mvlattice.mvrewrite.match.view_outputs import index
from mvlattice.sql import ir


def check(attempt: Attempt) -> Attempt | Rejection:
    split = attempt.split
    if split is None:
        return attempt
    base = _base_filters(attempt, split)
    if attempt.query.grouped:
        return _groups(attempt, base)
    return _rows(attempt, base)


def _base_filters(attempt: Attempt, split: UnionSplit) -> tuple[ir.Expr, ...]:
    """The query's conjuncts, its range on the split class narrowed to the view's gap."""
    query = attempt.query_preds
    assert query is not None
    key = (split.column, split.kind)
    narrowed = query.ranges.get(key, Range.all()).intersect(split.rest)
    kept = tuple(c for c in attempt.query.conjuncts if not _on_split(c, query, key))
    extra = narrowed.predicate(split.base_column)
    return kept + ((extra,) if extra is not None else ())


def _on_split(conjunct: ir.Expr, query: Predicates, key: tuple[ir.Column, str]) -> bool:
    found = range_of(conjunct, query.text)
    return found is not None and (query.classes.rep(found[0]), found[1]) == key


def _rows(attempt: Attempt, base: tuple[ir.Expr, ...]) -> Attempt | Rejection:
    query = attempt.query
    if not all(is_output_ref(k.expr) for k in query.order):
        return Rejection(
            UNSUPPORTED, "a union rewrite can only ORDER BY output columns of the query"
        )
    union = UnionBranches(
        base_filters=base,
        grouped=False,
        view_keys=(),
        base_keys=(),
        view_outputs=attempt.outputs,
        base_outputs=query.outputs,
        outer_order=query.order,
    )
    return replace(attempt, union=union)


def _groups(attempt: Attempt, base: tuple[ir.Expr, ...]) -> Attempt | Rejection:
    query = attempt.query
    if any(a.distinct or a.func == "approx_count_distinct" for a in query.aggregates):
        return Rejection(
            CANNOT_ROLL_UP,
            "a union rewrite cannot combine DISTINCT aggregates from two branches",
        )
    key_names = tuple(f"_k{i}" for i in range(len(query.keys)))
    view_parts: list[ir.Output] = []
    base_parts: list[ir.Output] = []
    outer_aggs = {}
    stored = view_aggregates(attempt) if _as_stored(attempt) else None
    for agg in query.aggregates:
        combined = []
        for part, rollup in parts(agg):
            name = f"_p{len(view_parts)}"
            in_view = _in_view(attempt, part, stored)
            if isinstance(in_view, Rejection):
                return in_view
            view_parts.append(ir.Output(name, in_view))
            base_parts.append(ir.Output(name, part))
            combined.append(_combine(attempt, rollup or "sum", name, part, bool(query.keys)))
        if agg.func == "avg":
            mean = average(attempt, agg, *combined)
            if isinstance(mean, Rejection):
                return mean
            combined = [mean]
        outer_aggs[agg] = combined[0]
    found = _with_outer(attempt, base, key_names, view_parts, base_parts, outer_aggs)
    if isinstance(found, Rejection) or found.union is None or stored is None:
        return found
    return replace(found, union=replace(found.union, view_aggregates=False))


def _as_stored(attempt: Attempt) -> bool:
    """Whether every partial aggregate is a view column as it stands (Calcite's form:
    `SELECT empid, deptname, s FROM mv UNION ALL …`), so the view branch need not group."""
    if not attempt.view_block.grouped or not same_grouping(attempt):
        return False
    stored = view_aggregates(attempt)
    needed = (p for a in attempt.query.aggregates for p, _ in parts(a))
    return all(canonical_in(attempt, p) in stored for p in needed)


def _in_view(
    attempt: Attempt, part: ir.Agg, stored: dict[ir.Expr, ir.Expr] | None
) -> ir.Expr | Rejection:
    """The partial aggregate from the view's rows: a view column as it stands, or rolled up."""
    if stored is not None:
        return stored[canonical_in(attempt, part)]
    if attempt.view_block.grouped:
        return roll_up(attempt, part)
    assert attempt.available is not None
    args = [attempt.available.express(a) for a in part.args]
    if None in args:
        return missing(attempt, attempt.available, part, "aggregates")
    return ir.Agg(part.func, tuple(args), part.distinct)  # type: ignore[arg-type]


def _combine(attempt: Attempt, rollup: str, name: str, part: ir.Agg, grouped: bool) -> ir.Expr:
    rolled = resummed(attempt, part, ir.Agg(rollup, (ir.Column(UNION_ALIAS, name),)))
    return coalesce_zero(rolled) if part.func == "count" and not grouped else rolled


def _with_outer(
    attempt: Attempt,
    base: tuple[ir.Expr, ...],
    key_names: tuple[str, ...],
    view_parts: list[ir.Output],
    base_parts: list[ir.Output],
    outer_aggs: dict[ir.Agg, ir.Expr],
) -> Attempt | Rejection:
    query = attempt.query
    assert attempt.query_preds is not None
    keys = {k: ir.Column(UNION_ALIAS, n) for k, n in zip(query.keys, key_names, strict=True)}
    outer = replace(attempt, available=index(keys, attempt.query_preds.classes, frozenset()))
    finished = finish(outer, outer_aggs, aggregate=True)
    if isinstance(finished, Rejection):
        return finished
    union = UnionBranches(
        base_filters=base,
        grouped=True,
        view_keys=attempt.group_keys,
        base_keys=query.keys,
        view_outputs=_named(key_names, attempt.group_keys) + tuple(view_parts),
        base_outputs=_named(key_names, query.keys) + tuple(base_parts),
        outer_keys=tuple(keys.values()),
        outer_outputs=finished.outputs,
        outer_having=finished.having,
        outer_order=finished.order,
    )
    return replace(attempt, union=union)


def _named(names: tuple[str, ...], exprs: tuple[ir.Expr, ...]) -> tuple[ir.Output, ...]:
    return tuple(ir.Output(n, e) for n, e in zip(names, exprs, strict=True))
