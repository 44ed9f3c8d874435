"""What the filter tree (GL01 §4) knows of a view: its keys, one per level of the tree.

Each key states a necessary condition of full matching (`match.STEPS`) over table and column
*names* instead of rels, so it is computed once per view and compared with any query without
mapping tables. Wherever the matcher can get around a condition — a table joined back
(view-partial), a lossless join it adds (query-partial), an equality of the query, an
expression the view already computes, a union for rows outside the view's range — the key is
loosened so that the view passes. The filter tree may let a view through that then fails; it
must never stop one that would match.

Columns are compared by *group*: columns linked by a declared foreign key or a lattice edge
share a group, because a lossless join the matcher adds makes them equal. The query's column
equalities merge groups further into *supergroups*; a requirement whose supergroup holds more
than one group is a choice between columns, and is dropped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from mvlattice.mvrewrite.match.atoms import text_columns, typed
from mvlattice.mvrewrite.match.keys import Keys
from mvlattice.mvrewrite.match.normal_form import compound
from mvlattice.mvrewrite.match.predicates import Predicates, analyze
from mvlattice.mvrewrite.match.range_subsumption import SPLITTABLE_KINDS
from mvlattice.mvrewrite.views import View
from mvlattice.sql import ir
from mvlattice.sql.canon import Classes
from mvlattice.sql.spjg import Spjg, TableRef

Group = tuple[str, str]  # (table, column): the name of a group of columns linked by keys
Argument = Group | tuple[str, frozenset] | None  # a column's group, an expression's tokens
AggKey = tuple[str, Argument]  # (function, argument) of an aggregate
GROUPING_AGGREGATES = ("min", "max", "count_distinct")  # computed from a grouping column
Token = tuple[str, ...]
Residual = frozenset[Token]  # what canonical forms cannot change about a predicate
COMPARISON_CLASS = {"<": "<>", ">": "<>", "<=": "<=>=", ">=": "<=>="}  # mirrored by canon


@dataclass(frozen=True, slots=True)
class Groups:
    """(table, column) -> its group; a column in no foreign key is a group of its own. Also
    the column types the matcher knows (`Keys.types`), which decide what is a range."""

    names: Mapping[Group, Group] = field(default_factory=lambda: MappingProxyType({}))
    types: Mapping[Group, str] = field(default_factory=lambda: MappingProxyType({}))

    def of(self, table: str, column: str) -> Group:
        return self.names.get((table, column), (table, column))

    def analyze(self, block: Spjg) -> Predicates:
        """The block's predicates as matching reads them (`equivalence.check`): columns known
        to be STRING are compared as strings."""
        type_of = typed(block.tables, lambda table, column: self.types.get((table, column)))
        return analyze(block.conjuncts, text_columns(block.conjuncts, type_of))


def groups_of(keys: Keys) -> Groups:
    """Every foreign key links its columns to the referenced ones (NULLs or not: a loose
    grouping only lets more views through)."""
    parent: dict[Group, Group] = {}
    for fk in keys.foreign:
        for column, referenced in zip(fk.columns, fk.ref_columns, strict=True):
            union(parent, (fk.table, column), (fk.ref_table, referenced))
    names = MappingProxyType({member: find(parent, member) for member in parent})
    return Groups(names, keys.types)


@dataclass(kw_only=True, frozen=True, slots=True)
class ViewKeys:
    hub: frozenset[str]  # tables that no lossless join can add: the query must read them
    tables: frozenset[tuple[str, int]]  # (table, occurrences)
    grouped: bool
    outputs: frozenset[Group]  # columns of the outputs a query may read (grouping ones)
    aggregates: frozenset[AggKey]
    strict_ranges: frozenset[Group]  # ranges no union can complete (strings, booleans)
    split_ranges: frozenset[Group]  # ranges a union with the base tables may complete
    residuals: frozenset[Residual]


def view_keys(view: View, keys: Keys, groups: Groups) -> ViewKeys | None:
    """The view's keys; None for a view full matching always rejects (`match._unusable`)."""
    block = view.block
    if block is None or block.having or block.limit is not None or block.offset:
        return None
    if block.distinct:  # DISTINCT over groups
        return None
    name = Namer(block, groups)
    preds = groups.analyze(block)
    strict, split = _view_ranges(preds, name)
    offered = frozenset(_offered(block, name))
    return ViewKeys(
        hub=hub(block, keys, preds),
        tables=frozenset(Counter(t.table for t in block.tables).items()),
        grouped=block.grouped,
        outputs=offered,
        aggregates=frozenset(_view_aggregates(block, name, offered)),
        strict_ranges=strict,
        split_ranges=split - strict,
        # a disjunction may be implied by other predicates (`implication`): not a key
        residuals=frozenset(tokens(r) for r in preds.residuals if not compound(r)),
    )


def hub(block: Spjg, keys: Keys, preds: Predicates | None = None) -> frozenset[str]:
    """GL01's hub: the tables of the rels no lossless join reaches from another rel of the
    view. Query-partial rewriting (`cardinality`) only adds a view table the query lacks along
    such a join, so every hub table must be one the query reads."""
    classes = (preds or analyze(block.conjuncts)).classes
    reached = {
        added.rel
        for source in block.tables
        for added in block.tables
        if source.rel != added.rel and _lossless(keys, classes, source, added)
    }
    return frozenset(t.table for t in block.tables if t.rel not in reached)


