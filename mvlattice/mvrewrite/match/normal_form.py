"""A bounded disjunctive normal form of predicates (issue 20, class 3): OR of conjunctions,
each conjunction a range per (class, kind) (`atoms.range_of`) and opaque predicates.

NOT is pushed down to the atoms by De Morgan's laws, which hold in SQL's three-valued logic;
a negated atom is read through the values that make it FALSE (`atoms._negation`), so the
form describes exactly the rows for which the predicate is TRUE — what WHERE keeps. An atom
the ranges cannot express stays a predicate of its own (canonical under the classes), known
only to imply itself.

Conjunctions that cannot hold are dropped; two that differ only in the range of one class
merge into one (`(a AND x) OR (b AND x)` is `(a OR b) AND x`); a conjunction implying another
is absorbed. A form that would still hold more than `CAP` conjunctions is not built: the
caller says the predicate is beyond what is compared (no exponential blow-up).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache, reduce

from mvlattice.mvrewrite.match.atoms import NULLNESS, range_of
from mvlattice.mvrewrite.match.ranges import FULL, Range
from mvlattice.sql import ir
from mvlattice.sql.canon import Classes, canonical

CAP = 64  # conjunctions in one normal form
ABSORB_LIMIT = 4  # times CAP: the most conjunctions absorption is tried on
RangeKey = tuple[ir.Column, str]  # (class representative, literal kind)


class TooLarge(Exception):
    """The normal form would hold more than CAP conjunctions."""


@dataclass(frozen=True, slots=True)
class Conjunction:
    ranges: tuple[tuple[RangeKey, Range], ...]  # sorted by key, each key once
    atoms: frozenset[ir.Expr]  # canonical predicates read only as themselves

    def get(self, key: RangeKey) -> Range | None:
        return next((r for k, r in self.ranges if k == key), None)

    def effective(self, rep: ir.Column, kind: str) -> Range:
        """What the conjunction lets through for `rep` compared as `kind`."""
        return effective_in(self.ranges, rep, kind)

    @property
    def keys(self) -> tuple[RangeKey, ...]:
        return tuple(k for k, _ in self.ranges)

    @property
    def is_empty(self) -> bool:
        """No value passes some class (an empty range, or a NULL test against a range)."""
        return any(self.effective(rep, kind).is_empty for rep, kind in self.keys)

    def with_range(self, key: RangeKey, value: Range) -> Conjunction:
        others = tuple((k, r) for k, r in self.ranges if k != key)
        return Conjunction(_sorted(others + ((key, value),)), self.atoms)

    def implies(self, other: Conjunction) -> bool:
        """Every row this conjunction keeps, `other` keeps (range by range)."""
        if not other.atoms <= self.atoms:
            return False
        return all(value.contains(self.effective(*key)) for key, value in other.ranges)


TOP = Conjunction((), frozenset())  # TRUE
NOT_NULL = Range((FULL,), False)
Form = tuple[Conjunction, ...]  # OR of conjunctions; () is FALSE


def effective_in(ranges: Iterable[tuple[RangeKey, Range]], rep: ir.Column, kind: str) -> Range:
    """The range of `rep` as `kind`, given ranges of every kind: a range of another kind only
    says whether NULL passes; an IS [NOT] NULL range constrains every kind."""
    out = None
    for (r, k), value in ranges:
        if r != rep:
            continue
        if k != kind and k != NULLNESS:
            if value.nulls:
                continue  # lets every value of `kind` through
            value = NOT_NULL
        out = value if out is None else out.intersect(value)
    return Range.all() if out is None else out


def normal_form(
    expr: ir.Expr, classes: Classes, text: frozenset[ir.Column] = frozenset(), cap: int = CAP
) -> Form:
    """The DNF of `expr` (a boolean predicate); raises TooLarge beyond `cap` conjunctions."""
    return _cached(expr, classes, text, cap)


@lru_cache(maxsize=4096)
def _cached(expr: ir.Expr, classes: Classes, text: frozenset[ir.Column], cap: int) -> Form:
    return _form(expr, True, classes, text, cap)


def compound(expr: ir.Expr) -> bool:
    """A disjunction or a negated AND/OR: its normal form may hold several conjunctions."""
    return isinstance(expr, ir.Or) or (
        isinstance(expr, ir.Not) and isinstance(expr.term, ir.And | ir.Or)
    )


def conjoin(forms: Iterable[Form], cap: int = CAP) -> Form:
    """The normal form of the AND of `forms` (raises TooLarge)."""
    return reduce(lambda a, b: _and(a, b, cap), forms, (TOP,))


def of(item: Conjunction) -> Form:
    return () if item.is_empty else (item,)


def conjunction(ranges: Iterable[tuple[RangeKey, Range]], atoms: Iterable[ir.Expr]) -> Conjunction:
    merged: dict[RangeKey, Range] = {}
    for key, value in ranges:
        merged[key] = merged[key].intersect(value) if key in merged else value
    return Conjunction(_sorted(tuple(merged.items())), frozenset(atoms))


def hull(form: Form) -> dict[RangeKey, Range]:
    """Ranges every conjunction of `form` implies: per key constrained by all of them, the
    union of their ranges (implied by the OR; none for a form that cannot hold)."""
    if not form:
        return {}
    keys = set(form[0].keys).intersection(*(c.keys for c in form[1:]))
    out = {}
    for key in sorted(keys, key=_key_order):
        value = _union(c.get(key) for c in form)
        if not value.is_all:
            out[key] = value
    return out


# -- building ---------------------------------------------------------------------------
def _form(
    expr: ir.Expr, positive: bool, classes: Classes, text: frozenset[ir.Column], cap: int
) -> Form:
    if isinstance(expr, ir.Literal):
        return _constant(expr, positive)
    found = range_of(expr if positive else ir.Not(expr), text)
    if found is not None:
        column, kind, value = found
        return of(Conjunction((((classes.rep(column), kind), value),), frozenset()))
    if isinstance(expr, ir.Not):
        return _form(expr.term, not positive, classes, text, cap)
    if isinstance(expr, ir.And | ir.Or):
        parts = [_form(t, positive, classes, text, cap) for t in expr.terms]
        if isinstance(expr, ir.And) == positive:
            return conjoin(parts, cap)
        return _simplify([c for part in parts for c in part], cap)
    atom = canonical(expr if positive else ir.Not(expr), classes)
    return (Conjunction((), frozenset((atom,))),)


def _constant(literal: ir.Literal, positive: bool) -> Form:
    """TRUE, FALSE and NULL as predicates: NULL is never TRUE, nor is NOT NULL."""
    if literal.kind == "boolean" and (literal.text == "true") == positive:
        return (TOP,)
    if literal.kind in ("boolean", "null"):
        return ()
    return (Conjunction((), frozenset((literal if positive else ir.Not(literal),))),)


def _and(a: Form, b: Form, cap: int) -> Form:
    if len(a) * len(b) > cap * cap:
        raise TooLarge
    pairs = (_both(x, y) for x in a for y in b)
    return _simplify([c for c in pairs if not c.is_empty], cap)


def _both(a: Conjunction, b: Conjunction) -> Conjunction:
    return conjunction(a.ranges + b.ranges, a.atoms | b.atoms)


def _simplify(items: list[Conjunction], cap: int) -> Form:
    """Distinct, merged where one key's range differs, absorbed; TooLarge beyond `cap`
    (absorption compares every pair: it is not tried on forms far beyond the cap)."""
    found = _merged(list(dict.fromkeys(c for c in items if not c.is_empty)))
    if len(found) > ABSORB_LIMIT * cap:
        raise TooLarge
    found = _absorbed(found)
    if len(found) > cap:
        raise TooLarge
    return tuple(found)


def _merged(items: list[Conjunction]) -> list[Conjunction]:
    """(A AND x IN r1) OR (A AND x IN r2) is A AND x IN (r1 ∪ r2), for each key in turn."""
    changed = True
    while changed and len(items) > 1:
        changed = False
        for key in sorted({k for c in items for k in c.keys}, key=_key_order):
            groups: dict[tuple, list[Conjunction]] = {}
            for c in items:
                rest = (tuple(p for p in c.ranges if p[0] != key), c.atoms, key in c.keys)
                groups.setdefault(rest, []).append(c)
            if all(len(g) == 1 for g in groups.values()):
                continue
            items = list(_merge_groups(groups, key))
            changed = True
    return items


def _merge_groups(groups: dict[tuple, list[Conjunction]], key: RangeKey) -> Iterator[Conjunction]:
    for (_, _, has_key), members in groups.items():
        if not has_key:  # equal conjunctions without the key: one of them
            yield members[0]
            continue
        value = _union(c.get(key) for c in members)
        yield _without(members[0], key) if value.is_all else members[0].with_range(key, value)


def _without(c: Conjunction, key: RangeKey) -> Conjunction:
    return Conjunction(tuple(p for p in c.ranges if p[0] != key), c.atoms)


def _absorbed(items: list[Conjunction]) -> list[Conjunction]:
    """Drop a conjunction that implies another (A OR (A AND B) is A)."""
    if len(items) < 2:
        return items
    return [
        c for i, c in enumerate(items) if not any(_absorbs(d, j, c, i) for j, d in enumerate(items))
    ]


def _absorbs(d: Conjunction, j: int, c: Conjunction, i: int) -> bool:
    """Whether `d` (at j) makes `c` (at i) redundant; of two equivalent ones the first stays."""
    return j != i and c.implies(d) and not (j > i and d.implies(c))


def _union(values: Iterable[Range | None]) -> Range:
    """The union of ranges every conjunction has (the caller picked a key they all hold)."""
    out = Range((), False)
    for value in values:
        assert value is not None
        out = out.union(value)
    return out


def _sorted(ranges: tuple[tuple[RangeKey, Range], ...]) -> tuple[tuple[RangeKey, Range], ...]:
    return tuple(sorted(ranges, key=lambda p: _key_order(p[0])))


def _key_order(key: RangeKey) -> tuple[str, str, str]:
    return (key[0].rel, key[0].name, key[1])
