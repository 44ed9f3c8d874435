"""SPJG normal form of a block (GL01 §2): tables, conjunctive predicates, grouping, outputs.

Derived tables and CTE references whose body is itself select-project-join are merged into
the block (their outputs substituted), so a query written with nested SELECTs matches a view
written with plain joins (Calcite's "join rewriting" example). Anything else — semi or anti
joins, aggregated derived tables — leaves the block not rewritable, with the reason; so do
outer joins other than those `outer_joins.py` says are kept, and how.
"""

from __future__ import annotations

from dataclasses import dataclass

from mvlattice.sql import ir
from mvlattice.sql.from_sql_expr import unsupported
from mvlattice.sql.outer_joins import FULL, LEFT, OuterJoin, simplify


@dataclass(frozen=True, slots=True)
class TableRef:
    rel: str  # unique within the block
    table: str  # schema.table, lower case


@dataclass(frozen=True, slots=True)
class Spjg:
    tables: tuple[TableRef, ...]
    conjuncts: tuple[ir.Expr, ...]  # WHERE and inner-join ON, split at AND
    outputs: tuple[ir.Output, ...]
    grouped: bool  # GROUP BY, aggregates, or DISTINCT
    keys: tuple[ir.Expr, ...] = ()
    having: tuple[ir.Expr, ...] = ()
    distinct: bool = False  # DISTINCT on top of a grouped block
    order: tuple[ir.SortKey, ...] = ()
    limit: int | None = None
    offset: int = 0
    outer: tuple[OuterJoin, ...] = ()  # LEFT/FULL joins; their tables are among `tables`

    @property
    def rels(self) -> tuple[str, ...]:
        return tuple(t.rel for t in self.tables)

    def table_of(self, rel: str) -> str:
        return next(t.table for t in self.tables if t.rel == rel)

    @property
    def aggregates(self) -> tuple[ir.Agg, ...]:
        """Every aggregate call of outputs, HAVING and ORDER BY, each once, in order."""
        found: dict[ir.Agg, None] = {}
        places = [o.expr for o in self.outputs] + list(self.having)
        places += [k.expr for k in self.order]
        for place in places:
            for node in ir.walk(place):
                if isinstance(node, ir.Agg):
                    found.setdefault(node, None)
        return tuple(found)


@dataclass(frozen=True, slots=True)
class _Flat:
    """The select-project-join part: tables, conjuncts, and what derived columns stand for."""

    tables: tuple[TableRef, ...] = ()
    conjuncts: tuple[ir.Expr, ...] = ()
    env: tuple[tuple[ir.Column, ir.Expr], ...] = ()
    outer: tuple[OuterJoin, ...] = ()

    def merge(self, other: _Flat) -> _Flat:
        return _Flat(
            self.tables + other.tables,
            self.conjuncts + other.conjuncts,
            self.env + other.env,
            self.outer + other.outer,
        )

    def substitute(self, expr: ir.Expr) -> ir.Expr:
        env = dict(self.env)
        if not env:
            return expr
        return ir.transform(expr, lambda n: env.get(n) if isinstance(n, ir.Column) else None)


def normalize(plan: ir.Plan, outer_joins: bool = True) -> Spjg:
    """The block's normal form; raises UnsupportedSqlError (with a reason) if it has none.
    `outer_joins=False`: LEFT, RIGHT and FULL joins are refused rather than kept in `outer`."""
    limit, offset, plan = _peel_limit(plan)
    order: tuple[ir.SortKey, ...] = ()
    if isinstance(plan, ir.Sort):
        order, plan = plan.keys, plan.input
        if limit is None and isinstance(plan, ir.Limit):
            raise unsupported("ORDER BY over a LIMIT is not rewritten")
    if not isinstance(plan, ir.Project):
        raise unsupported("a set operation is rewritten branch by branch, not as one block")
    outputs, distinct, plan = plan.outputs, plan.distinct, plan.input
    having: tuple[ir.Expr, ...] = ()
    if isinstance(plan, ir.Filter) and isinstance(plan.input, ir.Aggregate):
        having, plan = ir.conjuncts(plan.condition), plan.input
    grouped = isinstance(plan, ir.Aggregate)
    keys: tuple[ir.Expr, ...] = ()
    if isinstance(plan, ir.Aggregate):
        keys, plan = plan.keys, plan.input
    flat = _spj(plan, _reserved(plan), outer_joins)
    outer, conjuncts = simplify(flat.outer, flat.conjuncts)
    if any(j.kind == FULL for j in outer) and len(flat.tables) != 2:
        raise unsupported("a FULL JOIN is rewritten only as the one join of its block", "UNSAFE")
    sub = flat.substitute
    block = Spjg(
        flat.tables,
        conjuncts,
        tuple(ir.Output(o.name, sub(o.expr)) for o in outputs),
        grouped,
        tuple(sub(k) for k in keys),
        tuple(sub(h) for h in having),
        distinct,
        tuple(ir.SortKey(sub(k.expr), k.descending, k.nulls_first) for k in order),
        limit,
        offset,
        outer,
    )
    return _distinct_as_grouping(block)