def _lossless(keys: Keys, classes: Classes, source: TableRef, added: TableRef) -> bool:
    """`cardinality._lossless` on the view's own rels (the same test, before mapping)."""
    for fk in keys.references(source.table, added.table):
        if not keys.never_null(fk) or not keys.is_unique(added.table, frozenset(fk.ref_columns)):
            continue
        if all(
            classes.rep(ir.Column(source.rel, c)) == classes.rep(ir.Column(added.rel, r))
            for c, r in zip(fk.columns, fk.ref_columns, strict=True)
        ):
            return True
    return False


class Namer:
    """The group of a column of one block."""

    def __init__(self, block: Spjg, groups: Groups) -> None:
        self.tables = {t.rel: t.table for t in block.tables}
        self.groups = groups

    def __call__(self, column: ir.Column) -> Group | None:
        table = self.tables.get(column.rel)
        return None if table is None else self.groups.of(table, column.name)

    def all(self, expr: ir.Expr) -> Iterator[Group]:
        for column in ir.columns(expr):
            found = self(column)
            if found is not None:
                yield found


def _offered(block: Spjg, name: Namer) -> Iterator[Group]:
    """Every column inside an output a query can read (`output_mapping._available`): a query
    expression the view computes whole needs none of its columns, so all of them count."""
    for output in block.outputs:
        if not (block.grouped and ir.has_agg(output.expr)):
            yield from name.all(output.expr)


def _view_aggregates(block: Spjg, name: Namer, offered: frozenset[Group]) -> Iterator[AggKey]:
    """Aggregate outputs (`rollup.view_aggregates`), keyed by function (`count_distinct` for
    COUNT(DISTINCT)) and argument: the group of each of its columns (an expression may
    canonicalise to one of them, as COALESCE of joined columns does) and, for one argument,
    its `expression_key`. AVG(x) also offers its parts, since a query's AVG(x) is read from
    it directly; every grouping column offers MIN, MAX and COUNT(DISTINCT) of itself, which
    `rollup.roll_up` computes from it."""
    if block.grouped:
        for group in offered:
            yield from ((f, group) for f in GROUPING_AGGREGATES)
    for output in block.outputs:
        agg = output.expr
        if not isinstance(agg, ir.Agg):
            continue
        func = agg_name(agg)
        if not agg.args:
            yield func, None
        arguments: set[Argument] = {g for arg in agg.args for g in name.all(arg)}
        if len(agg.args) == 1:
            arguments.add(expression_key(agg.args[0]))
        for argument in arguments:
            yield func, argument
            if func == "avg":
                yield from (("sum", argument), ("count", argument))


def expression_key(expr: ir.Expr) -> Argument:
    """An aggregate's argument by what canonical forms keep of it (see `tokens`)."""
    return ("expression", tokens(expr))


def agg_name(agg: ir.Agg) -> str:
    return f"{agg.func}_distinct" if agg.distinct else agg.func


def _view_ranges(preds: Predicates, name: Namer) -> tuple[frozenset[Group], frozenset[Group]]:
    strict: set[Group] = set()
    split: set[Group] = set()
    for (rep, kind), kept in preds.ranges.items():
        group = name(rep)
        if kept.is_all or group is None:
            continue  # a range letting everything through never rejects
        splittable = kind in SPLITTABLE_KINDS and not kept.is_empty
        (split if splittable else strict).add(group)
    # the ranges a disjunction implies (tighter than the view's own): a query implying the
    # disjunction restricts those columns too, in its ranges or its disjunctions
    strict.update(g for rep, _ in preds.implied if (g := name(rep)) is not None)
    return frozenset(strict), frozenset(split)


def tokens(expr: ir.Expr) -> Residual:
    """What canonical forms (`canon.canonical`) keep of a predicate: its literals, functions
    and comparisons, not its columns (which become class representatives), nor AND, OR, NOT
    and COALESCE (which canonical forms may flatten, cancel or collapse)."""
    out: set[Token] = set()
    for node in ir.walk(expr):
        if isinstance(node, ir.Literal):
            out.add(("literal", node.kind, node.text))
        elif isinstance(node, ir.Compare):
            out.add(("compare", COMPARISON_CLASS.get(node.op, node.op)))
        elif isinstance(node, ir.Func) and node.op != "Coalesce":
            out.add(("func", node.op))
            out.update(_scalar_tokens(node.args))
        elif isinstance(node, ir.IsNull | ir.InList):
            out.add((type(node).__name__,))
        elif isinstance(node, ir.Agg):
            out.add(("agg", node.func, str(node.distinct)))
        elif isinstance(node, ir.Subquery):
            out.add(("subquery", node.kind, node.sql))
    return frozenset(out)


def _scalar_tokens(args: Iterable[tuple[str, ir.Arg]]) -> Iterator[Token]:
    for key, value in args:
        if isinstance(value, tuple):
            yield from _scalar_tokens((key, v) for v in value)
        elif isinstance(value, ir.TypeName):
            yield ("type", key, value.sql)
        elif not isinstance(value, ir.EXPRESSION_TYPES):
            yield ("arg", key, repr(value))


def union(parent: dict, a: Group, b: Group) -> None:
    ra, rb = find(parent, a), find(parent, b)
    if ra != rb:
        parent[max(ra, rb)] = min(ra, rb)


def find(parent: dict, item: Group) -> Group:
    parent.setdefault(item, item)
    while parent[item] != item:
        parent[item] = parent[parent[item]]
        item = parent[item]
    return item
