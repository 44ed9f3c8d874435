"""Ranges (GL01 §3.1.2) and the split of predicates into classes, ranges and residuals."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from mvlattice.mvrewrite.match.predicates import NULLNESS, analyze, range_of
from mvlattice.mvrewrite.match.ranges import Range
from mvlattice.sql import ir

X = ir.Column("t", "x")
Y = ir.Column("t", "y")


def n(value: int | str) -> ir.Literal:
    return ir.Literal("number", str(value))


def s(value: str) -> ir.Literal:
    return ir.Literal("string", value)


def member(r: Range, value: int | None) -> bool:
    """Whether `value` (None: NULL) passes the range, by its intervals."""
    if value is None:
        return r.nulls
    v = Decimal(value)
    for piece in r.intervals:
        low_ok = piece.low is None or (
            v > piece.low.value or (v == piece.low.value and piece.low.inclusive)
        )
        high_ok = piece.high is None or (
            v < piece.high.value or (v == piece.high.value and piece.high.inclusive)
        )
        if low_ok and high_ok:
            return True
    return False


def test_comparisons_exclude_null() -> None:
    r = Range.compare(">", n(5))
    assert not r.nulls
    assert [member(r, v) for v in (4, 5, 6)] == [False, False, True]


def test_intersect_and_contains() -> None:
    wide = Range.compare(">", n(5))
    narrow = Range.compare(">=", n(10)).intersect(Range.compare("<", n(20)))
    assert wide.contains(narrow)
    assert not narrow.contains(wide)
    assert Range.all().contains(wide)
    assert not wide.contains(Range.all())  # NULL passes "all" but not x > 5


def test_points_merge_and_complement() -> None:
    r = Range.points((n(3), n(1), n(3)))
    assert len(r.intervals) == 2
    rest = r.complement()
    assert rest.nulls and not member(rest, 1) and member(rest, 2) and member(rest, 4)


def test_touching_intervals_merge() -> None:
    r = Range.compare("<=", n(5)).union(Range.compare(">", n(5)))
    assert r == Range.not_null()
    assert Range.compare("<", n(5)).union(Range.compare(">", n(5))) == Range.compare("<>", n(5))


def test_predicate_round_trip() -> None:
    r = Range.compare(">", n(10)).intersect(Range.compare("<=", n(12)))
    assert r.predicate(X) == ir.And((ir.Compare(">", X, n(10)), ir.Compare("<=", X, n(12))))
    assert Range.points((n(1), n(2))).predicate(X) == ir.InList(X, (n(1), n(2)))
    assert Range.null_only().predicate(X) == ir.IsNull(X)
    assert Range.not_null().predicate(X) == ir.Not(ir.IsNull(X))
    assert Range.all().predicate(X) is None


values = st.integers(-5, 5)
ops = st.sampled_from(["=", "<>", "<", "<=", ">", ">="])
atoms = st.one_of(
    st.builds(lambda op, v: Range.compare(op, n(v)), ops, values),
    st.just(Range.null_only()),
    st.just(Range.not_null()),
    st.just(Range.all()),
)
ranges = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.builds(lambda a, b: a.intersect(b), inner, inner),
        st.builds(lambda a, b: a.union(b), inner, inner),
        st.builds(lambda a: a.complement(), inner),
    ),
    max_leaves=6,
)
probes = [None, *range(-7, 8)]
halves = [Decimal(v) / 2 for v in range(-15, 16)]


@settings(max_examples=300, deadline=None)
@given(ranges, ranges)
def test_algebra_agrees_with_membership(a: Range, b: Range) -> None:
    for v in probes:
        assert member(a.intersect(b), v) == (member(a, v) and member(b, v))
        assert member(a.union(b), v) == (member(a, v) or member(b, v))
        assert member(a.complement(), v) == (not member(a, v))
    if a.contains(b):
        assert all(member(a, v) for v in probes if member(b, v))
        assert all(_at(a, h) for h in halves if _at(b, h))


def _at(r: Range, value: Decimal) -> bool:
    return any(
        (p.low is None or value > p.low.value or (value == p.low.value and p.low.inclusive))
        and (p.high is None or value < p.high.value or (value == p.high.value and p.high.inclusive))
        for p in r.intervals
    )


def test_range_of_recognises_the_forms() -> None:
    assert range_of(ir.Compare("<", n(5), X)) == (X, "number", Range.compare(">", n(5)))
    assert range_of(ir.IsNull(X)) == (X, NULLNESS, Range.null_only())
    assert range_of(ir.Not(ir.IsNull(X))) == (X, NULLNESS, Range.not_null())
    assert range_of(ir.InList(X, (n(1), n(2))))[2] == Range.points((n(1), n(2)))
    either = ir.Or((ir.Compare("=", X, n(1)), ir.IsNull(X)))
    assert range_of(either) == (X, "number", Range.points((n(1),)).union(Range.null_only()))


def test_string_literals_only_give_points() -> None:
    """'10' > '9' as strings but not as numbers; the column's type is unknown."""
    assert range_of(ir.Compare("=", X, s("a"))) is not None
    assert range_of(ir.InList(X, (s("a"), s("b")))) is not None
    assert range_of(ir.Compare(">", X, s("a"))) is None
    assert range_of(ir.Compare("<>", X, s("a"))) is None
    assert range_of(ir.Not(ir.InList(X, (s("a"),)))) is None


def test_what_is_not_a_range() -> None:
    assert range_of(ir.Compare("<=>", X, n(1))) is None
    assert range_of(ir.Compare("=", X, ir.Literal("null", ""))) is None
    # an IN list with a NULL is TRUE for its other values: test_disjunctions.py
    assert range_of(ir.Or((ir.Compare("=", X, n(1)), ir.Compare("=", Y, n(1))))) is None
    assert range_of(ir.Compare(">", X, Y)) is None


def test_analyze_splits_conjuncts() -> None:
    z = ir.Column("u", "z")
    like = ir.Func("Like", (("this", X), ("expression", s("a%"))))
    found = analyze(
        (ir.Compare("=", X, z), ir.Compare(">", z, n(3)), ir.Compare("<", X, n(9)), like)
    )
    assert found.classes.rep(z) == found.classes.rep(X)
    rep = found.classes.rep(X)
    assert found.ranges[(rep, "number")] == Range.compare(">", n(3)).intersect(
        Range.compare("<", n(9))
    )
    assert len(found.residuals) == 1


def test_effective_range_knows_null_is_excluded_by_any_kind() -> None:
    found = analyze((ir.Compare(">", X, n(3)),))
    assert not found.effective(X, NULLNESS).nulls
    assert not found.effective(X, "date").nulls


def test_one_value_ranges() -> None:
    assert Range.compare("=", n(5)).is_one_value
    assert Range.points((n(5), n(5))).is_one_value
    assert Range.compare(">=", n(5)).intersect(Range.compare("<=", n(5))).is_one_value
    assert not Range.points((n(5), n(6))).is_one_value
    assert not Range.compare("=", n(5)).union(Range.null_only()).is_one_value
    assert not Range.null_only().is_one_value
    assert not Range.compare(">", n(5)).intersect(Range.compare("<=", n(5))).is_one_value
