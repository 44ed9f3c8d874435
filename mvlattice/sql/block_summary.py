"""What one query block (a SELECT) asks, read off its syntax: the ONE block analyzer.

The planner's workload analysis (`plan.workload_asks`) and the suggester
(`suggest.catalog_blocks`) read unqualified SQL from logs and files: they need a lenient
summary of every block, never an error. The rewriter reads the same clauses strictly, after
qualification (`from_sql`), and shares the definitions below (aggregate calls, conjuncts) so
that the three cannot disagree on what a block aggregates or filters.

A summary holds, per SELECT (subqueries and CTE bodies are blocks of their own):

- its FROM items in order, each with the block's alias; derived tables and CTE references are
  items without a table (their own SELECTs are summarized separately);
- its conjuncts, ON (in join order) and WHERE apart, split at AND through parentheses;
- its grouping columns: GROUP BY keys (ordinals and select-list aliases resolved to their
  expressions; an expression contributes every column in it), GROUPING SETS / CUBE / ROLLUP
  parts, and for SELECT DISTINCT without aggregates the select list;
- its aggregate calls (select list, HAVING, ORDER BY; not of windows or nested blocks), each
  once.

Mapping columns to tables (a lattice, a catalog) is the caller's: that is where the readers
differ, and only there.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TypeVar

from sqlglot import exp

from mvlattice.sql.aggregates import is_aggregate_call

# Nodes that open a scope of their own: their columns and aggregates are not the block's.
NESTED = (exp.Query, exp.Window)
# The clauses where a block's aggregate calls may stand (elsewhere Spark rejects them).
AGGREGATE_PLACES = ("expressions", "having", "order")
_Node = TypeVar("_Node", bound=exp.Expr)


@dataclass(frozen=True, slots=True)
class FromItem:
    """One FROM or JOIN item. `table` is None for a derived table, a CTE reference or any other
    source that is not a stored table."""

    alias: str  # lower-cased; the table's name when it has no alias
    schema: str | None  # as written; None when unqualified
    table: str | None  # as written
    using: tuple[str, ...] = ()  # USING columns of the join that brings it in


@dataclass(frozen=True, slots=True)
class BlockSummary:
    select: exp.Select
    from_items: tuple[FromItem, ...]
    on_conjuncts: tuple[exp.Expr, ...]
    where_conjuncts: tuple[exp.Expr, ...]
    group_columns: tuple[exp.Column, ...]
    aggregate_calls: tuple[exp.Func, ...]
    has_group_by: bool
    distinct: bool  # SELECT DISTINCT (not DISTINCT ON)

    @property
    def grouped(self) -> bool:
        """GROUP BY, aggregates or DISTINCT: a tile (an aggregate) can answer the block."""
        return self.has_group_by or bool(self.aggregate_calls) or self.distinct

    @property
    def conjuncts(self) -> tuple[exp.Expr, ...]:
        """ON conjuncts in join order, then WHERE conjuncts."""
        return self.on_conjuncts + self.where_conjuncts

    @property
    def columns(self) -> tuple[exp.Column, ...]:
        """Every column reference of the block itself (not of nested blocks), stars excluded."""
        return tuple(
            c for c in own_nodes(self.select, exp.Column) if not isinstance(c.this, exp.Star)
        )


def block_summaries(tree: exp.Expr) -> tuple[BlockSummary, ...]:
    """Every SELECT of the statement (subqueries and CTE bodies too), outermost first."""
    ctes = frozenset(c.alias_or_name.lower() for c in tree.find_all(exp.CTE))
    return tuple(summarize(select, ctes) for select in tree.find_all(exp.Select))


def summarize(select: exp.Select, ctes: frozenset[str] = frozenset()) -> BlockSummary:
    """One block; `ctes` are the statement's CTE names (a FROM item naming one is no table)."""
    where = select.args.get("where")
    aggregates = aggregate_calls(select)
    distinct = _is_distinct(select)
    return BlockSummary(
        select,
        tuple(_from_item(item, ctes) for item in from_items(select)),
        tuple(c for join in select.args.get("joins") or () for c in conjuncts(join.args.get("on"))),
        tuple(conjuncts(where.this if where is not None else None)),
        tuple(_group_columns(select, distinct and not aggregates)),
        aggregates,
        select.args.get("group") is not None,
        distinct,
    )


