"""What one SQL statement asks of a lattice: for each aggregate query block that reads the
lattice's fact table, the lattice columns it groups by and the ones it filters on.

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
from dataclasses import dataclass

from sqlglot import exp

from mvlattice.lattice.lattice import Lattice

# (schema or '', table) lower-cased -> the lattice node aliases reading it
_Key = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Target:
    """A lattice indexed for matching: nodes by table, labels by (node alias, column)."""

    root: _Key
    nodes: Mapping[_Key, tuple[str, ...]]
    labels: Mapping[tuple[str, str], str]  # (node alias, column lower) -> label
    node_columns: Mapping[str, frozenset[str]]  # node alias -> its columns, lower-cased


@dataclass(frozen=True, slots=True)
class BlockAsk:
    """One aggregate block's needs, as lattice labels."""

    dimensions: frozenset[str]
    filters: frozenset[str]


@dataclass(frozen=True, slots=True)
class StatementAsks:
    """Every aggregate block of a statement that reads the fact table; `reads_fact` says
    whether any block reads it at all; `unmapped` counts fact blocks that could not be
    mapped (a column the lattice cannot supply, or no aggregation)."""

    asks: tuple[BlockAsk, ...]
    reads_fact: bool
    unmapped: int


def target(lattice: Lattice) -> Target:
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
    return Target(
        (root.schema.lower(), root.table.lower()),
        {key: tuple(aliases) for key, aliases in nodes.items()},
        labels,
        {alias: frozenset(cols) for alias, cols in columns.items()},
    )


def statement_asks(tree: exp.Expression, lattice: Target) -> StatementAsks:
    """The asks of every query block (SELECT) in the statement, subqueries and CTEs included."""
    asks: list[BlockAsk] = []
    reads_fact, unmapped = False, 0
    for select in tree.find_all(exp.Select):
        scope = _Scope.of(select, lattice)
        if not scope.reads_fact():
            continue
        reads_fact = True
        ask = scope.ask(select)
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

    lattice: Target
    sources: tuple[tuple[str, str | None, bool], ...]  # (query alias, node alias, is fact)
    join_keys: Mapping[str, frozenset[str]]  # outside alias -> lattice labels it joins on

    @staticmethod
    def of(select: exp.Select, lattice: Target) -> _Scope:
        sources = tuple(_source(s, lattice) for s in _from_items(select))
        scope = _Scope(lattice, sources, {})
        keys = _join_keys(select, scope)
        return _Scope(lattice, sources, keys)

    def reads_fact(self) -> bool:
        return any(is_fact for _, _, is_fact in self.sources)

    def ask(self, select: exp.Select) -> BlockAsk | None:
        grouped = select.args.get("group") is not None or _aggregates(select)
        if not grouped and not _is_distinct(select):
            return None  # a detail query: no tile answers it
        try:
            dims = frozenset(self._labels(_group_columns(select)))
            filters = frozenset(self._labels(_filter_columns(select)))
        except _Unmapped:
            return None
        return BlockAsk(dims, filters)

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


def _from_items(select: exp.Select) -> Iterator[exp.Expression]:
    from_ = select.args.get("from_")
    if from_ is not None:
        yield from_.this
    for join in select.args.get("joins") or ():
        yield join.this


def _source(item: exp.Expression, lattice: Target) -> tuple[str, str | None, bool]:
    alias = item.alias_or_name.lower()
    if not isinstance(item, exp.Table):
        return alias, None, False
    table = item.name.lower()
    if item.db:
        key = (item.db.lower(), table)
        nodes = lattice.nodes.get(key, ())
    else:
        keys = [k for k in lattice.nodes if k[1] == table]
        key = keys[0] if len(keys) == 1 else ("", table)
        nodes = lattice.nodes.get(key, ())
    node = nodes[0] if len(nodes) == 1 else None  # a table read twice: ambiguous, unmapped
    return alias, node, key == lattice.root


