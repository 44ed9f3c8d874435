"""What one SQL statement asks of a lattice: for each aggregate query block that reads the
lattice's fact table, the lattice columns it groups by and the ones it filters on. The blocks
are read by `sql.block_summary` (the one block analyzer); this module maps their columns to
lattice labels.

A tile answers such a block only if it holds both (HRU96's view for the query is the group-by
set plus the filtered columns). Columns are matched to lattice labels by table and column,
through the block's own table aliases:

- a qualified column `t.the_month` goes through the alias `t` to its table, then to the lattice
  node reading that table (a table the lattice reads twice is ambiguous: the column is unmapped);
- an unqualified column belongs to the first lattice table of the block that has it (USING joins
  make the join column appear in several; any of them is the same value);
- a column of a table the lattice lacks is replaced by the lattice columns that table is joined
  on (a tile grouped by the join key answers it with a join back, GL01's join compensation);
  without such a join the block is *unmapped*;
- GROUP BY ordinals and select-list aliases are resolved to their expressions; an expression
  contributes every column in it (grouping by the columns answers grouping by the expression).

WHERE conjuncts comparing columns of two different tables are joins, not filters. SELECT
DISTINCT without aggregates groups by its select list.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp

from mvlattice.lattice.lattice import Lattice, Measure
from mvlattice.sql.aggregates import AGGREGATE_OF_NODE
from mvlattice.sql.block_summary import (
    BlockSummary,
    FromItem,
    block_summaries,
    column_equality,
    is_column_equality,
    own_nodes,
)

# (schema or '', table) lower-cased -> the lattice node aliases reading it
_Key = tuple[str, str]


@dataclass(frozen=True, slots=True)
class LatticeIndex:
    """A lattice indexed for matching: nodes by table, labels by (node alias, column)."""

    root: _Key
    nodes: Mapping[_Key, tuple[str, ...]]
    labels: Mapping[tuple[str, str], str]  # (node alias, column lower) -> label
    node_columns: Mapping[str, frozenset[str]]  # node alias -> its columns, lower-cased
    expressions: Mapping[str, str] = field(default_factory=dict)  # label -> SQL over aliases
    derived: Mapping[str, str] = field(default_factory=dict)  # derived column's SQL -> label


@dataclass(frozen=True, slots=True)
class BlockAsk:
    """One aggregate block's needs, as lattice labels: the columns a tile must group by, the
    measures it must carry (`measures`; None when an aggregate is not a tile measure: an
    expression argument, an unknown function), and the columns of exact distinct counts
    (`distinct`: answered when the tile groups by them)."""

    dimensions: frozenset[str]
    filters: frozenset[str]
    measures: frozenset[Measure] | None = frozenset()
    distinct: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class StatementAsks:
    """Every aggregate block of a statement that reads the fact table; `reads_fact` says
    whether any block reads it at all; `unmapped` counts fact blocks that could not be
    mapped (a column the lattice cannot supply, or no aggregation)."""

    asks: tuple[BlockAsk, ...]
    reads_fact: bool
    unmapped: int


def target(lattice: Lattice) -> LatticeIndex:
    nodes: dict[_Key, list[str]] = {}
    for node in lattice.nodes:
        nodes.setdefault((node.schema.lower(), node.table.lower()), []).append(node.alias)
    labels = {
        (c.alias, c.column.lower()): c.label
        for c in lattice.columns
        if c.alias is not None and c.column is not None
    }
    columns: dict[str, set[str]] = {}
    for alias, column in labels:
        columns.setdefault(alias, set()).add(column)
    root = lattice.root
    return LatticeIndex(
        (root.schema.lower(), root.table.lower()),
        {key: tuple(aliases) for key, aliases in nodes.items()},
        labels,
        {alias: frozenset(cols) for alias, cols in columns.items()},
        {c.label: c.expression for c in lattice.columns},
        {_normal(c.expression): c.label for c in lattice.columns if c.derived},
    )


def statement_asks(tree: exp.Expr, lattice: LatticeIndex) -> StatementAsks:
    """The asks of every query block (SELECT) in the statement, subqueries and CTEs included."""
    asks: list[BlockAsk] = []
    reads_fact, unmapped = False, 0
    for block in block_summaries(tree):
        scope = _Scope.of(block, lattice)
        if not scope.reads_fact():
            continue
        reads_fact = True
        ask = scope.ask(block)
        if ask is None:
            unmapped += 1
        else:
            asks.append(ask)
    return StatementAsks(tuple(asks), reads_fact, unmapped)


class _Unmapped(Exception):
    """A column of the block has no lattice label."""


@dataclass(frozen=True, slots=True)
class _Scope:
    """A block's FROM: query alias -> lattice node alias (or None for other sources), in order."""

    lattice: LatticeIndex
    sources: tuple[tuple[str, str | None, bool], ...]  # (query alias, node alias, is fact)
    join_keys: Mapping[str, frozenset[str]]  # outside alias -> lattice labels it joins on

    @staticmethod
    def of(block: BlockSummary, lattice: LatticeIndex) -> _Scope:
        sources = tuple(_source(item, lattice) for item in block.from_items)
        scope = _Scope(lattice, sources, {})
        keys = _join_keys(block, scope)
        return _Scope(lattice, sources, keys)

    def reads_fact(self) -> bool:
        return any(is_fact for _, _, is_fact in self.sources)

    def ask(self, block: BlockSummary) -> BlockAsk | None:
        if not block.grouped:
            return None  # a detail query: no tile answers it
        try:
            dims = frozenset(self._labels(iter(block.group_columns)))
            filters = frozenset(self._labels(_filter_columns(block)))
            measures, distinct = self._measures(block)
        except _Unmapped:
            return None
        return BlockAsk(dims, filters, measures, distinct)

    def _measures(self, block: BlockSummary) -> tuple[frozenset[Measure] | None, frozenset[str]]:
        """The tile measures the block's aggregates need (AVG as SUM and COUNT, its roll-up
        parts), and the columns it counts distinct values of."""
        out: set[Measure] = set()
        distinct: set[str] = set()
        exotic = False
        for call in block.aggregate_calls:
            agg = AGGREGATE_OF_NODE.get(type(call))
            inner = call.this
            is_distinct = isinstance(inner, exp.Distinct)
            args = list(inner.expressions) if is_distinct else [inner] if inner else []
            if agg is None or agg == "approx_count_distinct" or len(args) > 1:
                exotic = True
                continue
            if agg == "count" and (not args or isinstance(args[0], exp.Star)):
                out.add(Measure("count"))
                continue
            if not isinstance(args[0], exp.Column):
                derived = self._derived_label(args[0])
                if derived is None:
                    exotic = True
                    continue
                labels: tuple[str, ...] = (derived,)
            else:
                labels = self.labels_of(args[0])
            if len(labels) != 1:
                exotic = True
            elif is_distinct:
                distinct.add(labels[0])
            elif agg == "avg":
                out.update((Measure("sum", labels), Measure("count", labels)))
            else:
                out.add(Measure(agg, labels))
        return (None if exotic else frozenset(out)), frozenset(distinct)

    def _derived_label(self, argument: exp.Expression) -> str | None:
        """The lattice's derived column that `argument` spells (SSB's `lo_extendedprice *
        lo_discount` is `lo_discount_revenue`), written over the star's aliases and compared
        as SQL text; None when no derived column is that expression."""
        spelled = argument.copy()
        for column in list(spelled.find_all(exp.Column)):
            labels = self.labels_of(column)
            if len(labels) != 1:
                return None
            column.replace(sqlglot.parse_one(self.lattice.expressions[labels[0]], read="spark"))
        return self.lattice.derived.get(spelled.sql(dialect="spark"))

    def _labels(self, columns: Iterator[exp.Column]) -> Iterator[str]:
        for column in columns:
            yield from self.labels_of(column)

    def labels_of(self, column: exp.Column) -> tuple[str, ...]:
        alias, label = self.resolve(column)
        if label is not None:
            return (label,)
        if alias is not None and self.join_keys.get(alias):
            return tuple(sorted(self.join_keys[alias]))
        raise _Unmapped

    def resolve(self, column: exp.Column) -> tuple[str | None, str | None]:
        """(query alias, lattice label) of a column; the label is None outside the lattice."""
        name = column.name.lower()
        if column.table:
            found = [s for s in self.sources if s[0] == column.table.lower()]
        else:
            found = [s for s in self.sources if s[1] is not None and self._has(s[1], name)]
            found = found or [s for s in self.sources if s[1] is None][:1]
        if not found:
            raise _Unmapped
        alias, node, _ = found[0]
        label = self.lattice.labels.get((node, name)) if node is not None else None
        if node is not None and label is None:
            raise _Unmapped  # a lattice table, but no such column
        return alias, label

    def _has(self, node: str, column: str) -> bool:
        return column in self.lattice.node_columns.get(node, frozenset())


