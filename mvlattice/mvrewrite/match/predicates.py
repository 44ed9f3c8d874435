"""A block's conjuncts split the GL01 way (§3.1.1): column equalities (equivalence classes),
range predicates (one range per class and kind of literal), and residual predicates.

String literals only give point ranges (`=` and IN): the column's type is not known, and if
it is numeric Spark compares by number, where '10' > '9' although 'a10' < 'a9'.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from mvlattice.mvrewrite.match.ranges import FULL, Range
from mvlattice.sql import ir
from mvlattice.sql.canon import Classes, canonical

NULLNESS = ""  # the kind of IS [NOT] NULL ranges, which constrain every kind
ORDERED_KINDS = ("number", "date", "timestamp", "boolean")
RangeKey = tuple[ir.Column, str]  # (class representative, literal kind)


@dataclass(frozen=True, slots=True)
class Predicates:
    classes: Classes
    ranges: Mapping[RangeKey, Range]
    residuals: tuple[ir.Expr, ...]  # canonical, each once

    def effective(self, rep: ir.Column, kind: str) -> Range:
        """What the block lets through for class `rep` compared as `kind` (a superset: ranges
        of other kinds only contribute whether they let NULL through)."""
        out = self.ranges.get((rep, kind), Range.all())
        for (r, k), value in self.ranges.items():
            if r == rep and k != kind:
                out = out.intersect(value if k == NULLNESS else Range((FULL,), value.nulls))
        return out

    def rekeyed(self, classes: Classes) -> Predicates:
        """The same ranges keyed by the representatives of coarser `classes`."""
        ranges: dict[RangeKey, Range] = {}
        for (rep, kind), value in self.ranges.items():
            key = (classes.rep(rep), kind)
            ranges[key] = ranges[key].intersect(value) if key in ranges else value
        return Predicates(classes, ranges, self.residuals)


def analyze(conjuncts: Iterable[ir.Expr]) -> Predicates:
    return _analyze(tuple(conjuncts))


@lru_cache(maxsize=4096)
def _analyze(items: tuple[ir.Expr, ...]) -> Predicates:
    """Cached: every view of a lattice has the same joins, and a query is matched many times."""
    pairs = [p for p in (_equality(c) for c in items) if p is not None]
    classes = Classes.build(pairs)
    ranges: dict[RangeKey, Range] = {}
    residuals: dict[ir.Expr, None] = {}
    for conjunct in items:
        if _equality(conjunct) is not None:
            continue
        found = range_of(conjunct)
        if found is None:
            residuals.setdefault(canonical(conjunct, classes), None)
            continue
        column, kind, value = found
        key = (classes.rep(column), kind)
        ranges[key] = ranges[key].intersect(value) if key in ranges else value
    return Predicates(classes, ranges, tuple(residuals))


def _equality(conjunct: ir.Expr) -> tuple[ir.Column, ir.Column] | None:
    if (
        isinstance(conjunct, ir.Compare)
        and conjunct.op == "="
        and isinstance(conjunct.left, ir.Column)
        and isinstance(conjunct.right, ir.Column)
        and conjunct.left != conjunct.right
    ):
        return conjunct.left, conjunct.right
    return None


def range_of(conjunct: ir.Expr) -> tuple[ir.Column, str, Range] | None:
    """(column, kind, range) when `conjunct` restricts one column to a range, else None."""
    if isinstance(conjunct, ir.Compare):
        return _comparison(conjunct)
    if isinstance(conjunct, ir.InList):
        return _in_list(conjunct)
    if isinstance(conjunct, ir.IsNull) and isinstance(conjunct.term, ir.Column):
        return conjunct.term, NULLNESS, Range.null_only()
    if isinstance(conjunct, ir.Not):
        return _negation(conjunct.term)
    if isinstance(conjunct, ir.Or):
        return _disjunction(conjunct)
    return None


def _comparison(node: ir.Compare) -> tuple[ir.Column, str, Range] | None:
    column, literal, op = node.left, node.right, node.op
    if isinstance(column, ir.Literal) and isinstance(literal, ir.Column):
        column, literal, op = literal, column, _mirror(op)
    if not (isinstance(column, ir.Column) and isinstance(literal, ir.Literal)):
        return None
    if op == "<=>" or literal.kind == "null" or literal.value is None:
        return None
    if literal.kind not in ORDERED_KINDS and op != "=":
        return None
    return column, literal.kind, Range.compare(op, literal)


def _in_list(node: ir.InList) -> tuple[ir.Column, str, Range] | None:
    values = node.values
    if not isinstance(node.term, ir.Column) or not values:
        return None
    if not all(isinstance(v, ir.Literal) and v.kind != "null" for v in values):
        return None
    kinds = {v.kind for v in values}  # type: ignore[union-attr]
    if len(kinds) != 1:
        return None
    if any(v.value is None for v in values):  # type: ignore[union-attr]
        return None
    return node.term, kinds.pop(), Range.points(values)  # type: ignore[arg-type]


def _negation(term: ir.Expr) -> tuple[ir.Column, str, Range] | None:
    if isinstance(term, ir.IsNull) and isinstance(term.term, ir.Column):
        return term.term, NULLNESS, Range.not_null()
    inner = _in_list(term) if isinstance(term, ir.InList) else None
    if inner is None and isinstance(term, ir.Compare):
        inner = _comparison(term)
    if inner is None or inner[1] not in ORDERED_KINDS:
        return None
    column, kind, value = inner
    return column, kind, value.complement().intersect(Range.not_null())


def _disjunction(node: ir.Or) -> tuple[ir.Column, str, Range] | None:
    found = [range_of(t) for t in node.terms]
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
