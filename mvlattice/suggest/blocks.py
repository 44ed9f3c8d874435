"""Query blocks: what each SELECT of a logged statement (subqueries and CTEs too) reads.

For every block: its tables (each with the block's alias), the equi-joins between them — ON,
USING, and WHERE equalities of two tables' columns (comma joins) count alike —, the columns it
groups by (SELECT DISTINCT groups by its select list), the columns it filters on (WHERE and ON
conjuncts over one table) and its aggregate calls (select list, HAVING, ORDER BY).

A conjunct over two tables that is not `column = column` makes the block unusable: a non-equi
join (`a.x < b.y`, an OR across tables) or a join on an expression (`a.x + 1 = b.y`). So does a
table a closed catalog (a model) does not know. Derived tables and CTE references are not
tables of the block; their own SELECTs are blocks of their own.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from mvlattice.suggest.catalog import Catalog, TableInfo, TableKey

NO_TABLES = "no tables"
UNKNOWN_TABLE = "unknown table"
NON_EQUI = "non-equi join"
EXPRESSION_JOIN = "join on an expression"
MEASURE_AGGREGATES = ("count", "sum", "min", "max", "avg")


@dataclass(frozen=True, slots=True)
class TableRef:
    alias: str  # lower-cased
    schema: str
    table: str

    @property
    def key(self) -> TableKey:
        return (self.schema, self.table)


@dataclass(frozen=True, slots=True)
class ColumnRef:
    alias: str
    column: str


@dataclass(frozen=True, slots=True)
class JoinPair:
    """Equalities between two tables of a block, column i of `left` = column i of `right`."""

    left: str
    right: str
    left_columns: tuple[str, ...]
    right_columns: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class AggCall:
    """An aggregate call; `args` is None when its argument is not a plain column."""

    agg: str
    args: tuple[ColumnRef, ...] | None
    distinct: bool
    text: str


@dataclass(frozen=True, slots=True)
class Skip:
    reason: str
    detail: str


@dataclass(frozen=True, slots=True)
class QueryBlock:
    tables: tuple[TableRef, ...]
    joins: tuple[JoinPair, ...] = ()
    group: tuple[ColumnRef, ...] = ()
    filters: tuple[ColumnRef, ...] = ()
    aggregates: tuple[AggCall, ...] = ()
    skip: Skip | None = None

    def table(self, alias: str) -> TableRef:
        return next(t for t in self.tables if t.alias == alias)


def parse(sql: str, dialect: str | None) -> tuple[exp.Expression, ...]:
    """The statements of `sql` (sqlglot errors propagate: the caller counts them)."""
    return tuple(t for t in sqlglot.parse(sql, read=dialect) if t is not None)


def is_query(tree: exp.Expression) -> bool:
    return isinstance(tree, exp.Query)


def query_blocks(tree: exp.Expression, catalog: Catalog) -> tuple[QueryBlock, ...]:
    """Every SELECT of the statement, outermost first."""
    ctes = _cte_names(tree)
    return tuple(_Block(select, catalog, ctes).read() for select in tree.find_all(exp.Select))


def learned_columns(tree: exp.Expression, catalog: Catalog) -> Iterator[tuple[str, str, str]]:
    """(schema, table, column) the statement shows: alias-qualified columns, the columns of a
    block reading one table only, and USING columns of the joined table."""
    ctes = _cte_names(tree)
    for select in tree.find_all(exp.Select):
        block = _Block(select, catalog, ctes)
        tables = [t for t in block.sources.values() if t is not None]
        only = tables[0] if len(tables) == 1 and len(block.sources) == 1 else None
        for column in _own(select, exp.Column):
            ref = block.sources.get(column.table.lower()) if column.table else only
            if ref is not None and not isinstance(column.this, exp.Star):
                yield ref.schema, ref.table, column.name
        for join in select.args.get("joins") or ():
            ref = block.sources.get(join.this.alias_or_name.lower())
            for name in join.args.get("using") or ():
                if ref is not None:
                    yield ref.schema, ref.table, name.name


class _Block:
    """Reads one SELECT against the catalog."""

    def __init__(self, select: exp.Select, catalog: Catalog, ctes: frozenset[str]) -> None:
        self.select = select
        self.catalog = catalog
        self.unknown: list[str] = []
        self.sources: dict[str, TableRef | None] = {}  # alias -> table (None: derived)
        self.infos: dict[str, TableInfo] = {}
        for item in _from_items(select):
            self._add_source(item, ctes)

    def _add_source(self, item: exp.Expression, ctes: frozenset[str]) -> None:
        alias = item.alias_or_name.lower()
        is_table = isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier)
        if not is_table or (not item.db and item.name.lower() in ctes):
            self.sources[alias] = None
            return
        info = self.catalog.table(item.db or None, item.name)
        if info is None:
            self.unknown.append(".".join(p for p in (item.db, item.name) if p))
            self.sources[alias] = None
            return
        self.sources[alias] = TableRef(alias, info.schema, info.name)
        self.infos[alias] = info

    @property
    def tables(self) -> tuple[TableRef, ...]:
        return tuple(t for t in self.sources.values() if t is not None)

    def read(self) -> QueryBlock:
        if self.unknown:
            return self._skipped(UNKNOWN_TABLE, ", ".join(self.unknown))
        if not self.tables:
            return self._skipped(NO_TABLES, "")
        try:
            pairs, filters = self._conditions()
        except _Unusable as bad:
            return self._skipped(bad.reason, bad.detail)
        return QueryBlock(
            self.tables,
            _pairs(pairs),
            tuple(dict.fromkeys(self._refs(_group_columns(self.select)))),
            tuple(dict.fromkeys(filters)),
            tuple(self._aggregate(a) for a in _aggregates(self.select)),
        )

    def _skipped(self, reason: str, detail: str) -> QueryBlock:
        return QueryBlock(self.tables, skip=Skip(reason, detail))

    # -- joins and filters ------------------------------------------------------------------
    def _conditions(self) -> tuple[list[tuple[ColumnRef, ColumnRef]], list[ColumnRef]]:
        pairs: list[tuple[ColumnRef, ColumnRef]] = []
        filters: list[ColumnRef] = []
        for conjunct in self._conjuncts():
            refs = list(self._refs(_own(conjunct, exp.Column)))
            if len({r.alias for r in refs}) < 2:
                filters.extend(refs)
            else:
                pairs.append(self._equality(conjunct))
        pairs.extend(self._using_pairs())
        return pairs, filters

    def _conjuncts(self) -> Iterator[exp.Expression]:
        for join in self.select.args.get("joins") or ():
            yield from _split_and(join.args.get("on"))
        where = self.select.args.get("where")
        yield from _split_and(where.this if where is not None else None)

    def _equality(self, conjunct: exp.Expression) -> tuple[ColumnRef, ColumnRef]:
        text = conjunct.sql()
        if not isinstance(conjunct, exp.EQ):
            raise _Unusable(NON_EQUI, text)
        left, right = conjunct.left, conjunct.right
        if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
            raise _Unusable(EXPRESSION_JOIN, text)
        one, two = self.ref(left), self.ref(right)
        assert one is not None and two is not None  # both resolved: two aliases were seen
        return one, two

    def _using_pairs(self) -> Iterator[tuple[ColumnRef, ColumnRef]]:
        seen: list[TableRef] = []
        for item in _from_items(self.select):
            ref = self.sources.get(item.alias_or_name.lower())
            join = item.parent if isinstance(item.parent, exp.Join) else None
            for name in (join.args.get("using") or ()) if join is not None else ():
                earlier = self._owner(name.name, seen) if ref is not None else None
                if earlier is not None and ref is not None:
                    yield self._column(earlier, name.name), self._column(ref, name.name)
            if ref is not None:
                seen.append(ref)

    def _owner(self, column: str, earlier: list[TableRef]) -> TableRef | None:
        """The earlier table a USING column comes from: the first that has it, else the first."""
        having = [t for t in earlier if self.infos[t.alias].column(column) is not None]
        return (having or earlier or [None])[0]

    # -- columns ----------------------------------------------------------------------------
    def _refs(self, columns: Iterator[exp.Expression] | list) -> Iterator[ColumnRef]:
        for column in columns:
            ref = self.ref(column)
            if ref is not None:
                yield ref

    def ref(self, column: exp.Expression) -> ColumnRef | None:
        """The block table a column belongs to; None for derived sources and unknown names."""
        if not isinstance(column, exp.Column) or isinstance(column.this, exp.Star):
            return None
        if column.table:
            table = self.sources.get(column.table.lower())
            return self._column(table, column.name) if table is not None else None
        owners = [t for t in self.tables if self.infos[t.alias].column(column.name)]
        if not owners and len(self.sources) == 1 and self.tables:
            owners = list(self.tables)
        return self._column(owners[0], column.name) if owners else None

    def _column(self, table: TableRef, name: str) -> ColumnRef:
        return ColumnRef(table.alias, self.infos[table.alias].column(name) or name)

    # -- aggregates -------------------------------------------------------------------------
    def _aggregate(self, call: exp.Expression) -> AggCall:
        inner = call.this if isinstance(call, exp.AggFunc) else None
        distinct = isinstance(inner, exp.Distinct)
        if distinct:
            inner = inner.expressions[0] if len(inner.expressions) == 1 else None
        args: tuple[ColumnRef, ...] | None
        if isinstance(inner, exp.Star) or (call.key == "count" and inner is None and not distinct):
            args = ()
        else:
            ref = self.ref(inner) if isinstance(inner, exp.Column) else None
            args = (ref,) if ref is not None else None
        return AggCall(call.key, args, distinct, call.sql())


class _Unusable(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(reason)
        self.reason, self.detail = reason, detail


def _pairs(pairs: list[tuple[ColumnRef, ColumnRef]]) -> tuple[JoinPair, ...]:
    """Equalities grouped by the two tables they join (in order first seen)."""
    grouped: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for a, b in pairs:
        if a.alias == b.alias:
            continue
        if (b.alias, a.alias) in grouped:
            a, b = b, a
        columns = grouped.setdefault((a.alias, b.alias), [])
        if (a.column, b.column) not in columns:
            columns.append((a.column, b.column))
    return tuple(
        JoinPair(left, right, tuple(c for c, _ in cols), tuple(c for _, c in cols))
        for (left, right), cols in grouped.items()
    )


def _cte_names(tree: exp.Expression) -> frozenset[str]:
    return frozenset(c.alias_or_name.lower() for c in tree.find_all(exp.CTE))


def _from_items(select: exp.Select) -> Iterator[exp.Expression]:
    from_ = select.args.get("from_")
    if from_ is not None:
        yield from_.this
    for join in select.args.get("joins") or ():
        yield join.this


def _split_and(condition: exp.Expression | None) -> Iterator[exp.Expression]:
    if condition is None:
        return
    if isinstance(condition, exp.And):
        yield from _split_and(condition.left)
        yield from _split_and(condition.right)
    elif isinstance(condition, exp.Paren):
        yield from _split_and(condition.this)
    else:
        yield condition


_NESTED = (exp.Subquery, exp.Select, exp.Window)


def _own(node: exp.Expression, kind: type[exp.Expression]) -> list[exp.Expression]:
    """Nodes of `kind` under `node`, not descending into nested query blocks or windows."""
    found = []
    for child in node.walk(prune=lambda n: n is not node and isinstance(n, _NESTED)):
        if isinstance(child, kind) and not isinstance(child, _NESTED):
            found.append(child)
    return found


def _group_columns(select: exp.Select) -> Iterator[exp.Expression]:
    group = select.args.get("group")
    if group is None:
        if select.args.get("distinct") is not None:
            for item in select.expressions:
                yield from _own(item, exp.Column)
        return
    aliases = {i.alias.lower(): i.this for i in select.expressions if isinstance(i, exp.Alias)}
    for key in group.expressions:
        yield from _own(_group_key(key, select, aliases), exp.Column)
    for name in ("grouping_sets", "cube", "rollup"):
        for part in group.args.get(name) or ():
            yield from _own(part, exp.Column)


def _group_key(key: exp.Expression, select: exp.Select, aliases: dict) -> exp.Expression:
    """GROUP BY 2 is the second select item; GROUP BY name may be a select-list alias."""
    if isinstance(key, exp.Literal) and key.is_int:
        position = int(key.this) - 1
        if 0 <= position < len(select.expressions):
            item = select.expressions[position]
            return item.this if isinstance(item, exp.Alias) else item
    if isinstance(key, exp.Column) and not key.table and key.name.lower() in aliases:
        return aliases[key.name.lower()]
    return key


def _aggregates(select: exp.Select) -> list[exp.Expression]:
    """Aggregate calls of the block itself (select list, HAVING, ORDER BY), not of windows or
    nested blocks, each once."""
    calls = _own(select, exp.AggFunc)
    return list({c.sql(): c for c in calls}.values())
