"""Query blocks against the suggester's catalog: what each SELECT of a logged statement
(subqueries and CTEs too) reads. The SQL is read by `sql.block_summary` (the one block
analyzer); this module resolves its aliases and columns to catalog tables.

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

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from sqlglot import exp

from mvlattice.sql.block_summary import BlockSummary, FromItem, block_summaries, own_nodes
from mvlattice.suggest.table_catalog import Catalog, TableInfo, TableKey

NO_TABLES = "no tables"
UNKNOWN_TABLE = "unknown table"
NON_EQUI = "non-equi join"
EXPRESSION_JOIN = "join on an expression"


@dataclass(frozen=True, slots=True)
class BlockTable:
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
    tables: tuple[BlockTable, ...]
    joins: tuple[JoinPair, ...] = ()
    group: tuple[ColumnRef, ...] = ()
    filters: tuple[ColumnRef, ...] = ()
    aggregates: tuple[AggCall, ...] = ()
    skip: Skip | None = None

    def table(self, alias: str) -> BlockTable:
        return next(t for t in self.tables if t.alias == alias)


def query_blocks(tree: exp.Expr, catalog: Catalog) -> tuple[QueryBlock, ...]:
    """Every SELECT of the statement, outermost first."""
    return tuple(_CatalogBlock(b, catalog).read() for b in block_summaries(tree))


def learned_columns(tree: exp.Expr, catalog: Catalog) -> Iterator[tuple[str, str, str]]:
    """(schema, table, column) the statement shows: alias-qualified columns, the columns of a
    block reading one table only, and USING columns of the joined table."""
    for summary in block_summaries(tree):
        block = _CatalogBlock(summary, catalog)
        tables = [t for t in block.sources.values() if t is not None]
        only = tables[0] if len(tables) == 1 and len(block.sources) == 1 else None
        for column in summary.columns:
            ref = block.sources.get(column.table.lower()) if column.table else only
            if ref is not None:
                yield ref.schema, ref.table, column.name
        for item in summary.from_items:
            ref = block.sources.get(item.alias)
            for name in item.using:
                if ref is not None:
                    yield ref.schema, ref.table, name


class _CatalogBlock:
    """One block's summary read against the catalog: its aliases resolved to tables."""

    def __init__(self, summary: BlockSummary, catalog: Catalog) -> None:
        self.summary = summary
        self.catalog = catalog
        self.unknown: list[str] = []
        self.sources: dict[str, BlockTable | None] = {}  # alias -> table (None: derived)
        self.infos: dict[str, TableInfo] = {}
        for item in summary.from_items:
            self._add_source(item)

    def _add_source(self, item: FromItem) -> None:
        if item.table is None:
            self.sources[item.alias] = None
            return
        info = self.catalog.table(item.schema, item.table)
        if info is None:
            self.unknown.append(".".join(p for p in (item.schema, item.table) if p))
            self.sources[item.alias] = None
            return
        self.sources[item.alias] = BlockTable(item.alias, info.schema, info.name)
        self.infos[item.alias] = info

    @property
    def tables(self) -> tuple[BlockTable, ...]:
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
            tuple(dict.fromkeys(self._refs(self.summary.group_columns))),
            tuple(dict.fromkeys(filters)),
            tuple(self._aggregate(a) for a in self.summary.aggregate_calls),
        )

    def _skipped(self, reason: str, detail: str) -> QueryBlock:
        return QueryBlock(self.tables, skip=Skip(reason, detail))

    # -- joins and filters ------------------------------------------------------------------
    def _conditions(self) -> tuple[list[tuple[ColumnRef, ColumnRef]], list[ColumnRef]]:
        pairs: list[tuple[ColumnRef, ColumnRef]] = []
        filters: list[ColumnRef] = []
        for conjunct in self.summary.conjuncts:
            refs = list(self._refs(own_nodes(conjunct, exp.Column)))
            if len({r.alias for r in refs}) < 2:
                filters.extend(refs)
            else:
                pairs.append(self._equality(conjunct))
        pairs.extend(self._using_pairs())
        return pairs, filters

    def _equality(self, conjunct: exp.Expr) -> tuple[ColumnRef, ColumnRef]:
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
        seen: list[BlockTable] = []
        for item in self.summary.from_items:
            ref = self.sources.get(item.alias)
            if ref is None:
                continue
            for name in item.using:
                earlier = self._owner(name, seen)
                if earlier is not None:
                    yield self._column(earlier, name), self._column(ref, name)
            seen.append(ref)

    def _owner(self, column: str, earlier: list[BlockTable]) -> BlockTable | None:
        """The earlier table a USING column comes from: the first that has it, else the first."""
        having = [t for t in earlier if self.infos[t.alias].column(column) is not None]
        return next(iter(having or earlier), None)

    # -- columns ----------------------------------------------------------------------------
    def _refs(self, columns: Iterable[exp.Expr]) -> Iterator[ColumnRef]:
        for column in columns:
            ref = self.ref(column)
            if ref is not None:
                yield ref

    def ref(self, column: exp.Expr) -> ColumnRef | None:
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

    def _column(self, table: BlockTable, name: str) -> ColumnRef:
        return ColumnRef(table.alias, self.infos[table.alias].column(name) or name)

    # -- aggregates -------------------------------------------------------------------------
    def _aggregate(self, call: exp.Func) -> AggCall:
        inner = call.this
        distinct = isinstance(inner, exp.Distinct)
        if isinstance(inner, exp.Distinct):
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
