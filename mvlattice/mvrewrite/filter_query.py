"""What a query block asks of the filter tree: the sets each level of `filter_tree` searches
with, computed once per block (requirements that depend on the view's tables or grouping are
computed on first use and kept).

See `filter_keys` for the view side and why every requirement is a necessary condition of
full matching.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

from mvlattice.mvrewrite import ir
from mvlattice.mvrewrite.canon import Classes
from mvlattice.mvrewrite.filter_keys import (
    AggKey,
    Group,
    Groups,
    Namer,
    Residual,
    find,
    tokens,
    union,
)
from mvlattice.mvrewrite.output_mapping import is_output_ref
from mvlattice.mvrewrite.predicates import analyze
from mvlattice.mvrewrite.rollup import DUPLICATE_INSENSITIVE, parts
from mvlattice.mvrewrite.spjg import Spjg


class QueryKeys:
    """The query side of every level of the filter tree."""

    __slots__ = (
        "counts",
        "tables",
        "grouped",
        "aggregates",
        "ranges",
        "loose_ranges",
        "residuals",
        "_name",
        "_super",
        "_needed",
        "_requirements",
    )

    def __init__(self, query: Spjg, groups: Groups) -> None:
        preds = analyze(query.conjuncts)
        self._name = Namer(query, groups)
        self._super = _Supergroups(preds.classes, self._name)
        self.counts = Counter(t.table for t in query.tables)
        self.tables = frozenset(self.counts)
        self.grouped = query.grouped
        self.aggregates = frozenset(self._aggregates(query))
        constrained = {self._name(rep) for rep, _ in preds.ranges}
        self.ranges = frozenset(
            g for c in constrained if c is not None for g in self._super.members(c)
        )
        self.loose_ranges = self.ranges | self._super.shared
        self.residuals: frozenset[Residual] = frozenset(tokens(r) for r in preds.residuals)
        self._needed = _needed_columns(query)
        self._requirements: dict[tuple[frozenset[str], bool], frozenset[Group]] = {}

    def join_back(self, view_tables: frozenset[tuple[str, int]]) -> frozenset[str]:
        """Tables of which the query has more occurrences than the view: some of their rels
        are joined back to the view (view-partial rewriting) and read directly."""
        have = dict(view_tables)
        return frozenset(t for t, n in self.counts.items() if n > have.get(t, 0))

    def outputs(self, join_back: frozenset[str], view_grouped: bool) -> frozenset[Group]:
        """Groups the view must output (as grouping columns when it aggregates)."""
        key = (join_back, view_grouped)
        found = self._requirements.get(key)
        if found is None:
            columns = self._needed[1 if view_grouped else 0]
            found = frozenset(self._required(columns, join_back))
            self._requirements[key] = found
        return found

    def _required(self, columns: Iterable[ir.Column], join_back: frozenset[str]) -> Iterator[Group]:
        for column in columns:
            table = self._name.tables.get(column.rel)
            if table is None or table in join_back:
                continue
            group = self._name(column)
            assert group is not None
            if self._super.single(group) and not self._super.touches(group, join_back):
                yield group

    def _aggregates(self, query: Spjg) -> Iterator[AggKey]:
        """Stored aggregates a grouped view must have (`rollup`): MIN, MAX and DISTINCT ones
        may instead be computed from grouping columns, so they ask nothing."""
        for agg in query.aggregates:
            if agg.distinct or agg.func in DUPLICATE_INSENSITIVE:
                continue
            for part, _ in parts(agg):
                if not part.args:
                    yield part.func, None
                elif len(part.args) == 1 and isinstance(part.args[0], ir.Column):
                    group = self._name(part.args[0])
                    if group is not None and self._super.single(group):
                        yield part.func, group


class _Supergroups:
    """Groups merged by the query's column equalities; also which tables' columns take part,
    since a column equal to one of a joined-back table can be read from that table."""

    def __init__(self, classes: Classes, name: Namer) -> None:
        parent: dict[Group, Group] = {}
        tables: dict[Group, set[str]] = {}
        for members in classes.groups:
            named = [(name(c), name.tables.get(c.rel)) for c in members]
            first = named[0][0]
            for group, _ in named:
                if first is not None and group is not None:
                    union(parent, first, group)
            for group, table in named:
                if group is not None and table is not None:
                    tables.setdefault(group, set()).add(table)
        self._root = {g: find(parent, g) for g in parent}
        by_root: dict[Group, set[Group]] = {}
        seen: dict[Group, set[str]] = {}
        for group, root in self._root.items():
            by_root.setdefault(root, set()).add(group)
        for group, found in tables.items():
            seen.setdefault(self._root.get(group, group), set()).update(found)
        self._members = {root: frozenset(m) for root, m in by_root.items()}
        self._tables = {root: frozenset(t) for root, t in seen.items()}
        self.shared = frozenset(g for m in self._members.values() if len(m) > 1 for g in m)

    def members(self, group: Group) -> frozenset[Group]:
        return self._members.get(self._root.get(group, group), frozenset((group,)))

    def single(self, group: Group) -> bool:
        return len(self.members(group)) == 1

    def touches(self, group: Group, join_back: frozenset[str]) -> bool:
        if not join_back:
            return False
        found = self._tables.get(self._root.get(group, group), frozenset())
        return not found.isdisjoint(join_back)


def _needed_columns(query: Spjg) -> tuple[tuple[ir.Column, ...], tuple[ir.Column, ...]]:
    """Query columns that must be read from a view of rows, and from an aggregated view.

    Without GROUP BY: outputs and ORDER BY (`output_mapping._rows`). With it: grouping keys
    and the parts of outputs, HAVING and ORDER BY outside aggregates (`output_mapping._keys`,
    `rollup.finish`); over a view of rows also the aggregates' arguments (`rollup._over_rows`).
    Compensating predicates are not counted: the view may apply the same predicate itself.
    """
    order = [k.expr for k in query.order if not is_output_ref(k.expr)]
    if not query.grouped:
        rows = _columns([o.expr for o in query.outputs] + order)
        return rows, rows
    places = [o.expr for o in query.outputs] + list(query.having) + order
    plain = [p for e in places for p in _plain_parts(e)]
    grouped = _columns(list(query.keys) + plain)
    args = [a for agg in query.aggregates for a in agg.args]
    return _columns(list(query.keys) + plain + args), grouped


def _plain_parts(expr: ir.Expr) -> Iterator[ir.Expr]:
    """The largest sub-expressions without aggregate calls."""
    if not ir.has_agg(expr):
        yield expr
    elif not isinstance(expr, ir.Agg):
        for child in ir.children(expr):
            yield from _plain_parts(child)


def _columns(exprs: list[ir.Expr]) -> tuple[ir.Column, ...]:
    return tuple(dict.fromkeys(c for e in exprs for c in ir.columns(e)))