def _source(item: FromItem, lattice: LatticeIndex) -> tuple[str, str | None, bool]:
    if item.table is None:
        return item.alias, None, False
    table = item.table.lower()
    if item.schema:
        key = (item.schema.lower(), table)
        nodes = lattice.nodes.get(key, ())
    else:
        keys = [k for k in lattice.nodes if k[1] == table]
        key = keys[0] if len(keys) == 1 else ("", table)
        nodes = lattice.nodes.get(key, ())
    node = nodes[0] if len(nodes) == 1 else None  # a table read twice: ambiguous, unmapped
    return item.alias, node, key == lattice.root


def _join_keys(block: BlockSummary, scope: _Scope) -> dict[str, frozenset[str]]:
    """For each source outside the lattice, the lattice labels it is equi-joined with."""
    keys: dict[str, set[str]] = {}
    for conjunct in block.conjuncts:
        pair = column_equality(conjunct)
        if pair is None:
            continue
        one, two = _try_resolve(scope, pair[0]), _try_resolve(scope, pair[1])
        for (alias, label), (_, other) in ((one, two), (two, one)):
            if alias is not None and label is None and other is not None:
                keys.setdefault(alias, set()).add(other)
    return {alias: frozenset(labels) for alias, labels in keys.items()}


def _try_resolve(scope: _Scope, column: exp.Column) -> tuple[str | None, str | None]:
    try:
        return scope.resolve(column)
    except _Unmapped:
        return None, None


def _filter_columns(block: BlockSummary) -> Iterator[exp.Column]:
    """Columns of the WHERE conjuncts that are not joins."""
    for conjunct in block.where_conjuncts:
        if not is_column_equality(conjunct):
            yield from own_nodes(conjunct, exp.Column)


def _normal(expression: str) -> str:
    return sqlglot.parse_one(expression, read="spark").sql(dialect="spark")
