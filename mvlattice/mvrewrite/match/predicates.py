"""A block's conjuncts split the GL01 way (§3.1.1): column equalities (equivalence classes),
range predicates (one range per class and kind of literal), and residual predicates.

A conjunct that is a disjunction (or a negated conjunction) is read through its bounded
normal form (`normal_form`): when that is a single conjunction (`NOT (a OR b)`,
`(x = 1 AND y > 0) OR (x = 2 AND y > 0)`), its ranges and predicates are conjuncts like any
other; otherwise the conjunct stays a residual predicate, and the ranges every disjunct
implies (its hull) are recorded as `implied`: they narrow what the block lets through
(`effective`) but are never compensated on their own.

Which literals give ranges, and which columns are compared as strings, is `atoms`' concern.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

from mvlattice.mvrewrite.match.atoms import NULLNESS, ORDERED_KINDS, TEXT, range_of
from mvlattice.mvrewrite.match.normal_form import (
    Form,
    TooLarge,
    compound,
    effective_in,
    hull,
    normal_form,
)
from mvlattice.mvrewrite.match.ranges import Range
from mvlattice.sql import ir
from mvlattice.sql.canon import Classes, canonical

__all__ = ["NULLNESS", "ORDERED_KINDS", "TEXT", "Predicates", "analyze", "range_of"]

RangeKey = tuple[ir.Column, str]  # (class representative, literal kind)


def _no_ranges() -> Mapping[RangeKey, Range]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Predicates:
    classes: Classes
    ranges: Mapping[RangeKey, Range]
    residuals: tuple[ir.Expr, ...]  # canonical, each once
    implied: Mapping[RangeKey, Range] = field(default_factory=_no_ranges)  # hulls of ORs
    text: frozenset[ir.Column] = frozenset()  # columns of all-STRING classes (`atoms`)

    def effective(self, rep: ir.Column, kind: str) -> Range:
        """What the block lets through for class `rep` compared as `kind` (a superset: ranges
        of other kinds only contribute whether they let NULL through)."""
        found = effective_in(self.ranges.items(), rep, kind)
        if self.implied:
            found = found.intersect(effective_in(self.implied.items(), rep, kind))
        return found

    def rekeyed(self, classes: Classes) -> Predicates:
        """The same ranges keyed by the representatives of coarser `classes`."""
        return Predicates(
            classes,
            _rekey(self.ranges, classes),
            self.residuals,
            _rekey(self.implied, classes),
            self.text,
        )


def _rekey(ranges: Mapping[RangeKey, Range], classes: Classes) -> dict[RangeKey, Range]:
    out: dict[RangeKey, Range] = {}
    for (rep, kind), value in ranges.items():
        _narrow(out, (classes.rep(rep), kind), value)
    return out


def _narrow(ranges: dict[RangeKey, Range], key: RangeKey, value: Range) -> None:
    ranges[key] = ranges[key].intersect(value) if key in ranges else value


def analyze(conjuncts: Iterable[ir.Expr], text: frozenset[ir.Column] = frozenset()) -> Predicates:
    """`text`: the columns known to be STRING (`atoms.text_columns`)."""
    return _analyze(tuple(conjuncts), text)


@lru_cache(maxsize=4096)
def _analyze(items: tuple[ir.Expr, ...], text: frozenset[ir.Column]) -> Predicates:
    """Cached: every view of a lattice has the same joins, and a query is matched many times."""
    pairs = [p for p in (_equality(c) for c in items) if p is not None]
    classes = Classes.build(pairs)
    text = _all_text(text, classes)
    ranges: dict[RangeKey, Range] = {}
    residuals: dict[ir.Expr, None] = {}
    implied: dict[RangeKey, Range] = {}
    for conjunct in items:
        if _equality(conjunct) is not None:
            continue
        found = range_of(conjunct, text)
        if found is not None:
            column, kind, value = found
            _narrow(ranges, (classes.rep(column), kind), value)
            continue
        form = _form(conjunct, classes, text)
        if form is not None and len(form) == 1:
            for key, value in form[0].ranges:
                _narrow(ranges, key, value)
            residuals.update(dict.fromkeys(sorted(form[0].atoms, key=ir.sort_key)))
            continue
        residuals.setdefault(canonical(conjunct, classes), None)
        for key, value in hull(form or ()).items():
            _narrow(implied, key, value)
    implied = {k: v for k, v in implied.items() if not v.contains(effective_in(ranges.items(), *k))}
    return Predicates(classes, ranges, tuple(residuals), implied, text)


def _all_text(text: frozenset[ir.Column], classes: Classes) -> frozenset[ir.Column]:
    """Columns compared as strings: those whose every class member is known to be STRING
    (an equality with a numeric column compares by number)."""
    if not text:
        return text
    return frozenset(c for c in text if all(m in text for m in classes.members(c)))


def _form(conjunct: ir.Expr, classes: Classes, text: frozenset[ir.Column]) -> Form | None:
    """The normal form of a disjunction or a negated AND/OR; None for other predicates or
    one too large to build (it stays a residual predicate, compared as it is)."""
    if not compound(conjunct):
        return None
    try:
        return normal_form(conjunct, classes, text)
    except TooLarge:
        return None


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
