"""What a query block asks of the filter tree: the sets each level of `filter_tree` searches
with. Most are computed once per block; what the view must output depends on the partition
the search is in (the view's tables, grouping, ranges and residual predicates), and is computed
once per partition reached.

See `filter_keys` for the view side and why every requirement is a necessary condition of
full matching.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

from mvlattice.mvrewrite.index.filter_keys import (
    AggKey,
    Argument,
    Group,
    Groups,
    Namer,
    Residual,
    agg_name,
    expression_key,
    find,
    tokens,
    union,
)
from mvlattice.mvrewrite.match.normal_form import compound
from mvlattice.mvrewrite.match.output_mapping import is_output_ref
from mvlattice.mvrewrite.match.predicates import Predicates
from mvlattice.mvrewrite.match.rollup import parts
from mvlattice.sql import ir
from mvlattice.sql.canon import Classes
from mvlattice.sql.spjg import Spjg

Tables = frozenset[tuple[str, int]]  # a view's tables and their occurrences
EITHER_WAY = ("min", "max", "count_distinct")  # stored, or computed from a grouping column


class QueryKeys:
    """The query side of every level of the filter tree."""

    __slots__ = (
        "counts",
        "tables",
        "grouped",
        "ranges",
        "loose_ranges",
        "residuals",
        "_name",
        "_super",
        "_needed",
        "_joins",
        "_partitions",
        "_range_columns",
        "_residual_columns",
        "_aggregates",
        "_cache",
    )

    def __init__(self, query: Spjg, groups: Groups) -> None:
        preds = groups.analyze(query)
        self._name = Namer(query, groups)
        self._super = _Supergroups(preds.classes, self._name)
        self.counts = Counter(t.table for t in query.tables)
        self.tables = frozenset(self.counts)
        self.grouped = query.grouped
        self._range_columns = self._compensated_ranges(preds)
        ranged = [rep for rep, _ in preds.ranges] + _disjunction_columns(preds.residuals)
        self.ranges = frozenset(g for rep in ranged for g in self._members_of(rep))
        self.loose_ranges = self.ranges | self._super.shared
        self._residual_columns = tuple(
            (tokens(r), ir.columns(r)) for r in preds.residuals if not compound(r)
        )
        self.residuals: frozenset[Residual] = frozenset(
            [t for t, _ in self._residual_columns] + _disjunction_atoms(preds.residuals)
        )
        self._needed = _needed_columns(query)
        self._joins = self._class_tables(preds.classes)
        self._aggregates = tuple(self._aggregate_parts(query))
        self._cache: dict[tuple, frozenset] = {}
        self._partitions: dict[Tables, tuple[frozenset[str], frozenset[str]]] = {}

    def _class_tables(self, classes: Classes) -> tuple[tuple[frozenset[str], Group], ...]:
        """(tables, group) of each query class whose columns are all of one group."""
        out = []
        for members in classes.groups:
            group = self._name(members[0])
            found = [self._name.tables.get(c.rel) for c in members]
            tables = frozenset(t for t in found if t is not None)
            if group is not None and None not in found and self._super.single(group):
                out.append((tables, group))
        return tuple(out)

    def _compensated_ranges(self, preds: Predicates) -> tuple[tuple[ir.Column, frozenset], ...]:
        """(column, its supergroup) of each range the view must apply when it has none on that
        class (`range_subsumption`: the query's range over the class representative). An
        empty range is applied as FALSE, without a column; two ranges of one kind whose
        classes a lossless join may merge could become empty together, so neither counts."""
        found = [
            (rep, kind, self._members_of(rep))
            for (rep, kind), wanted in preds.ranges.items()
            if not wanted.is_all and not wanted.is_empty
        ]
        shared = Counter((kind, members) for _, kind, members in found)
        return tuple((rep, m) for rep, kind, m in found if m and shared[kind, m] == 1)

    def _members_of(self, column: ir.Column) -> frozenset[Group]:
        group = self._name(column)
        return frozenset() if group is None else self._super.members(group)

    def partition(self, view_tables: Tables) -> tuple[frozenset[str], frozenset[str]]:
        """(tables joined back, tables the view lacks altogether) for a view's tables: the
        query has more occurrences of a table joined back than the view, so some of its
        rels are joined back to the view (view-partial rewriting) and read directly."""
        found = self._partitions.get(view_tables)
        if found is None:
            have = dict(view_tables)
            join_back = frozenset(t for t, n in self.counts.items() if n > have.get(t, 0))
            found = (join_back, frozenset(t for t in join_back if t not in have))
            self._partitions[view_tables] = found
        return found

    # -- what the view must output ----------------------------------------------------------
    def outputs(self, view_tables: Tables, view_grouped: bool) -> frozenset[Group]:
        """Groups the view must output (as grouping columns when it aggregates) for the
        query's outputs, grouping and joins to tables the view lacks."""
        join_back, lacking = self.partition(view_tables)
        key = ("outputs", join_back, lacking, view_grouped)
        found = self._cache.get(key)
        if found is None:
            columns = self._needed[1 if view_grouped else 0]
            found = frozenset(self._readable(columns, join_back))
            found |= self._join_columns(join_back, lacking)
            self._cache[key] = found
        return found

    def compensation(
        self,
        view_tables: Tables,
        view_ranges: frozenset[Group],
        view_residuals: frozenset[Residual],
    ) -> frozenset[Group]:
        """Groups the view must output so that the query's predicates it does not apply
        itself can be applied to it: ranges on classes it leaves free, residual predicates
        it lacks (`range_subsumption`, `residual_subsumption`, `output_mapping._filters`)."""
        if not self._range_columns and not self._residual_columns:
            return frozenset()
        join_back = self.partition(view_tables)[0]
        key = ("compensation", join_back, view_ranges, view_residuals)
        found = self._cache.get(key)
        if found is None:
            columns = [c for c, members in self._range_columns if members.isdisjoint(view_ranges)]
            columns += [
                c for t, cs in self._residual_columns if t not in view_residuals for c in cs
            ]
            found = frozenset(self._readable(columns, join_back))
            self._cache[key] = found
        return found

    def _readable(self, columns: Iterable[ir.Column], join_back: frozenset[str]) -> Iterator[Group]:
        """Groups of `columns` the view must output (`available.Available.express`): not
        columns of tables joined back or equal to one, nor a choice between groups."""
        for column in columns:
            table = self._name.tables.get(column.rel)
            if table is None or table in join_back:
                continue
            group = self._name(column)
            assert group is not None
            if self._super.single(group) and not self._super.touches(group, join_back):
                yield group

    def _join_columns(self, join_back: frozenset[str], lacking: frozenset[str]) -> frozenset[Group]:
        """A query class equating a column of a table the view lacks with one of a table all
        of whose rels the view holds needs a view column on that side (the equality is
        applied after joining back: `equivalence._compensations`, `Available.express_part`)."""
        if not lacking:
            return frozenset()
        return frozenset(
            group
            for tables, group in self._joins
            if not tables.isdisjoint(lacking) and not tables <= join_back
        )

    # -- what an aggregated view must store -------------------------------------------------
    def aggregates(self, view_tables: Tables) -> frozenset[AggKey]:
        """Aggregates an aggregated view must offer (`rollup`): the stored parts of SUM,
        COUNT and AVG; MIN, MAX or COUNT(DISTINCT) of a column either stored or from a
        grouping column — unless the column can be read from a table joined back."""
        join_back = self.partition(view_tables)[0]
        key = ("aggregates", join_back)
        found = self._cache.get(key)
        if found is None:
            found = frozenset(
                (func, group)
                for func, group, column in self._aggregates
                if func not in EITHER_WAY or not self._open(column, join_back)
            )
            self._cache[key] = found
        return found

    def _open(self, column: ir.Column | None, join_back: frozenset[str]) -> bool:
        if column is None:
            return False
        group = self._name(column)
        return self._name.tables.get(column.rel) in join_back or (
            group is not None and self._super.touches(group, join_back)
        )

    def _aggregate_parts(self, query: Spjg) -> Iterator[tuple[str, Argument, ir.Column | None]]:
        """(function, argument, the argument column) of every stored aggregate the query may
        need. MIN, MAX and COUNT(DISTINCT) of an expression may be computed from grouping
        columns inside it, and other DISTINCT aggregates are never rolled up: neither asks."""
        for agg in query.aggregates:
            if (agg.distinct and agg.func != "count") or agg.func == "approx_count_distinct":
                continue  # approximate: from a sketch or a grouping column, either way
            pieces = [agg] if agg.distinct or agg.func in EITHER_WAY else [p for p, _ in parts(agg)]
            for part in pieces:
                func, args = agg_name(part), part.args
                if not args:
                    yield func, None, None
                elif len(args) == 1 and isinstance(args[0], ir.Column):
                    group = self._name(args[0])
                    if group is not None and self._super.single(group):
                        yield func, group, args[0]
                elif len(args) == 1 and func not in EITHER_WAY:
                    yield func, expression_key(args[0]), None


class _Supergroups:
    """Groups merged by the query's column equalities; also which tables' columns take part,
    since a column equal to one of a joined-back table can be read from that table."""

    def __init__(self, classes: Classes, name: Namer) -> None:
        parent: dict[Group, Group] = {}
        tables: dict[Group, set[str]] = {}
        for members in classes.groups:
            named = [(name(c), name.tables.get(c.rel)) for c in members]
            first = named[0][0]
            for group, table in named:
                if first is not None and group is not None:
                    union(parent, first, group)
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


def _disjunction_columns(residuals: Iterable[ir.Expr]) -> list[ir.Column]:
    """Columns a disjunction may restrict: a query implying a view's disjunction may do so
    through its own (`implication`), so they count as ranges of the query."""
    return [c for r in residuals if compound(r) for c in ir.columns(r)]


def _disjunction_atoms(residuals: Iterable[ir.Expr]) -> list[Residual]:
    """The predicates inside the query's disjunctions: one of them may imply a view's
    residual predicate (`(a AND r) OR (b AND r)` implies r). A disjunction itself is
    compensated only when the view does not imply it, so it asks the view for nothing."""
    return [tokens(atom) for r in residuals if compound(r) for atom in _leaves(r)]


def _leaves(expr: ir.Expr) -> Iterator[ir.Expr]:
    if isinstance(expr, ir.And | ir.Or | ir.Not):
        for child in ir.children(expr):
            yield from _leaves(child)
    else:
        yield expr


def _needed_columns(query: Spjg) -> tuple[tuple[ir.Column, ...], tuple[ir.Column, ...]]:
    """Query columns a view of rows, and an aggregated view, must provide.

    Without GROUP BY: outputs and ORDER BY (`output_mapping._rows`). With it: grouping keys
    and the parts of outputs, HAVING and ORDER BY outside aggregates (`output_mapping._keys`,
    `rollup.finish`); over a view of rows also the aggregates' arguments (`rollup._over_rows`).
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
