"""GROUP BY GROUPING SETS / ROLLUP / CUBE as one plain GROUP BY per grouping set.

Spark answers `GROUP BY ROLLUP(a, b)` as the union of `GROUP BY a, b`, `GROUP BY a` and the
grand total, with the columns a set does not group by NULL and `GROUPING(c)` (TINYINT) /
`GROUPING_ID()` (BIGINT, the first grouping column the most significant bit) telling such a
NULL from a NULL in the data. `expand` writes that union out: one SELECT per grouping set (in
Spark's order, duplicates kept: `GROUPING SETS ((a), (a))` returns every row twice), the
rolled-up grouping columns as typed NULLs and the GROUPING functions as typed literals, so each
branch is an ordinary block the rewriter answers from its best view. Aggregate arguments keep
the real column values (Spark nulls only the grouping outputs). Over no rows Spark returns no
row for the empty set `()` when it is one set among several (the grouping id is a key), but one
row for `GROUPING SETS (())` alone (a global aggregate): such an empty-set branch gets
`HAVING COUNT(*) > 0`.

Whatever this cannot reproduce exactly raises `UnsupportedSqlError` (the block is left alone).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sqlglot import exp

from mvlattice.sql.aggregates import is_aggregate_call
from mvlattice.sql.from_sql_expr import unsupported

# CUBE over n columns is 2^n sets: past this many the union costs more than it saves.
MAX_SETS = 64
GROUPING_CONSTRUCTS = (exp.Rollup, exp.Cube, exp.GroupingSets)
# The SELECT clauses a branch repeats; ORDER BY / LIMIT / OFFSET go on the union.
ON_UNION = ("order", "limit", "offset")

# A qualified column -> its Spark type (`int`, `decimal(18,2)`), None when unknown.
ColumnType = Callable[[exp.Column], str | None]


@dataclass(frozen=True, slots=True)
class GroupingSets:
    """The grouping expressions (distinct, in Spark's order: the bits of GROUPING_ID) and each
    grouping set as positions into them, in Spark's order."""

    keys: tuple[exp.Expr, ...]
    sets: tuple[tuple[int, ...], ...]


def has_grouping_sets(select: exp.Select) -> bool:
    group = select.args.get("group")
    if group is None:
        return False
    if any(group.args.get(k) for k in ("grouping_sets", "cube", "rollup")):
        return True
    return any(isinstance(k, GROUPING_CONSTRUCTS) for k in group.expressions)


def grouping_sets(group: exp.Group) -> GroupingSets:
    """The sets of `group` (Spark's `GroupingAnalytics`: the cross product of its items, an
    item a plain expression, a ROLLUP, a CUBE or a GROUPING SETS)."""
    if group.args.get("totals") or group.args.get("all"):
        raise unsupported("GROUP BY ALL / WITH TOTALS is not rewritten")
    items: list[exp.Expr] = list(group.expressions)
    for kind, node in (("rollup", exp.Rollup), ("cube", exp.Cube)):
        if group.args.get(kind):  # `GROUP BY a, b WITH ROLLUP` is ROLLUP(a, b)
            items = [node(expressions=items)]
    if group.args.get("grouping_sets"):
        items += list(group.args["grouping_sets"])
    keys: list[exp.Expr] = []
    product: list[tuple[exp.Expr, ...]] = [()]
    for item in items:
        item_sets = _item_sets(item)
        if len(product) * len(item_sets) > MAX_SETS:
            raise unsupported(f"more than {MAX_SETS} grouping sets are not rewritten")
        product = [a + b for a in product for b in item_sets]
        keys += _item_keys(item)
    distinct = _distinct(keys)
    sets = tuple(tuple(_position(distinct, e) for e in _distinct(s)) for s in product)
    return GroupingSets(tuple(distinct), sets)


def _item_sets(item: exp.Expr) -> list[tuple[exp.Expr, ...]]:
    if isinstance(item, exp.Rollup):
        groups = [_group(g) for g in item.expressions]
        return [sum(groups[:n], ()) for n in range(len(groups), -1, -1)]
    if isinstance(item, exp.Cube):
        groups = [_group(g) for g in item.expressions]
        if len(groups) > MAX_SETS.bit_length() - 1:
            raise unsupported(f"more than {MAX_SETS} grouping sets are not rewritten")
        return [_cube_set(groups, mask) for mask in range(2 ** len(groups))]
    if isinstance(item, exp.GroupingSets):
        return [_group(g) for g in item.expressions]
    return [(_group_key(item),)]


def _cube_set(groups: list[tuple[exp.Expr, ...]], mask: int) -> tuple[exp.Expr, ...]:
    # Spark lists CUBE(a, b) as (a, b), (a), (b), (): a group is in while its bit is clear.
    last = len(groups) - 1
    chosen = [g for i, g in enumerate(groups) if not mask >> (last - i) & 1]
    return sum(chosen, ())


def _group(node: exp.Expr) -> tuple[exp.Expr, ...]:
    """One element of ROLLUP / CUBE / GROUPING SETS: `a`, `(a)`, `(a, b)` or `()`."""
    if isinstance(node, GROUPING_CONSTRUCTS):
        raise unsupported("ROLLUP / CUBE nested in GROUPING SETS are not rewritten")
    if isinstance(node, exp.Tuple):
        return tuple(_group_key(e) for e in node.expressions)
    if isinstance(node, exp.Paren):
        return (_group_key(node.this),)
    return (_group_key(node),)


def _group_key(node: exp.Expr) -> exp.Expr:
    if isinstance(node, (*GROUPING_CONSTRUCTS, exp.Tuple)):
        raise unsupported(f"grouping element '{node.sql('spark')}' is not rewritten")
    if isinstance(node, exp.Literal):  # Spark reads an integer as a position in the SELECT list
        raise unsupported(
            f"a position ('{node.sql('spark')}') among grouping sets is not rewritten"
        )
    return node


def _item_keys(item: exp.Expr) -> list[exp.Expr]:
    if isinstance(item, GROUPING_CONSTRUCTS):
        return [k for g in item.expressions for k in _group(g)]
    return [item]


def _distinct(exprs: tuple[exp.Expr, ...] | list[exp.Expr]) -> list[exp.Expr]:
    out: list[exp.Expr] = []
    for e in exprs:
        if not any(e == seen for seen in out):
            out.append(e)
    return out


def _position(keys: list[exp.Expr], node: exp.Expr) -> int:
    return next(i for i, k in enumerate(keys) if k == node)


# -- the branches ---------------------------------------------------------------------------
def expand(select: exp.Select, column_type: ColumnType) -> tuple[exp.Select, ...]:
    """One plain GROUP BY block per grouping set of `select` (a qualified block with
    GROUPING SETS / ROLLUP / CUBE), in Spark's order, without ORDER BY / LIMIT / OFFSET."""
    _check(select)
    _check_order(select)
    found = grouping_sets(select.args["group"])
    nulls = {i: _typed_null(found.keys[i], column_type) for i in _rolled_up(found)}
    only_empty = found.sets == ((),)
    return tuple(_branch(select, found, s, nulls, only_empty) for s in found.sets)


def _check(select: exp.Select) -> None:
    if select.args.get("distinct") is not None:
        # DISTINCT over the union is not DISTINCT within each set.
        raise unsupported("SELECT DISTINCT with GROUPING SETS / ROLLUP / CUBE is not rewritten")
    for clause in ("expressions", "having", "order"):
        value = select.args.get(clause)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, exp.Expr) and item.find(exp.Window):
                # A window runs over all sets at once, not over each branch.
                raise unsupported("window functions over grouping sets are not rewritten")


