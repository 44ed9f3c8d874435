"""Step 6, expressing the query over the view (GL01 §3.1.3, §3.2 conditions 2 and 4).

Compensating predicates, grouping expressions and (for queries without aggregation) the
output expressions must all be computable from view outputs — for an aggregated view, from
its grouping outputs only — or from tables joined back to the view.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from mvlattice.mvrewrite.match import lossless_cast, time_grain
from mvlattice.mvrewrite.match.attempt import CANNOT_ROLL_UP, MISSING_COLUMN, Attempt, Rejection
from mvlattice.mvrewrite.match.view_outputs import Available, index
from mvlattice.sql import ir
from mvlattice.sql.to_sql import sql_of


def check(attempt: Attempt) -> Attempt | Rejection:
    available = _available(attempt)
    filters = _filters(attempt, available)
    if isinstance(filters, Rejection):
        return filters
    attempt = replace(attempt, available=available, filters=filters)
    if attempt.query.grouped:
        return _keys(attempt, available)
    if attempt.view_block.grouped:
        return Rejection(
            CANNOT_ROLL_UP,
            "the query reads individual rows but the view holds aggregated groups",
        )
    return _rows(attempt, available)


def _available(attempt: Attempt) -> Available:
    assert attempt.query_preds is not None
    view = attempt.view_block
    outputs: dict[ir.Expr, ir.Column] = {}
    for output in view.outputs:
        if view.grouped and ir.has_agg(output.expr):
            continue  # only grouping outputs can be filtered, grouped or joined on
        target = ir.Column(attempt.view_alias, output.name)
        outputs.setdefault(attempt.to_query_space(output.expr), target)
    type_of = _column_type(attempt)
    readable: dict[ir.Expr, ir.Expr] = dict(outputs)
    # a column read back from a view output that widens it losslessly (CAST(c AS BIGINT))
    for column, read in lossless_cast.widened(outputs, type_of).items():
        readable.setdefault(column, read)
    plain = index(readable, attempt.query_preds.classes, frozenset(attempt.join_back))
    # time expressions read from a view output truncating their column to a finer grain
    return time_grain.available(plain, time_grain.grains_of(outputs, type_of))


def _column_type(attempt: Attempt) -> Callable[[ir.Column], str | None]:
    def type_of(column: ir.Column) -> str | None:
        if column.rel not in attempt.query.rels:
            return None
        return attempt.keys.type_of(attempt.query.table_of(column.rel), column.name)

    return type_of


def _filters(attempt: Attempt, available: Available) -> tuple[ir.Expr, ...] | Rejection:
    out: list[ir.Expr] = []
    for equality in attempt.equalities:
        sides = [available.express_part(part) for part in equality.parts]
        for part, side in zip(equality.parts, sides, strict=True):
            if side is None:
                return missing(attempt, available, part[0], "joins or filters on")
        out.extend(ir.Compare("=", a, b) for a, b in zip(sides, sides[1:], strict=False))  # type: ignore[arg-type]
    for predicate in attempt.compensation:
        expressed = available.express(predicate)
        if expressed is None:
            return missing(attempt, available, predicate, "filters on")
        out.append(expressed)
    return tuple(out)


def _keys(attempt: Attempt, available: Available) -> Attempt | Rejection:
    keys = []
    for key in attempt.query.keys:
        expressed = available.express(key)
        if expressed is None:
            return missing(attempt, available, key, "groups by")
        keys.append(expressed)
    return replace(attempt, group_keys=tuple(keys))


def _rows(attempt: Attempt, available: Available) -> Attempt | Rejection:
    outputs = []
    for output in attempt.query.outputs:
        expressed = available.express(output.expr)
        if expressed is None:
            return missing(attempt, available, output.expr, "returns")
        outputs.append(ir.Output(output.name, expressed))
    order = []
    for key in attempt.query.order:
        expressed = key.expr if is_output_ref(key.expr) else available.express(key.expr)
        if expressed is None:
            return missing(attempt, available, key.expr, "orders by")
        order.append(ir.SortKey(expressed, key.descending, key.nulls_first))
    return replace(attempt, outputs=tuple(outputs), order=tuple(order))


def missing(attempt: Attempt, available: Available, expr: ir.Expr, role: str) -> Rejection:
    """MISSING_COLUMN naming the column, and what would make the view match."""
    column = available.missing(expr)
    shown = sql_of(column if column is not None else expr)
    grouped = attempt.view_block.grouped
    where = "as a grouping column" if grouped else "among its columns"
    return Rejection(
        MISSING_COLUMN,
        f"the query {role} {shown}, which the view does not output {where}"
        + _hint(attempt, column),
    )


def _hint(attempt: Attempt, column: ir.Column | None) -> str:
    view = attempt.view
    if column is None or column.rel not in attempt.query.rels:
        return ""
    if view.kind == "tile":
        label = view.label(attempt.query.table_of(column.rel), column.name)
        if label is not None:
            return f" (add dimension '{label}' to a tile of lattice '{view.lattice}')"
        return ""
    return f" (add {column.name} to the SELECT list of view '{view.name}')"


def is_output_ref(expr: ir.Expr) -> bool:
    """ORDER BY an output name (`Column("", name)`), valid over any rewrite."""
    return isinstance(expr, ir.Column) and expr.rel == ""
