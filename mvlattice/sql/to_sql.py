"""IR -> sqlglot AST -> Spark SQL (the only module that builds sqlglot trees from the IR).

One `visit_<Operator>` per operator, as in ibis's SQL compilers. Operators fold into one
SELECT in SQL's clause order (FROM/JOIN, WHERE, GROUP BY, HAVING, SELECT, ORDER BY, LIMIT);
the plans the rewriter composes always have that shape.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp

from mvlattice.sql import ir
from mvlattice.sql.aggregates import AGGREGATE_NODES

DIALECT = "spark"
FROM, WHERE, GROUP, HAVING, SELECT, ORDER, LIMIT = range(7)
COMPARISONS = {
    "=": exp.EQ,
    "<>": exp.NEQ,
    "<": exp.LT,
    "<=": exp.LTE,
    ">": exp.GT,
    ">=": exp.GTE,
    "<=>": exp.NullSafeEQ,
}
SET_OPERATIONS = {"union": exp.Union, "intersect": exp.Intersect, "except": exp.Except}
COMPOUND = (exp.Binary, exp.Not, exp.Neg, exp.BitwiseNot, exp.Predicate)


@dataclass(slots=True)
class _Partial:
    """A SELECT under construction and the last clause filled in."""

    node: exp.Query  # a SELECT until the stage SELECT; a set operation enters at SELECT
    stage: int

    @property
    def select(self) -> exp.Select:
        """The SELECT being filled (callers first check the stage with `_at_most`)."""
        if not isinstance(self.node, exp.Select):
            raise ValueError(f"expected a SELECT under construction, not {self.node.key}")
        return self.node


# -- plans ----------------------------------------------------------------------------------
def plan_sql(plan: ir.Plan) -> exp.Query:
    return _visit(plan).node


def _visit(plan: ir.Plan) -> _Partial:
    visit = _VISITORS.get(type(plan))
    if visit is None:
        raise TypeError(f"no SQL for plan node {type(plan).__name__}")
    return visit(plan)


def visit_Scan(plan: ir.Scan) -> _Partial:
    return _Partial(exp.select().from_(_table(plan), copy=False), FROM)


def visit_Derived(plan: ir.Derived) -> _Partial:
    return _Partial(exp.select().from_(_derived(plan), copy=False), FROM)


def visit_Join(plan: ir.Join) -> _Partial:
    left = _at_most(_visit(plan.left), FROM, plan)
    right: exp.Table | exp.Subquery | None
    right = _table(plan.right) if isinstance(plan.right, ir.Scan) else None
    if right is None and isinstance(plan.right, ir.Derived):
        right = _derived(plan.right)
    if right is None:
        raise ValueError("the right side of a join must be a table or a derived table")
    side = plan.kind.upper() if plan.kind in ("left", "right", "full") else None
    kind = plan.kind.upper() if plan.kind in ("semi", "anti") else None
    on = expression(plan.condition) if plan.condition is not None else None
    join = exp.Join(this=right, side=side, kind=kind or ("CROSS" if on is None else None), on=on)
    left.node.append("joins", join)
    return left


def visit_Filter(plan: ir.Filter) -> _Partial:
    partial = _visit(plan.input)
    condition = expression(plan.condition)
    if partial.stage <= WHERE:
        partial.select.where(condition, copy=False)
        return _Partial(partial.node, WHERE)
    _at_most(partial, GROUP, plan)
    partial.select.having(condition, copy=False)
    return _Partial(partial.node, HAVING)


def visit_Aggregate(plan: ir.Aggregate) -> _Partial:
    partial = _at_most(_visit(plan.input), WHERE, plan)
    if plan.keys:
        partial.select.group_by(*(expression(k) for k in plan.keys), copy=False)
    return _Partial(partial.node, GROUP)


def visit_Project(plan: ir.Project) -> _Partial:
    partial = _at_most(_visit(plan.input), HAVING, plan)
    outputs = [exp.alias_(expression(o.expr), o.name, quoted=True) for o in plan.outputs]
    partial.select.select(*outputs, copy=False)
    if plan.distinct:
        partial.node.set("distinct", exp.Distinct())
    return _Partial(partial.node, SELECT)


def visit_Sort(plan: ir.Sort) -> _Partial:
    partial = _at_most(_visit(plan.input), SELECT, plan)
    keys = [
        exp.Ordered(this=expression(k.expr), desc=k.descending, nulls_first=k.nulls_first)
        for k in plan.keys
    ]
    partial.node.set("order", exp.Order(expressions=keys))
    return _Partial(partial.node, ORDER)


def visit_Limit(plan: ir.Limit) -> _Partial:
    partial = _at_most(_visit(plan.input), ORDER, plan)
    if plan.count is not None:
        partial.node.set("limit", exp.Limit(expression=exp.Literal.number(plan.count)))
    if plan.offset:
        partial.node.set("offset", exp.Offset(expression=exp.Literal.number(plan.offset)))
    return _Partial(partial.node, LIMIT)


def visit_SetOp(plan: ir.SetOp) -> _Partial:
    kind = SET_OPERATIONS[plan.kind]
    node = plan_sql(plan.inputs[0])
    for other in plan.inputs[1:]:
        node = kind(this=node, expression=plan_sql(other), distinct=plan.distinct)
    return _Partial(node, SELECT)


# One visitor per plan node type.
_VISITORS: dict[type[ir.Plan], Callable[[Any], _Partial]] = {
    ir.Scan: visit_Scan,
    ir.Derived: visit_Derived,
    ir.Join: visit_Join,
    ir.Filter: visit_Filter,
    ir.Aggregate: visit_Aggregate,
    ir.Project: visit_Project,
    ir.Sort: visit_Sort,
    ir.Limit: visit_Limit,
    ir.SetOp: visit_SetOp,
}


def _at_most(partial: _Partial, stage: int, plan: ir.Plan) -> _Partial:
    if partial.stage > stage:
        raise ValueError(f"{type(plan).__name__} cannot go on top of this plan in one SELECT")
    return partial


def _table(plan: ir.Scan) -> exp.Table:
    parts = plan.table.split(".")
    table = exp.table_(
        _identifier(parts[-1]),
        db=_identifier(parts[-2]) if len(parts) > 1 else None,
        catalog=_identifier(parts[-3]) if len(parts) > 2 else None,
    )
    return exp.alias_(table, _identifier(plan.alias), table=True)  # type: ignore[return-value]


def _derived(plan: ir.Derived) -> exp.Subquery:
    return exp.Subquery(
        this=plan_sql(plan.input), alias=exp.TableAlias(this=_identifier(plan.alias))
    )


def _identifier(name: str) -> exp.Identifier:
    return exp.Identifier(this=name, quoted=True)


# -- expressions ----------------------------------------------------------------------------
def expression(expr: ir.Expr) -> exp.Expr:
    to_sql = _EXPRESSIONS.get(type(expr))
    if to_sql is None:
        raise TypeError(f"no SQL for expression node {type(expr).__name__}")
    return to_sql(expr)


def _sql_Column(expr: ir.Column) -> exp.Expr:
    table = _identifier(expr.rel) if expr.rel else None
    return exp.Column(this=_identifier(expr.name), table=table)


def _sql_Literal(expr: ir.Literal) -> exp.Expr:
    if expr.kind == "number":
        return exp.Literal.number(expr.text)
    if expr.kind == "string":
        return exp.Literal.string(expr.text)
    if expr.kind == "boolean":
        return exp.Boolean(this=expr.text == "true")
    if expr.kind == "null":
        return exp.Null()
    return exp.Cast(this=exp.Literal.string(expr.text), to=exp.DataType.build(expr.kind.upper()))


def _sql_Compare(expr: ir.Compare) -> exp.Expr:
    cls = COMPARISONS[expr.op]
    return cls(this=_operand(expr.left), expression=_operand(expr.right))


def _sql_And(expr: ir.And) -> exp.Expr:
    return exp.and_(*(expression(t) for t in expr.terms), copy=False)


def _sql_Or(expr: ir.Or) -> exp.Expr:
    return exp.or_(*(expression(t) for t in expr.terms), copy=False)


def _sql_Not(expr: ir.Not) -> exp.Expr:
    return exp.Not(this=_operand(expr.term))


def _sql_IsNull(expr: ir.IsNull) -> exp.Expr:
    return exp.Is(this=_operand(expr.term), expression=exp.Null())


def _sql_InList(expr: ir.InList) -> exp.Expr:
    return exp.In(this=_operand(expr.term), expressions=[expression(v) for v in expr.values])


def _sql_Agg(expr: ir.Agg) -> exp.Expr:
    args = [expression(a) for a in expr.args]
    if expr.func not in AGGREGATE_NODES:  # HLL_SKETCH_AGG, HLL_UNION_AGG
        return exp.Anonymous(this=expr.func, expressions=args)
    if expr.distinct:
        return AGGREGATE_NODES[expr.func](this=exp.Distinct(expressions=args))
    if not args:
        return AGGREGATE_NODES[expr.func](this=exp.Star())
    return AGGREGATE_NODES[expr.func](this=args[0], expressions=args[1:] or None)


def _sql_Func(expr: ir.Func) -> exp.Expr:
    cls = getattr(exp, expr.op)
    node = cls(**{key: _arg(value) for key, value in expr.args})
    if isinstance(node, COMPOUND):
        for key, value in list(node.args.items()):
            if isinstance(value, exp.Expr) and _compound(value):
                node.set(key, exp.Paren(this=value))
    return node


def _sql_Subquery(expr: ir.Subquery) -> exp.Expr:
    query = sqlglot.parse_one(expr.sql, read=DIALECT)
    if expr.kind == "exists":
        return exp.Exists(this=query)
    if expr.kind == "in" and expr.term is not None:
        return exp.In(this=_operand(expr.term), query=exp.Subquery(this=query))
    return exp.Subquery(this=query)


# One translation per expression node type.
_EXPRESSIONS: dict[type[ir.Expr], Callable[[Any], exp.Expr]] = {
    ir.Column: _sql_Column,
    ir.Literal: _sql_Literal,
    ir.Compare: _sql_Compare,
    ir.And: _sql_And,
    ir.Or: _sql_Or,
    ir.Not: _sql_Not,
    ir.IsNull: _sql_IsNull,
    ir.InList: _sql_InList,
    ir.Agg: _sql_Agg,
    ir.Func: _sql_Func,
    ir.Subquery: _sql_Subquery,
}


def _arg(value: ir.Arg) -> object:
    if isinstance(value, tuple):
        return [_arg(v) for v in value]
    if isinstance(value, ir.TypeName):
        return exp.DataType.build(value.sql, dialect=DIALECT)
    if isinstance(value, ir.EXPRESSION_TYPES):
        return expression(value)  # type: ignore[arg-type]
    return value


def _operand(expr: ir.Expr) -> exp.Expr:
    """An operand of an operator, in parentheses when it is itself an operation."""
    node = expression(expr)
    return exp.Paren(this=node) if _compound(node) else node


def _compound(node: exp.Expr) -> bool:
    return isinstance(node, COMPOUND) and not isinstance(node, exp.Paren)


# -- text -----------------------------------------------------------------------------------
SAFE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
RESERVED = frozenset(
    """
    all alter and anti any array as at authorization between both by case cast check
    collate column constraint create cross cube current current_date current_time
    current_timestamp current_user date delete describe distinct drop else end escape
    except exists false fetch filter for foreign from full function global grant group
    grouping having in inner insert intersect interval into is join lateral leading left
    like limit local minus natural not null of offset on only or order outer over overlaps
    pivot primary qualify range references right rollup row rows select semi session_user
    set some start table tablesample then time timestamp to trailing true union unique
    unknown unpivot update user using values when where window with
    """.split()  # noqa: SIM905 - reads better than 120 quoted words
)


def pretty(node: exp.Expr) -> str:
    """Readable Spark SQL: identifiers quoted only where needed."""
    tree = node.copy()
    for identifier in tree.find_all(exp.Identifier):
        name = identifier.name
        if identifier.quoted and SAFE_NAME.match(name) and name.lower() not in RESERVED:
            identifier.set("quoted", False)
    return tree.sql(dialect=DIALECT, pretty=True)


def sql_of(expr: ir.Expr) -> str:
    """One expression as readable Spark SQL, for messages."""
    if isinstance(expr, ir.Column | ir.Literal):
        return str(expr)
    if isinstance(expr, ir.Compare) and all(
        isinstance(side, ir.Column | ir.Literal) for side in (expr.left, expr.right)
    ):
        return f"{expr.left} {expr.op} {expr.right}"
    if isinstance(expr, ir.Agg) and all(isinstance(a, ir.Column) for a in expr.args):
        inner = ", ".join(str(a) for a in expr.args) or "*"
        return f"{expr.func.upper()}({'DISTINCT ' if expr.distinct else ''}{inner})"
    tree = expression(expr)
    for identifier in tree.find_all(exp.Identifier):
        if SAFE_NAME.match(identifier.name) and identifier.name.lower() not in RESERVED:
            identifier.set("quoted", False)
    return tree.sql(dialect=DIALECT)