def _join_keys(select: exp.Select, scope: _Scope) -> dict[str, frozenset[str]]:
    """For each source outside the lattice, the lattice labels it is equi-joined with."""
    keys: dict[str, set[str]] = {}
    for left, right in _column_equalities(select):
        one, two = _try_resolve(scope, left), _try_resolve(scope, right)
        for (alias, label), (_, other) in ((one, two), (two, one)):
            if alias is not None and label is None and other is not None:
                keys.setdefault(alias, set()).add(other)
    return {alias: frozenset(labels) for alias, labels in keys.items()}


def _try_resolve(scope: _Scope, column: exp.Column) -> tuple[str | None, str | None]:
    try:
        return scope.resolve(column)
    except _Unmapped:
        return None, None


def _column_equalities(select: exp.Select) -> Iterator[tuple[exp.Column, exp.Column]]:
    conditions = [join.args.get("on") for join in select.args.get("joins") or ()]
    where = select.args.get("where")
    conditions.append(where.this if where is not None else None)
    for condition in conditions:
        for conjunct in _conjuncts(condition):
            if _is_join_predicate(conjunct):
                yield conjunct.left, conjunct.right


def _conjuncts(condition: exp.Expression | None) -> Iterator[exp.Expression]:
    if condition is None:
        return
    if isinstance(condition, exp.And):
        yield from _conjuncts(condition.left)
        yield from _conjuncts(condition.right)
    elif isinstance(condition, exp.Paren):
        yield from _conjuncts(condition.this)
    else:
        yield condition


def _is_join_predicate(conjunct: exp.Expression) -> bool:
    """col = col over two different tables (or two unqualified names, which Spark would only
    accept from two tables)."""
    if not isinstance(conjunct, exp.EQ):
        return False
    left, right = conjunct.left, conjunct.right
    if not (isinstance(left, exp.Column) and isinstance(right, exp.Column)):
        return False
    return left.table.lower() != right.table.lower() or left.name.lower() != right.name.lower()


def _aggregates(select: exp.Select) -> bool:
    return any(_own(item, exp.AggFunc) for item in select.expressions)


def _own(node: exp.Expression, kind: type[exp.Expression]) -> list[exp.Expression]:
    """Nodes of `kind` under `node`, not descending into nested query blocks or windows."""
    found = []
    for child in node.walk(prune=lambda n: n is not node and isinstance(n, _NESTED)):
        if isinstance(child, kind) and not isinstance(child, _NESTED):
            found.append(child)
    return found


_NESTED = (exp.Subquery, exp.Select, exp.Window)


def _is_distinct(select: exp.Select) -> bool:
    distinct = select.args.get("distinct")
    return distinct is not None and not distinct.args.get("on")


def _group_columns(select: exp.Select) -> Iterator[exp.Column]:
    group = select.args["group"] if select.args.get("group") is not None else None
    if group is None:
        if _is_distinct(select) and not _aggregates(select):  # SELECT DISTINCT = GROUP BY all
            for item in select.expressions:
                yield from _own(item, exp.Column)  # type: ignore[misc]
        return
    aliases = {
        item.alias.lower(): item.this for item in select.expressions if isinstance(item, exp.Alias)
    }
    for key in group.expressions:
        yield from _own(_resolve_group_key(key, select, aliases), exp.Column)  # type: ignore[misc]
    for name in ("grouping_sets", "cube", "rollup"):
        for part in group.args.get(name) or ():
            yield from _own(part, exp.Column)  # type: ignore[misc]


def _resolve_group_key(
    key: exp.Expression, select: exp.Select, aliases: Mapping[str, exp.Expression]
) -> exp.Expression:
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


def _filter_columns(select: exp.Select) -> Iterator[exp.Column]:
    where = select.args.get("where")
    if where is None:
        return
    for conjunct in _conjuncts(where.this):
        if not _is_join_predicate(conjunct):
            yield from _own(conjunct, exp.Column)  # type: ignore[misc]
