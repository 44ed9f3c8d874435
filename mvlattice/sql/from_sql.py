"""A qualified sqlglot query -> the relational IR: the rewriter's strict reading of blocks.
What a block aggregates is `block_summary.aggregate_calls`, the definition the planner and
the suggester use too.

Input is what `parse.qualify_query` returns: every table aliased, every column qualified with
its table alias, stars expanded, every output aliased, USING turned into ON. Constructs the
rewriter does not reason about raise `UnsupportedSqlError` with a reason code; the caller
records it and leaves that block as it was.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

from mvlattice.sql import ir
from mvlattice.sql.block_summary import aggregate_calls
from mvlattice.sql.from_sql_expr import ExprTranslator, unsupported

# Select clauses with no place in a block; present -> the block is left alone.
UNSUPPORTED_CLAUSES = (
    "laterals",
    "qualify",
    "windows",
    "distribute",
    "sort",
    "cluster",
    "connect",
    "match",
    "prewhere",
    "sample",
    "into",
    "pivots",
    "kind",
)
PLAIN_TABLE = ("this", "db", "catalog", "alias")
GROUPING_CONSTRUCTS = (exp.Rollup, exp.Cube, exp.GroupingSets)
SET_OPERATIONS: dict[type[exp.Expr], str] = {
    exp.Union: "union",
    exp.Intersect: "intersect",
    exp.Except: "except",
}


def translate(node: exp.Expr, ctes: Mapping[str, exp.Expr] | None = None) -> ir.Plan:
    """The plan of a query (SELECT, set operation or parenthesized query)."""
    ctes = dict(ctes or {})
    ctes.update(_ctes_of(node))
    if isinstance(node, exp.Subquery):
        return translate(node.this, ctes)
    if isinstance(node, exp.Select):
        return _SelectTranslator(node, ctes).plan()
    kind = SET_OPERATIONS.get(type(node))
    if kind is not None and isinstance(node, exp.SetOperation):
        return _set_operation(node, kind, ctes)
    raise unsupported(f"'{type(node).__name__}' is not a query block")


def _ctes_of(node: exp.Expr) -> dict[str, exp.Expr]:
    with_ = node.args.get("with_")
    if with_ is None:
        return {}
    if with_.args.get("recursive"):
        raise unsupported("WITH RECURSIVE is not rewritten")
    return {cte.alias_or_name.lower(): cte.this for cte in with_.expressions}


def _set_operation(node: exp.SetOperation, kind: str, ctes: dict[str, exp.Expr]) -> ir.Plan:
    if node.args.get("by_name") or node.args.get("side") or node.args.get("kind"):
        raise unsupported(f"{kind.upper()} BY NAME / outer set operations are not rewritten")
    plan: ir.Plan = ir.SetOp(
        kind,
        (translate(node.this, ctes), translate(node.expression, ctes)),
        bool(node.args.get("distinct")),
    )
    return _modifiers(node, plan, ExprTranslator(_output_ref, _no_subquery))


class _SelectTranslator:
    """One SELECT: FROM/JOIN -> WHERE -> GROUP BY -> HAVING -> SELECT -> ORDER BY -> LIMIT."""

    def __init__(self, select: exp.Select, ctes: dict[str, exp.Expr]) -> None:
        self.select = select
        self.ctes = ctes
        self.rels: set[str] = set()
        self.expr = ExprTranslator(self._column, self._subquery)

    def plan(self) -> ir.Plan:
        self._check_clauses()
        plan = self._from()
        where = self.select.args.get("where")
        if where is not None:
            plan = ir.Filter(plan, self.expr(where.this))
        plan = self._aggregate(plan)
        having = self.select.args.get("having")
        if having is not None:
            plan = ir.Filter(plan, self.expr(having.this))
        outputs = tuple(self._output(e) for e in self.select.expressions)
        if not outputs:  # `SELECT FROM t` parses; Spark rejects it, so must we, politely
            raise unsupported("a SELECT without output columns is not rewritten")
        distinct = self.select.args.get("distinct")
        if distinct is not None and distinct.args.get("on") is not None:
            raise unsupported("DISTINCT ON is not rewritten")
        plan = ir.Project(plan, outputs, distinct is not None)
        return _modifiers(self.select, plan, ExprTranslator(self._order_column, self._subquery))

    def _check_clauses(self) -> None:
        for clause in UNSUPPORTED_CLAUSES:
            if self.select.args.get(clause):
                raise unsupported(f"{clause.upper()} is not rewritten")
        if self.select.args.get("from_") is None:
            raise unsupported("a SELECT without FROM reads no table")

    # -- FROM and JOIN --------------------------------------------------------------------
    def _from(self) -> ir.Plan:
        plan = self._source(self.select.args["from_"].this)
        for join in self.select.args.get("joins") or ():
            right = self._source(join.this)
            kind = _join_kind(join)
            on = join.args.get("on")
            condition = self.expr(on) if on is not None else None
            plan = ir.Join(plan, right, kind, condition)
        return plan

    def _source(self, node: exp.Expr) -> ir.Plan:
        alias = node.alias_or_name
        if alias in self.rels:
            raise unsupported(f"alias '{alias}' is used twice")
        self.rels.add(alias)
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            extras = sorted(k for k, v in node.args.items() if v and k not in PLAIN_TABLE)
            if extras:  # VERSION AS OF (an old version!), TABLESAMPLE, PIVOT, …
                raise unsupported(f"'{node.sql('spark')}' ({', '.join(extras)}) is not rewritten")
            if not node.db and node.name.lower() in self.ctes:
                return ir.Derived(translate(self.ctes[node.name.lower()], self.ctes), alias)
            return ir.Scan(_table_name(node), alias)
        if isinstance(node, exp.Subquery):
            if node.args.get("pivots") or node.args.get("sample"):
                raise unsupported(f"'{node.sql('spark')}' is not rewritten")
            return ir.Derived(translate(node.this, self.ctes), alias)
        raise unsupported(f"FROM item '{node.sql('spark')}' is not rewritten")

    # -- GROUP BY -------------------------------------------------------------------------
    def _aggregate(self, plan: ir.Plan) -> ir.Plan:
        group = self.select.args.get("group")
        if group is not None:
            for extra in ("grouping_sets", "cube", "rollup", "totals", "all"):
                if group.args.get(extra):
                    raise unsupported(
                        "GROUP BY ALL / GROUPING SETS / ROLLUP / CUBE are not rewritten"
                    )
            if any(isinstance(k, GROUPING_CONSTRUCTS) for k in group.expressions):
                raise unsupported("GROUPING SETS / ROLLUP / CUBE are not rewritten")
            return ir.Aggregate(plan, tuple(self.expr(k) for k in group.expressions))
        if aggregate_calls(self.select):
            return ir.Aggregate(plan, ())
        return plan

    # -- SELECT ---------------------------------------------------------------------------
    def _output(self, node: exp.Expr) -> ir.Output:
        if not isinstance(node, exp.Alias):
            raise unsupported(f"output '{node.sql('spark')}' has no name")
        return ir.Output(node.alias, self.expr(node.this))

    # -- scope ----------------------------------------------------------------------------
    def _column(self, node: exp.Column) -> ir.Column:
        if node.args.get("db") or node.args.get("catalog"):
            raise unsupported(f"column reference '{node.sql('spark')}' is not rewritten")
        if not node.table:
            raise unsupported(f"column '{node.name}' could not be resolved")
        if node.table not in self.rels:
            raise unsupported(
                f"correlated reference to {node.table}.{node.name}: correlated subqueries "
                "are not rewritten"
            )
        return ir.Column(node.table, node.name)

    def _order_column(self, node: exp.Column) -> ir.Column:
        if not node.table and not node.args.get("db"):
            return ir.Column("", node.name)  # ORDER BY an output name
        return self._column(node)

    def _subquery(self, node: exp.Expr) -> str:
        outer = _outer_references(node)
        if outer:
            raise unsupported(
                f"correlated subquery (it refers to {', '.join(sorted(outer))} of the "
                "enclosing block) is not rewritten"
            )
        return node.sql(dialect="spark")


def _modifiers(node: exp.Expr, plan: ir.Plan, expr: ExprTranslator) -> ir.Plan:
    order = node.args.get("order")
    if order is not None:
        keys = tuple(_sort_key(o, expr) for o in order.expressions)
        plan = ir.Sort(plan, keys)
    limit, offset = node.args.get("limit"), node.args.get("offset")
    if limit is not None or offset is not None:
        plan = ir.Limit(plan, _integer(limit), _integer(offset) or 0)
    return plan


def _sort_key(node: exp.Expr, expr: ExprTranslator) -> ir.SortKey:
    if not isinstance(node, exp.Ordered):
        return ir.SortKey(expr(node))
    nulls_first = node.args.get("nulls_first")
    return ir.SortKey(expr(node.this), bool(node.args.get("desc")), nulls_first)


def _integer(node: exp.Expr | None) -> int | None:
    if node is None:
        return None
    value = node.expression if isinstance(node, exp.Limit | exp.Offset) else node
    if isinstance(value, exp.Literal) and not value.is_string and value.name.isdigit():
        return int(value.name)
    raise unsupported(f"LIMIT/OFFSET '{node.sql('spark')}' is not a constant")


def _join_kind(join: exp.Join) -> str:
    if join.args.get("method"):
        raise unsupported(f"{join.args['method']} JOIN is not rewritten")
    side = (join.args.get("side") or "").lower()
    kind = (join.args.get("kind") or "").lower()
    if kind in ("semi", "anti"):
        return kind
    if side:
        return side
    if kind in ("", "inner", "cross"):
        return "inner"
    raise unsupported(f"{kind.upper()} JOIN is not rewritten")


def _table_name(node: exp.Table) -> str:
    parts = [p for p in (node.catalog, node.db, node.name) if p]
    return ".".join(parts).lower()


def _outer_references(query: exp.Expr) -> set[str]:
    """Table aliases used inside `query` that it does not define: a correlated subquery."""
    defined = {t.alias_or_name for t in query.find_all(exp.Table)}
    defined |= {s.alias for s in query.find_all(exp.Subquery) if s.alias}
    defined |= {c.alias_or_name for c in query.find_all(exp.CTE)}
    used = {c.table for c in query.find_all(exp.Column) if c.table}
    return used - defined


def _output_ref(node: exp.Column) -> ir.Column:
    if node.table:
        raise unsupported(f"'{node.sql('spark')}' in ORDER BY of a set operation")
    return ir.Column("", node.name)


def _no_subquery(node: exp.Expr) -> str:
    raise unsupported("a subquery in ORDER BY of a set operation is not rewritten")