def from_items(select: exp.Select) -> Iterator[exp.Expr]:
    from_ = select.args.get("from_")
    if from_ is not None:
        yield from_.this
    for join in select.args.get("joins") or ():
        yield join.this


def conjuncts(condition: exp.Expr | None) -> Iterator[exp.Expr]:
    """`condition` split at AND (through parentheses)."""
    if condition is None:
        return
    if isinstance(condition, exp.And):
        yield from conjuncts(condition.left)
        yield from conjuncts(condition.right)
    elif isinstance(condition, exp.Paren):
        yield from conjuncts(condition.this)
    else:
        yield condition


def column_equality(conjunct: exp.Expr) -> tuple[exp.Column, exp.Column] | None:
    """The two sides of `col = col` over two different tables (or two unqualified names,
    which Spark would only accept from two tables): a join, not a filter. None otherwise."""
    if not isinstance(conjunct, exp.EQ):
        return None
    left, right = conjunct.left, conjunct.right
    if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
        return None
    same_table = left.table.lower() == right.table.lower()
    return None if same_table and left.name.lower() == right.name.lower() else (left, right)


def is_column_equality(conjunct: exp.Expr) -> bool:
    return column_equality(conjunct) is not None


def own_nodes(node: exp.Expr, kind: type[_Node]) -> list[_Node]:
    """Nodes of `kind` under `node`, not inside nested blocks or windows (breadth first)."""
    found: list[_Node] = []
    for child in node.walk(prune=lambda n: n is not node and isinstance(n, NESTED)):
        if isinstance(child, kind) and not isinstance(child, NESTED):
            found.append(child)
    return found


def aggregate_calls(select: exp.Select) -> tuple[exp.Func, ...]:
    """The block's own aggregate calls (select list, HAVING, ORDER BY), each once (by text),
    in breadth-first order over the whole block."""
    calls = [
        c
        for c in own_nodes(select, exp.Func)
        if is_aggregate_call(c) and _clause(c, select) in AGGREGATE_PLACES
    ]
    return tuple({call.sql(): call for call in calls}.values())


def _clause(node: exp.Expr, select: exp.Select) -> str | None:
    """The argument of `select` that holds `node` (`expressions`, `where`, `having`, …)."""
    while node.parent is not None and node.parent is not select:
        node = node.parent
    return node.arg_key if node.parent is select else None


def _from_item(item: exp.Expr, ctes: frozenset[str]) -> FromItem:
    alias = item.alias_or_name.lower()
    join = item.parent if isinstance(item.parent, exp.Join) else None
    using = tuple(n.name for n in join.args.get("using") or ()) if join is not None else ()
    if not (isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier)):
        return FromItem(alias, None, None, using)  # a derived table, a table function, …
    if not item.db and item.name.lower() in ctes:
        return FromItem(alias, None, None, using)  # a CTE reference
    return FromItem(alias, item.db or None, item.name, using)


def _is_distinct(select: exp.Select) -> bool:
    distinct = select.args.get("distinct")
    return distinct is not None and not distinct.args.get("on")


def _group_columns(select: exp.Select, distinct_groups: bool) -> Iterator[exp.Column]:
    group = select.args.get("group")
    if group is None:
        if distinct_groups:  # SELECT DISTINCT a, b = GROUP BY a, b
            for item in select.expressions:
                yield from own_nodes(item, exp.Column)
        return
    aliases = {i.alias.lower(): i.this for i in select.expressions if isinstance(i, exp.Alias)}
    for key in group.expressions:
        yield from own_nodes(_group_key(key, select, aliases), exp.Column)
    for name in ("grouping_sets", "cube", "rollup"):
        for part in group.args.get(name) or ():
            yield from own_nodes(part, exp.Column)


def _group_key(key: exp.Expr, select: exp.Select, aliases: Mapping[str, exp.Expr]) -> exp.Expr:
    """GROUP BY 2 is the second select item; GROUP BY name may be a select-list alias."""
    if isinstance(key, exp.Literal) and key.is_int:
        position = int(key.this) - 1
        if 0 <= position < len(select.expressions):
            item = select.expressions[position]
            return item.this if isinstance(item, exp.Alias) else item
        return key
    if isinstance(key, exp.Column) and not key.table and key.name.lower() in aliases:
        return aliases[key.name.lower()]
    return key