def _check_order(select: exp.Select) -> None:
    """ORDER BY keys must name outputs (qualification turned keys equal to an output into its
    name): the union is ordered by its columns."""
    order = select.args.get("order")
    names = {e.alias_or_name for e in select.expressions}
    for key in order.expressions if order is not None else ():
        term = key.this if isinstance(key, exp.Ordered) else key
        if not (isinstance(term, exp.Column) and not term.table and term.name in names):
            raise unsupported(
                f"ORDER BY '{term.sql('spark')}' over grouping sets is not an output: not rewritten"
            )


def _rolled_up(found: GroupingSets) -> list[int]:
    return [i for i in range(len(found.keys)) if any(i not in s for s in found.sets)]


def _typed_null(key: exp.Expr, column_type: ColumnType) -> exp.Expr:
    spark_type = column_type(key) if isinstance(key, exp.Column) else None
    if spark_type is None:
        raise unsupported(
            f"the type of rolled-up grouping expression '{key.sql('spark')}' is unknown "
            "(only columns of the model's tables are rolled up)"
        )
    return exp.cast(exp.null(), exp.DataType.build(spark_type, dialect="spark"))


def _branch(
    select: exp.Select,
    found: GroupingSets,
    grouping_set: tuple[int, ...],
    nulls: dict[int, exp.Expr],
    only_empty: bool,
) -> exp.Select:
    branch = select.copy()
    for clause in ON_UNION:
        branch.set(clause, None)
    replace = _Substitution(found, grouping_set, nulls)
    branch.set("expressions", [replace(e) for e in branch.expressions])
    having = branch.args.get("having")
    condition = replace(having.this) if having is not None else None
    if not grouping_set and not only_empty:
        nonempty = exp.GT(this=exp.Count(this=exp.Star()), expression=exp.Literal.number(0))
        condition = nonempty if condition is None else exp.and_(condition, nonempty)
    branch.set("having", exp.Having(this=condition) if condition is not None else None)
    keys = [found.keys[i].copy() for i in grouping_set]
    branch.set("group", exp.Group(expressions=keys) if keys else None)
    return branch