def _peel_limit(plan: ir.Plan) -> tuple[int | None, int, ir.Plan]:
    if isinstance(plan, ir.Limit):
        return plan.count, plan.offset, plan.input
    return None, 0, plan


def _distinct_as_grouping(block: Spjg) -> Spjg:
    """SELECT DISTINCT a, b  ==  SELECT a, b … GROUP BY a, b (NULLs group together in both)."""
    if not block.distinct or block.grouped:
        return block
    keys = tuple(dict.fromkeys(o.expr for o in block.outputs))
    return Spjg(
        block.tables,
        block.conjuncts,
        block.outputs,
        True,
        keys,
        (),
        False,
        block.order,
        block.limit,
        block.offset,
        block.outer,
    )


def _reserved(plan: ir.Plan) -> set[str]:
    """The rel names this block's own FROM items use (derived tables' tables yield to them)."""
    if isinstance(plan, ir.Scan):
        return {plan.alias}
    if isinstance(plan, ir.Derived):
        return {plan.alias}
    if isinstance(plan, ir.Filter):
        return _reserved(plan.input)
    if isinstance(plan, ir.Join):
        return _reserved(plan.left) | _reserved(plan.right)
    return set()


def _spj(plan: ir.Plan, used: set[str], outer: bool = False) -> _Flat:
    if isinstance(plan, ir.Scan):
        return _Flat((TableRef(plan.alias, plan.table),))
    if isinstance(plan, ir.Filter):
        inner = _spj(plan.input, used, outer)
        return inner.merge(_Flat(conjuncts=ir.conjuncts(inner.substitute(plan.condition))))
    if isinstance(plan, ir.Join) and outer and plan.kind in ("left", "right", "full"):
        return _outer_join(plan, used)
    if isinstance(plan, ir.Join):
        if plan.kind != "inner":
            raise unsupported(
                f"{plan.kind.upper()} JOIN is not rewritten (only inner joins are)", "UNSAFE"
            )
        both = _spj(plan.left, used, outer).merge(_spj(plan.right, used, outer))
        condition = both.substitute(plan.condition) if plan.condition is not None else None
        return both.merge(_Flat(conjuncts=ir.conjuncts(condition)))
    if isinstance(plan, ir.Derived):
        return _merge_derived(plan, used)
    raise unsupported(f"{type(plan).__name__} inside FROM is not rewritten")


def _outer_join(plan: ir.Join, used: set[str]) -> _Flat:
    """A LEFT join onto one table, a RIGHT join of one table (the LEFT join mirrored), or a
    FULL join of two tables; anything else is refused (`outer_joins` says why these)."""
    preserved, nullable = (
        (plan.right, plan.left) if plan.kind == "right" else (plan.left, plan.right)
    )
    if not isinstance(nullable, ir.Scan) or (
        plan.kind == "full" and not isinstance(preserved, ir.Scan)
    ):
        raise unsupported(
            f"{plan.kind.upper()} JOIN onto anything but one table is not rewritten", "UNSAFE"
        )
    both = _spj(preserved, used, True).merge(_spj(nullable, used, True))
    on = ir.conjuncts(both.substitute(plan.condition) if plan.condition is not None else None)
    if plan.kind == "full":
        assert isinstance(preserved, ir.Scan)
        return both.merge(_Flat(outer=(OuterJoin(FULL, nullable.alias, on, preserved.alias),)))
    return both.merge(_Flat(outer=(OuterJoin(LEFT, nullable.alias, on),)))


def _merge_derived(plan: ir.Derived, used: set[str]) -> _Flat:
    inner = normalize(plan.input, outer_joins=False)  # its outer joins would not merge
    if inner.grouped or inner.limit is not None or inner.offset:
        raise unsupported(
            f"FROM subquery '{plan.alias}' aggregates or limits its rows; it is considered "
            "on its own"
        )
    renames = {ref.rel: _fresh(ref.rel, used) for ref in inner.tables}
    pairs = tuple(renames.items())
    tables = tuple(TableRef(renames[t.rel], t.table) for t in inner.tables)
    conjuncts = tuple(ir.rename_rels(c, pairs) for c in inner.conjuncts)
    env = tuple(
        (ir.Column(plan.alias, o.name), ir.rename_rels(o.expr, pairs)) for o in inner.outputs
    )
    return _Flat(tables, conjuncts, env)


def _fresh(name: str, used: set[str]) -> str:
    candidate, n = name, 2
    while candidate in used:
        candidate, n = f"{name}_{n}", n + 1
    used.add(candidate)
    return candidate
