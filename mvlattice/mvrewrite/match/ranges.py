"""Value ranges of a column (GL01 §3.1.2, range subsumption): sorted disjoint intervals of one
kind of literal (numbers, dates, timestamps, strings, booleans) plus whether NULL passes.

The order is treated as dense, so every implication drawn here also holds for integers or
days (it only misses some, e.g. `x < 6` and `x <= 5` on integers are not recognised as equal).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mvlattice.sql import ir


@dataclass(frozen=True, slots=True)
class Bound:
    value: Any
    inclusive: bool
    literal: ir.Literal = field(compare=False)

    @staticmethod
    def of(literal: ir.Literal, inclusive: bool) -> Bound:
        return Bound(literal.value, inclusive, literal)


@dataclass(frozen=True, slots=True)
class Interval:
    low: Bound | None  # None: unbounded
    high: Bound | None

    @property
    def is_point(self) -> bool:
        return self.low is not None and self.low == self.high and self.low.inclusive

    @property
    def is_empty(self) -> bool:
        if self.low is None or self.high is None:
            return False
        if self.low.value != self.high.value:
            return self.low.value > self.high.value
        return not (self.low.inclusive and self.high.inclusive)


FULL = Interval(None, None)


@dataclass(frozen=True, slots=True)
class Range:
    intervals: tuple[Interval, ...]
    nulls: bool

    # -- construction ---------------------------------------------------------------------
    @staticmethod
    def all() -> Range:
        return Range((FULL,), True)

    @staticmethod
    def not_null() -> Range:
        return Range((FULL,), False)

    @staticmethod
    def null_only() -> Range:
        return Range((), True)

    @staticmethod
    def compare(op: str, literal: ir.Literal) -> Range:
        """The values v with `v op literal` TRUE (NULL never passes a comparison)."""
        closed, opened = Bound.of(literal, True), Bound.of(literal, False)
        pieces = {
            "=": (Interval(closed, closed),),
            "<": (Interval(None, opened),),
            "<=": (Interval(None, closed),),
            ">": (Interval(opened, None),),
            ">=": (Interval(closed, None),),
            "<>": (Interval(None, opened), Interval(opened, None)),
        }[op]
        return Range(pieces, False)

    @staticmethod
    def points(literals: tuple[ir.Literal, ...]) -> Range:
        out = Range((), False)
        for literal in literals:
            out = out.union(Range.compare("=", literal))
        return out

    # -- algebra --------------------------------------------------------------------------
    def intersect(self, other: Range) -> Range:
        """Both lists are sorted and disjoint: one sweep meets every overlapping pair."""
        pieces = []
        a, b, i, j = self.intervals, other.intervals, 0, 0
        while i < len(a) and j < len(b):
            x, y = a[i], b[j]
            piece = Interval(_max_low(x.low, y.low), _min_high(x.high, y.high))
            if not piece.is_empty:
                pieces.append(piece)
            if _high_key(x.high) < _high_key(y.high):
                i += 1
            else:
                j += 1
        return Range(_merge(pieces), self.nulls and other.nulls)

    def union(self, other: Range) -> Range:
        return Range(_merge([*self.intervals, *other.intervals]), self.nulls or other.nulls)

    def complement(self) -> Range:
        gaps, low = [], None
        for piece in self.intervals:
            if piece.low is not None:
                gaps.append(Interval(low, _flip(piece.low)))
            low = _flip(piece.high) if piece.high is not None else None
            if piece.high is None:
                break
        else:
            gaps.append(Interval(low, None))
        return Range(_merge([g for g in gaps if not g.is_empty]), not self.nulls)

    def contains(self, other: Range) -> bool:
        """Every value (and NULL) `other` lets through, this range lets through too."""
        return self.intersect(other) == other

    @property
    def is_all(self) -> bool:
        return self == Range.all()

    @property
    def is_empty(self) -> bool:
        return not self.intervals and not self.nulls

    @property
    def is_one_value(self) -> bool:
        """Exactly one non-NULL value passes (as the literals compare)."""
        return len(self.intervals) == 1 and self.intervals[0].is_point and not self.nulls

    # -- back to a predicate --------------------------------------------------------------
    def predicate(self, term: ir.Expr) -> ir.Expr | None:
        """A predicate TRUE exactly for the values of this range; None when it is everything."""
        if self.is_all:
            return None
        if self.intervals == (FULL,):
            return ir.Not(ir.IsNull(term))
        excluded = _excluded_points(self.intervals)
        if excluded:  # all but a few values: `<>` or NOT IN rather than open intervals
            parts = [_not_in(excluded, term)]
        else:
            parts = _point_parts(self.intervals, term) + _interval_parts(self.intervals, term)
        if self.nulls:
            parts.append(ir.IsNull(term))
        if not parts:
            return ir.Literal("boolean", "false")
        return parts[0] if len(parts) == 1 else ir.Or(tuple(parts))


def _point_parts(intervals: tuple[Interval, ...], term: ir.Expr) -> list[ir.Expr]:
    points = [i.low.literal for i in intervals if i.is_point and i.low is not None]
    if not points:
        return []
    if len(points) == 1:
        return [ir.Compare("=", term, points[0])]
    return [ir.InList(term, tuple(points))]


def _excluded_points(intervals: tuple[Interval, ...]) -> list[ir.Literal]:
    """The values missing from `intervals` when they are every value but a few points."""
    if len(intervals) < 2 or intervals[0].low is not None or intervals[-1].high is not None:
        return []
    points = []
    for a, b in zip(intervals, intervals[1:], strict=False):
        if a.high is None or b.low is None or a.high.inclusive or b.low.inclusive:
            return []
        if a.high.value != b.low.value:
            return []
        points.append(a.high.literal)
    return points


def _not_in(points: list[ir.Literal], term: ir.Expr) -> ir.Expr:
    if len(points) == 1:
        return ir.Compare("<>", term, points[0])
    return ir.Not(ir.InList(term, tuple(points)))


def _interval_parts(intervals: tuple[Interval, ...], term: ir.Expr) -> list[ir.Expr]:
    parts: list[ir.Expr] = []
    for piece in intervals:
        if piece.is_point:
            continue
        sides = []
        if piece.low is not None:
            op = ">=" if piece.low.inclusive else ">"
            sides.append(ir.Compare(op, term, piece.low.literal))
        if piece.high is not None:
            op = "<=" if piece.high.inclusive else "<"
            sides.append(ir.Compare(op, term, piece.high.literal))
        parts.append(sides[0] if len(sides) == 1 else ir.And(tuple(sides)))
    return parts


def _flip(bound: Bound) -> Bound:
    return Bound(bound.value, not bound.inclusive, bound.literal)


def _low_key(bound: Bound | None) -> tuple:
    return (0,) if bound is None else (1, bound.value, 0 if bound.inclusive else 1)


def _max_low(a: Bound | None, b: Bound | None) -> Bound | None:
    return a if _low_key(a) >= _low_key(b) else b


def _high_key(bound: Bound | None) -> tuple:
    return (2,) if bound is None else (1, bound.value, 1 if bound.inclusive else 0)


def _min_high(a: Bound | None, b: Bound | None) -> Bound | None:
    return a if _high_key(a) <= _high_key(b) else b


def _touch(high: Bound | None, low: Bound | None) -> bool:
    """Whether an interval ending at `high` meets or overlaps one starting at `low`."""
    if high is None or low is None:
        return True
    if high.value != low.value:
        return high.value > low.value
    return high.inclusive or low.inclusive


def _merge(pieces: list[Interval]) -> tuple[Interval, ...]:
    out: list[Interval] = []
    for piece in sorted(pieces, key=lambda i: _low_key(i.low)):
        if out and _touch(out[-1].high, piece.low):
            last = out[-1]
            high = last.high if _high_key(last.high) >= _high_key(piece.high) else piece.high
            out[-1] = Interval(last.low, high)
        else:
            out.append(piece)
    return tuple(out)
