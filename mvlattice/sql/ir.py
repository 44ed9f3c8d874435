"""The relational IR: immutable expressions and operators with named column identities.

A column is `Column(rel, name)`: `rel` names the FROM item (a table occurrence or a derived
table) it comes from, never a position. `Column("", name)` refers to an output of the block
(ORDER BY `c`). Expressions above an `Aggregate` may contain `Agg` calls, evaluated per group
as in SQL; that keeps one block one small tree (Scan/Derived, Join, Filter, Aggregate, Filter
for HAVING, Project, Sort, Limit).

`Func` is the generic expression: `op` is the name of the SQL construct (sqlglot's class name,
e.g. "Add", "Year", "Case") and `args` its named operands, so any scalar expression survives the
round trip without the matcher having to understand it; the matcher only needs to understand
columns, literals, comparisons, AND/OR/NOT, IS NULL, IN lists and aggregate calls.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from mvlattice.sql.aggregates import IR_AGGREGATE_NAMES

LITERAL_KINDS = ("number", "string", "boolean", "null", "date", "timestamp")
COMPARISONS = ("=", "<>", "<", "<=", ">", ">=", "<=>")


# -- expressions ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Column:
    rel: str
    name: str

    def __str__(self) -> str:
        return f"{self.rel}.{self.name}" if self.rel else self.name


@dataclass(frozen=True, slots=True)
class Literal:
    """A constant; `text` is canonical for its kind (ISO for dates, 'true'/'false')."""

    kind: str
    text: str

    def __post_init__(self) -> None:
        if self.kind not in LITERAL_KINDS:
            raise ValueError(f"unknown literal kind {self.kind!r}")

    @property
    def value(self) -> Decimal | str | bool | dt.date | dt.datetime | None:
        """The value to order by; only values of the same kind are ever compared."""
        if self.kind == "number":
            try:
                return Decimal(self.text)
            except InvalidOperation:
                return None
        if self.kind == "boolean":
            return self.text == "true"
        if self.kind == "date":
            return dt.date.fromisoformat(self.text)
        if self.kind == "timestamp":
            return dt.datetime.fromisoformat(self.text)
        return None if self.kind == "null" else self.text

    def __str__(self) -> str:
        if self.kind == "string":
            return "'" + self.text.replace("'", "\\'") + "'"
        if self.kind in ("date", "timestamp"):
            return f"{self.kind.upper()} '{self.text}'"
        return "NULL" if self.kind == "null" else self.text


@dataclass(frozen=True, slots=True)
class Compare:
    op: str
    left: Expr
    right: Expr

    def __post_init__(self) -> None:
        if self.op not in COMPARISONS:
            raise ValueError(f"unknown comparison {self.op!r}")


@dataclass(frozen=True, slots=True)
class And:
    terms: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Or:
    terms: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Not:
    term: Expr


@dataclass(frozen=True, slots=True)
class IsNull:
    term: Expr


@dataclass(frozen=True, slots=True)
class InList:
    term: Expr
    values: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Agg:
    """SUM, COUNT, MIN, MAX or AVG; COUNT(*) has no arguments. Also APPROX_COUNT_DISTINCT and
    the HLL sketch aggregates that answer it (`aggregates.SKETCH_AGGREGATES`)."""

    func: str
    args: tuple[Expr, ...] = ()
    distinct: bool = False

    def __post_init__(self) -> None:
        if self.func not in IR_AGGREGATE_NAMES:
            raise ValueError(f"unknown aggregate {self.func!r}")


@dataclass(frozen=True, slots=True)
class TypeName:
    """A data type operand (CAST … AS DECIMAL(10, 2)), as Spark SQL text."""

    sql: str


@dataclass(frozen=True, slots=True)
class Func:
    op: str
    args: tuple[tuple[str, Arg], ...] = ()


@dataclass(frozen=True, slots=True)
class Subquery:
    """An uncorrelated subquery inside an expression: scalar, EXISTS, or `term IN (…)`.

    The subquery is its own block (rewritten on its own); here it is carried as SQL text.
    """

    kind: str
    sql: str
    term: Expr | None = None


Expr = Column | Literal | Compare | And | Or | Not | IsNull | InList | Agg | Func | Subquery
Scalar = str | int | float | bool | None
Arg = Expr | TypeName | Scalar | tuple["Arg", ...]
EXPRESSION_TYPES = (Column, Literal, Compare, And, Or, Not, IsNull, InList, Agg, Func, Subquery)

TRUE = Literal("boolean", "true")


def children(expr: Expr) -> tuple[Expr, ...]:
    """The direct sub-expressions, in a fixed order."""
    if isinstance(expr, Compare):
        return (expr.left, expr.right)
    if isinstance(expr, And | Or):
        return expr.terms
    if isinstance(expr, Not | IsNull):
        return (expr.term,)
    if isinstance(expr, InList):
        return (expr.term, *expr.values)
    if isinstance(expr, Agg):
        return expr.args
    if isinstance(expr, Func):
        return tuple(_arg_exprs(tuple(v for _, v in expr.args)))
    if isinstance(expr, Subquery):
        return (expr.term,) if expr.term is not None else ()
    return ()


def _arg_exprs(values: tuple[Arg, ...]) -> Iterator[Expr]:
    for value in values:
        if isinstance(value, tuple):
            yield from _arg_exprs(value)
        elif isinstance(value, EXPRESSION_TYPES):
            yield value


def transform(expr: Expr, fn: Callable[[Expr], Expr | None]) -> Expr:
    """Rebuild bottom-up; `fn` may return a replacement for a node or None to keep it."""
    rebuilt = map_children(expr, lambda child: transform(child, fn))
    replaced = fn(rebuilt)
    return rebuilt if replaced is None else replaced


def map_children(expr: Expr, fn: Callable[[Expr], Expr]) -> Expr:
    """The same node with `fn` applied to each direct sub-expression."""
    if isinstance(expr, Compare):
        return Compare(expr.op, fn(expr.left), fn(expr.right))
    if isinstance(expr, And):
        return And(tuple(fn(t) for t in expr.terms))
    if isinstance(expr, Or):
        return Or(tuple(fn(t) for t in expr.terms))
    if isinstance(expr, Not):
        return Not(fn(expr.term))
    if isinstance(expr, IsNull):
        return IsNull(fn(expr.term))
    if isinstance(expr, InList):
        return InList(fn(expr.term), tuple(fn(v) for v in expr.values))
    if isinstance(expr, Agg):
        return Agg(expr.func, tuple(fn(a) for a in expr.args), expr.distinct)
    if isinstance(expr, Func):
        return Func(expr.op, tuple((k, _map_arg(v, fn)) for k, v in expr.args))
    if isinstance(expr, Subquery) and expr.term is not None:
        return Subquery(expr.kind, expr.sql, fn(expr.term))
    return expr


def _map_arg(value: Arg, fn: Callable[[Expr], Expr]) -> Arg:
    if isinstance(value, tuple):
        return tuple(_map_arg(v, fn) for v in value)
    if isinstance(value, EXPRESSION_TYPES):
        return fn(value)
    return value


def walk(expr: Expr) -> Iterator[Expr]:
    """Every node, parents before children."""
    yield expr
    for child in children(expr):
        yield from walk(child)


def columns(expr: Expr) -> frozenset[Column]:
    return frozenset(e for e in walk(expr) if isinstance(e, Column))


def has_agg(expr: Expr) -> bool:
    return any(isinstance(e, Agg) for e in walk(expr))


def conjuncts(expr: Expr | None) -> tuple[Expr, ...]:
    """Split at AND; TRUE disappears."""
    if expr is None or expr == TRUE:
        return ()
    if isinstance(expr, And):
        return tuple(c for term in expr.terms for c in conjuncts(term))
    return (expr,)


def conjoin(terms: tuple[Expr, ...]) -> Expr | None:
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else And(terms)


@lru_cache(maxsize=8192)
def rename_rels(expr: Expr, pairs: tuple[tuple[str, str], ...]) -> Expr:
    """`expr` with the rels of its columns renamed by (old, new) `pairs` (cached)."""
    mapping = dict(pairs)

    def swap(node: Expr) -> Expr | None:
        if isinstance(node, Column) and node.rel in mapping:
            return Column(mapping[node.rel], node.name)
        return None

    return transform(expr, swap)


# -- operators ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Output:
    name: str
    expr: Expr


@dataclass(frozen=True, slots=True)
class SortKey:
    expr: Expr
    descending: bool = False
    nulls_first: bool | None = None


@dataclass(frozen=True, slots=True)
class Scan:
    """A table occurrence: `table` is `schema.table` (lower case), `alias` its rel name."""

    table: str
    alias: str


@dataclass(frozen=True, slots=True)
class Derived:
    """A subquery in FROM (or a CTE reference) named `alias`."""

    input: Plan
    alias: str


@dataclass(frozen=True, slots=True)
class Filter:
    input: Plan
    condition: Expr


@dataclass(frozen=True, slots=True)
class Join:
    left: Plan
    right: Plan
    kind: str  # inner, left, right, full, semi, anti
    condition: Expr | None = None


@dataclass(frozen=True, slots=True)
class Aggregate:
    input: Plan
    keys: tuple[Expr, ...]


@dataclass(frozen=True, slots=True)
class Project:
    input: Plan
    outputs: tuple[Output, ...]
    distinct: bool = False

    def __post_init__(self) -> None:
        names = [o.name for o in self.outputs]
        if not names:
            raise ValueError("a projection needs at least one output")


@dataclass(frozen=True, slots=True)
class Sort:
    input: Plan
    keys: tuple[SortKey, ...]


@dataclass(frozen=True, slots=True)
class Limit:
    input: Plan
    count: int | None
    offset: int = 0


@dataclass(frozen=True, slots=True)
class SetOp:
    kind: str  # union, intersect, except
    inputs: tuple[Plan, ...]
    distinct: bool

    def __post_init__(self) -> None:
        if len(self.inputs) < 2:
            raise ValueError("a set operation needs two or more inputs")


Plan = Scan | Derived | Filter | Join | Aggregate | Project | Sort | Limit | SetOp


def output_names(plan: Plan) -> tuple[str, ...]:
    if isinstance(plan, Project):
        return tuple(o.name for o in plan.outputs)
    if isinstance(plan, SetOp):
        return output_names(plan.inputs[0])
    if isinstance(plan, Sort | Limit | Filter):
        return output_names(plan.input)
    raise ValueError(f"{type(plan).__name__} has no named outputs")


def sort_key(expr: Expr) -> str:
    """A total, deterministic order on expressions (for canonical forms and stable output)."""
    return repr(expr)
