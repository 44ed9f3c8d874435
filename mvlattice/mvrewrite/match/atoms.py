"""What one predicate says about one column: the values for which it is TRUE, as a `Range`
(GL01 §3.1.2's range predicates, widened to IN/NOT IN, `<>`, LIKE prefixes and NULL tests).

A WHERE clause keeps only rows where its predicate is TRUE, so a range is the set of values
making the predicate TRUE; NOT x is TRUE exactly where x is FALSE, so a negated predicate is
read through the values making it FALSE (`x NOT IN (1, NULL)` is never TRUE; `x <> 1` is not
TRUE for a NULL x).

String literals: a column whose type is not known to be STRING may be numeric, and Spark then
compares by number ('10' > '9' although 'a10' < 'a9', and '10.0' = '10'). Such comparisons
give only point ranges of kind "string" (`=` and IN), never negated. A column known to be
STRING or VARCHAR, in a class of such columns, is compared as Spark compares UTF8_BINARY
strings — by code point, the order of Python's `str` — as kind TEXT: every comparison, `<>`, NOT IN,
and `LIKE 'prefix%'` as the range [prefix, prefix with its last character incremented). Such
a column compared with a number or a date is no range at all (Spark casts the string).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache

from mvlattice.mvrewrite.match.ranges import Bound, Interval, Range
from mvlattice.sql import ir
from mvlattice.sql.spjg import TableRef

NULLNESS = ""  # the kind of IS [NOT] NULL ranges, which constrain every kind
TEXT = "text"  # string literals against a column known to be STRING: ordered
ORDERED_KINDS = ("number", "date", "timestamp", "boolean", TEXT)
STRING_TYPE, VARCHAR = "string", "varchar("  # compared as strings (CHAR pads: not it)
SURROGATES = range(0xD800, 0xE000)  # no Spark string holds one: skipped
Found = tuple[ir.Column, str, Range]


def range_of(conjunct: ir.Expr, text: frozenset[ir.Column] = frozenset()) -> Found | None:
    """(column, kind, range) when `conjunct` restricts one column to a range, else None.
    `text`: the columns known to be STRING (see the module docstring)."""
    if isinstance(conjunct, ir.Compare):
        return _comparison(conjunct, text)
    if isinstance(conjunct, ir.InList):
        return _in_list(conjunct, text)
    if isinstance(conjunct, ir.IsNull) and isinstance(conjunct.term, ir.Column):
        return conjunct.term, NULLNESS, Range.null_only()
    if isinstance(conjunct, ir.Func) and conjunct.op == "Like":
        return _like(conjunct, text)
    if isinstance(conjunct, ir.Not):
        return _negation(conjunct.term, text)
    if isinstance(conjunct, ir.Or):
        return _disjunction(conjunct, text)
    return None


def text_columns(
    exprs: Iterable[ir.Expr], type_of: Callable[[ir.Column], str | None]
) -> frozenset[ir.Column]:
    """The columns of `exprs` whose type is known to be STRING."""
    return frozenset(c for c in _columns(tuple(exprs)) if is_string(type_of(c)))


@lru_cache(maxsize=4096)
def _columns(exprs: tuple[ir.Expr, ...]) -> frozenset[ir.Column]:
    return frozenset(c for e in exprs for c in ir.columns(e))


def typed(
    tables: Iterable[TableRef], types: Callable[[str, str], str | None]
) -> Callable[[ir.Column], str | None]:
    """A column's type, by its rel's table (`types`: (schema.table, column) -> type)."""
    by_rel = {t.rel: t.table for t in tables}

    def type_of(column: ir.Column) -> str | None:
        table = by_rel.get(column.rel)
        return None if table is None else types(table, column.name)

    return type_of


def all_text(columns: Iterable[ir.Column], type_of: Callable[[ir.Column], str | None]) -> bool:
    """Whether every column is known to be STRING (a class compared as strings)."""
    return all(is_string(type_of(c)) for c in columns)


def is_string(type_name: str | None) -> bool:
    """STRING or VARCHAR(n) as the Delta log declares them (`delta.columns`): not CHAR(n),
    which pads, nor a string with a collation, which may ignore case."""
    return type_name == STRING_TYPE or (type_name or "").startswith(VARCHAR)


def _comparison(node: ir.Compare, text: frozenset[ir.Column]) -> Found | None:
    column, literal, op = node.left, node.right, node.op
    if isinstance(column, ir.Literal) and isinstance(literal, ir.Column):
        column, literal, op = literal, column, _mirror(op)
    if not (isinstance(column, ir.Column) and isinstance(literal, ir.Literal)):
        return None
    if op == "<=>" or literal.kind == "null" or literal.value is None:
        return None
    kind = _kind(column, literal, text)
    if kind is None or (kind not in ORDERED_KINDS and op != "="):
        return None
    return column, kind, Range.compare(op, literal)


def _kind(column: ir.Column, literal: ir.Literal, text: frozenset[ir.Column]) -> str | None:
    if column not in text:
        return literal.kind
    return TEXT if literal.kind == "string" else None


def _in_list(node: ir.InList, text: frozenset[ir.Column]) -> Found | None:
    """`x IN (…)` is TRUE for the listed values only; a NULL in the list never makes it TRUE
    (it only turns FALSE into NULL, which `_negation` reads)."""
    values = node.values
    if not isinstance(node.term, ir.Column) or not values:
        return None
    if not all(isinstance(v, ir.Literal) for v in values):
        return None
    present = tuple(v for v in values if v.kind != "null")  # type: ignore[union-attr]
    if not present:
        return node.term, NULLNESS, Range((), False)
    kinds = {_kind(node.term, v, text) for v in present}  # type: ignore[arg-type]
    if len(kinds) != 1 or None in kinds:
        return None
    if any(v.value is None for v in present):  # type: ignore[union-attr]
        return None
    return node.term, kinds.pop(), Range.points(present)  # type: ignore[arg-type, return-value]


def _like(node: ir.Func, text: frozenset[ir.Column]) -> Found | None:
    """`x LIKE 'abc%'` on a STRING column: the strings from 'abc' up to, not including, 'abd'.
    Only a literal pattern whose sole wildcard is one trailing % (or none: an equality), with
    no escape character; anything else is not a range."""
    args = dict(node.args)
    column, pattern = args.get("this"), args.get("expression")
    if set(args) - {"this", "expression", "negate"} or not (
        isinstance(column, ir.Column) and column in text and isinstance(pattern, ir.Literal)
    ):
        return None
    if pattern.kind != "string":
        return None
    prefix, wildcard = pattern.text, pattern.text.endswith("%")
    prefix = prefix[:-1] if wildcard else prefix
    if any(c in prefix for c in "%_\\"):
        return None
    found = _prefix_range(prefix) if wildcard else Range.compare("=", pattern)
    if found is None:
        return None
    if args.get("negate"):
        return column, TEXT, found.complement().intersect(Range.not_null())
    return column, TEXT, found


def _prefix_range(prefix: str) -> Range | None:
    """The strings starting with `prefix`: [prefix, successor) where the successor is the
    prefix with its last character incremented (no string lies between a character and the
    next one, so exactly the strings with that prefix fall inside)."""
    if not prefix:
        return Range.not_null()
    code = ord(prefix[-1]) + 1
    if code in SURROGATES:
        code = SURROGATES.stop
    if code > 0x10FFFF:
        return None
    low = ir.Literal("string", prefix)
    high = ir.Literal("string", prefix[:-1] + chr(code))
    return Range((Interval(Bound.of(low, True), Bound.of(high, False)),), False)


def _negation(term: ir.Expr, text: frozenset[ir.Column]) -> Found | None:
    """NOT x is TRUE where x is FALSE: for a comparison, the other non-NULL values."""
    if isinstance(term, ir.IsNull) and isinstance(term.term, ir.Column):
        return term.term, NULLNESS, Range.not_null()
    if isinstance(term, ir.Not):
        return range_of(term.term, text)
    if isinstance(term, ir.Func) and term.op == "Like":
        args = dict(term.args)
        return _like(
            ir.Func("Like", tuple({**args, "negate": not args.get("negate")}.items())), text
        )
    inner = None
    if isinstance(term, ir.InList):
        inner = _in_list(term, text)
        if inner is not None and any(_is_null(v) for v in term.values):
            return inner[0], inner[1], Range((), False)  # FALSE never, NULL instead
    elif isinstance(term, ir.Compare):
        inner = _comparison(term, text)
    if inner is None or inner[1] not in ORDERED_KINDS:
        return None
    column, kind, value = inner
    return column, kind, value.complement().intersect(Range.not_null())


def _is_null(value: ir.Expr) -> bool:
    return isinstance(value, ir.Literal) and value.kind == "null"


def _disjunction(node: ir.Or, text: frozenset[ir.Column]) -> Found | None:
    found = [range_of(t, text) for t in node.terms]
    if any(f is None for f in found):
        return None
    columns = {f[0] for f in found}  # type: ignore[index]
    kinds = {f[1] for f in found} - {NULLNESS}  # type: ignore[index]
    if len(columns) != 1 or len(kinds) > 1:
        return None
    out = Range((), False)
    for _, _, value in found:  # type: ignore[misc]
        out = out.union(value)
    return columns.pop(), kinds.pop() if kinds else NULLNESS, out


def _mirror(op: str) -> str:
    return {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>"}[op]