class _Substitution:
    """Within one grouping set: GROUPING(e) / GROUPING_ID(…) as literals, rolled-up grouping
    expressions outside aggregate calls as typed NULLs."""

    def __init__(
        self, found: GroupingSets, grouping_set: tuple[int, ...], nulls: dict[int, exp.Expr]
    ) -> None:
        self.found = found
        self.grouping_set = grouping_set
        self.nulls = nulls

    def __call__(self, node: exp.Expr) -> exp.Expr:
        """`node` (of the branch's own copy, changed in place) with the replacements."""
        for old, new in list(self._replacements(node)):
            if old is node:
                return new
            old.replace(new)
        return node

    def _replacements(self, node: exp.Expr) -> Iterator[tuple[exp.Expr, exp.Expr]]:
        if isinstance(node, exp.Grouping):
            yield node, self._grouping(node)
            return
        if isinstance(node, exp.GroupingId):
            yield node, self._grouping_id(node)
            return
        if is_aggregate_call(node) or isinstance(node, exp.AggFunc | exp.Query):
            return  # aggregates read the real values; subqueries have their own scope
        position = self._key_position(node)
        if position is not None:
            if position not in self.grouping_set:
                yield node, self.nulls[position].copy()
            return
        for child in list(node.iter_expressions()):
            yield from self._replacements(child)

    def _key_position(self, node: exp.Expr) -> int | None:
        return next((i for i, k in enumerate(self.found.keys) if k == node), None)

    def _grouping(self, node: exp.Grouping) -> exp.Expr:
        if len(node.expressions) != 1:
            raise unsupported(f"'{node.sql('spark')}' takes one grouping expression")
        bit = self._bits(node.expressions)
        return exp.cast(exp.Literal.number(bit), exp.DataType.build("TINYINT"))

    def _grouping_id(self, node: exp.GroupingId) -> exp.Expr:
        args = list(node.expressions) or list(self.found.keys)
        if len(args) != len(self.found.keys) or any(
            a != k for a, k in zip(args, self.found.keys, strict=True)
        ):
            # Spark 4 rejects grouping_id(cols) unless cols are all the grouping columns.
            raise unsupported(f"'{node.sql('spark')}' does not name the grouping columns")
        return exp.cast(exp.Literal.number(self._bits(args)), exp.DataType.build("BIGINT"))

    def _bits(self, args: list[exp.Expr]) -> int:
        """Spark's GROUPING_ID: one bit per argument, the first the most significant, set when
        the argument is rolled up in this grouping set."""
        value = 0
        for arg in args:
            position = self._key_position(arg)
            if position is None:
                raise unsupported(f"'{arg.sql('spark')}' is not a grouping expression")
            value = value << 1 | (position not in self.grouping_set)
        return value


def describe(branch: exp.Select) -> str:
    """A branch's grouping set as a message shows it: `(emps.deptno)`, `()`."""
    group = branch.args.get("group")
    keys = group.expressions if group is not None else []
    return "(" + ", ".join(k.sql("spark") for k in keys) + ")"


def union_all(branches: tuple[exp.Query, ...], select: exp.Select) -> exp.Query:
    """The branches as one UNION ALL, with `select`'s ORDER BY / LIMIT / OFFSET on it."""
    query: exp.Query = _operand(branches[0])
    for branch in branches[1:]:
        query = exp.union(query, _operand(branch), distinct=False)
    for clause in ON_UNION:
        value = select.args.get(clause)
        if value is not None:
            query.set(clause, value.copy())
    return query


def _operand(branch: exp.Query) -> exp.Query:
    # A branch rewritten into a set operation itself stays one operand of the union.
    return branch if isinstance(branch, exp.Select) else exp.Subquery(this=branch)


def column_types(select: exp.Select, type_of: Callable[[str, str], str | None]) -> ColumnType:
    """Types of the columns of the tables `select` reads directly, by `type_of(schema.table,
    column)`; None for a derived table's or a CTE's columns."""
    sources = [select.args["from_"].this] if select.args.get("from_") else []
    sources += [j.this for j in select.args.get("joins") or ()]
    tables = {
        s.alias_or_name: f"{s.db}.{s.name}".lower()
        for s in sources
        if isinstance(s, exp.Table) and s.db
    }
    return lambda c: type_of(tables[c.table], c.name.lower()) if c.table in tables else None
