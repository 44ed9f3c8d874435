"""Disjunctions and richer predicates (issue 20, class 3): what one predicate says about a
column (`atoms`), the bounded normal form and its cap (`normal_form`), implication between
predicates (`implication`) — checked against SQL's three-valued logic row by row."""

from __future__ import annotations

import re
from decimal import Decimal
from itertools import product
from pathlib import Path

import pytest
from deltalake import DeltaTable, Field, Schema
from deltalake.schema import PrimitiveType
from hypothesis import given, settings
from hypothesis import strategies as st

from mvlattice.delta.columns import delta_log_types
from mvlattice.mvrewrite.match.atoms import NULLNESS, TEXT, is_string, range_of
from mvlattice.mvrewrite.match.implication import covered, implies
from mvlattice.mvrewrite.match.normal_form import (
    CAP,
    Conjunction,
    Form,
    TooLarge,
    hull,
    normal_form,
)
from mvlattice.mvrewrite.match.predicates import analyze
from mvlattice.mvrewrite.match.ranges import Range
from mvlattice.sql import ir
from mvlattice.sql.canon import Classes

X, Y, S, U = ir.Column("t", "x"), ir.Column("t", "y"), ir.Column("t", "s"), ir.Column("u", "s")
TEXT_COLUMNS = frozenset({S})
NO_CLASSES = Classes()
NULL = ir.Literal("null", "")


def n(value: int) -> ir.Literal:
    return ir.Literal("number", str(value))


def s(value: str) -> ir.Literal:
    return ir.Literal("string", value)


def eq(column: ir.Column, value: int) -> ir.Expr:
    return ir.Compare("=", column, n(value))


def like(column: ir.Column, pattern: str, negate: bool = False) -> ir.Func:
    args: tuple = (("this", column), ("expression", s(pattern)))
    return ir.Func("Like", args + ((("negate", True),) if negate else ()))


def form(expr: ir.Expr, text: frozenset[ir.Column] = TEXT_COLUMNS, cap: int = CAP) -> Form:
    return normal_form(expr, NO_CLASSES, text, cap)


def opaque(i: int, column: ir.Column = X) -> ir.Expr:
    """A predicate the ranges cannot express (`x % i = 0`)."""
    mod = ir.Func("Mod", (("this", column), ("expression", n(i))))
    return ir.Compare("=", mod, n(0))


# -- atoms ---------------------------------------------------------------------------------
def test_in_and_not_in_with_a_null_in_the_list() -> None:
    """x IN (1, NULL) is TRUE for 1 only; x NOT IN (1, NULL) is never TRUE."""
    assert range_of(ir.InList(X, (n(1), NULL))) == (X, "number", Range.points((n(1),)))
    assert range_of(ir.Not(ir.InList(X, (n(1), NULL)))) == (X, "number", Range((), False))
    assert range_of(ir.InList(X, (NULL,))) == (X, NULLNESS, Range((), False))
    not_in = range_of(ir.Not(ir.InList(X, (n(1), n(2)))))
    assert not_in is not None and not not_in[2].nulls


def test_strings_are_ordered_only_on_string_columns() -> None:
    assert range_of(ir.Compare(">", S, s("a"))) is None
    found = range_of(ir.Compare(">", S, s("a")), TEXT_COLUMNS)
    assert found is not None and found[1] == TEXT
    assert range_of(ir.Compare("<>", S, s("a")), TEXT_COLUMNS) is not None
    assert range_of(ir.Not(ir.InList(S, (s("a"),))), TEXT_COLUMNS) is not None
    # a string column against a number: Spark casts the string, no order to reason with
    assert range_of(ir.Compare(">", S, n(5)), TEXT_COLUMNS) is None
    assert range_of(ir.Compare("=", S, n(5)), TEXT_COLUMNS) is None


def test_like_prefix_is_a_string_range() -> None:
    found = range_of(like(S, "ab%"), TEXT_COLUMNS)
    assert found is not None
    column, kind, value = found
    assert (column, kind) == (S, TEXT)
    assert [value.predicate(S)] == [
        ir.And((ir.Compare(">=", S, s("ab")), ir.Compare("<", S, s("ac"))))
    ]
    assert range_of(like(S, "ab"), TEXT_COLUMNS) == (S, TEXT, Range.compare("=", s("ab")))
    assert range_of(like(S, "%"), TEXT_COLUMNS) == (S, TEXT, Range.not_null())
    negated = range_of(like(S, "ab%", negate=True), TEXT_COLUMNS)
    assert negated is not None and negated[2] == value.complement().intersect(Range.not_null())
    assert range_of(ir.Not(like(S, "ab%")), TEXT_COLUMNS) == negated


@pytest.mark.parametrize("pattern", ["a_%", "%a", "a%b%", "a%%", "a\\%", "_"])
def test_like_with_other_wildcards_or_escapes_is_no_range(pattern: str) -> None:
    assert range_of(like(S, pattern), TEXT_COLUMNS) is None


def test_like_needs_a_string_column_and_no_escape_clause() -> None:
    assert range_of(like(S, "ab%")) is None  # type unknown
    escaped = ir.Func("Escape", (("this", like(S, "a!%%")), ("expression", s("!"))))
    assert range_of(escaped, TEXT_COLUMNS) is None
    assert range_of(ir.Func("ILike", like(S, "ab%").args), TEXT_COLUMNS) is None


def test_prefix_successors_skip_surrogates_and_stop_at_the_last_code_point() -> None:
    found = range_of(like(S, "a\ud7ff%"), TEXT_COLUMNS)
    assert found is not None and found[2].intervals[0].high.value == "a\ue000"  # type: ignore[union-attr]
    assert range_of(like(S, "a\U0010ffff%"), TEXT_COLUMNS) is None


def test_a_class_with_a_column_not_known_to_be_string_is_not_compared_as_strings() -> None:
    join = ir.Compare("=", S, U)  # u.s has no known type
    found = analyze((join, ir.Compare(">", S, s("a"))), TEXT_COLUMNS)
    assert found.ranges == {} and len(found.residuals) == 1
    both = analyze((join, ir.Compare(">", S, s("a"))), frozenset({S, U}))
    assert list(both.ranges) == [(S, TEXT)]


def test_the_delta_log_declares_char_varchar_and_collations(tmp_path: Path) -> None:
    """Delta stores them as `string` with the declaration in the field's metadata."""
    fields = [
        Field("s", PrimitiveType("string")),
        Field("c", PrimitiveType("string"), metadata={"__CHAR_VARCHAR_TYPE_STRING": "CHAR(4)"}),
        Field("v", PrimitiveType("string"), metadata={"__CHAR_VARCHAR_TYPE_STRING": "varchar(8)"}),
        Field("l", PrimitiveType("string"), metadata={"__COLLATIONS": {"l": "spark.UTF8_LCASE"}}),
        Field("b", PrimitiveType("string"), metadata={"__COLLATIONS": {"b": "spark.UTF8_BINARY"}}),
        Field("n", PrimitiveType("integer")),
    ]
    DeltaTable.create(str(tmp_path / "t"), Schema(fields))
    types = delta_log_types(str(tmp_path / "t"))
    assert types == {
        "s": "string",
        "c": "char(4)",
        "v": "varchar(8)",
        "l": "string collate utf8_lcase",
        "b": "string",
        "n": "integer",
    }
    assert [c for c, t in types.items() if is_string(t)] == ["s", "v", "b"]


# -- the normal form -----------------------------------------------------------------------
def test_de_morgan_holds_with_nulls() -> None:
    """NOT (x > 5 OR y IS NULL): x <= 5 (not NULL) AND y IS NOT NULL."""
    (only,) = form(ir.Not(ir.Or((ir.Compare(">", X, n(5)), ir.IsNull(Y)))))
    assert only.get((X, "number")) == Range.compare("<=", n(5))
    assert only.get((Y, NULLNESS)) == Range.not_null()


def test_disjuncts_differing_in_one_range_merge() -> None:
    """(a AND x) OR (b AND x) is (a OR b) AND x."""
    expr = ir.Or(
        (
            ir.And((eq(X, 1), ir.Compare(">", Y, n(0)))),
            ir.And((eq(X, 2), ir.Compare(">", Y, n(0)))),
        )
    )
    (only,) = form(expr)
    assert only.get((X, "number")) == Range.points((n(1), n(2)))
    assert only.get((Y, "number")) == Range.compare(">", n(0))


def test_absorption_and_contradictions() -> None:
    assert form(ir.Or((opaque(2), ir.And((opaque(2), opaque(3)))))) == form(opaque(2))
    contradiction = ir.And((eq(X, 1), eq(X, 2)))
    assert form(ir.Or((contradiction, eq(Y, 1)))) == form(eq(Y, 1))
    assert form(ir.And((ir.IsNull(X), ir.Compare(">", X, n(1))))) == ()


def test_constants() -> None:
    assert form(ir.TRUE) == (Conjunction((), frozenset()),)
    assert form(ir.Literal("boolean", "false")) == ()
    assert form(NULL) == () and form(ir.Not(NULL)) == ()
    assert form(ir.Or((eq(X, 1), ir.Literal("boolean", "false")))) == form(eq(X, 1))


def test_the_cap_bounds_the_form() -> None:
    """Six ORs of two unrelated predicates make 64 conjunctions (the cap); seven, 128."""
    ors = [ir.Or((opaque(p), opaque(p, Y))) for p in (2, 3, 5, 7, 11, 13, 17)]
    assert len(form(ir.And(tuple(ors[:6])))) == CAP
    with pytest.raises(TooLarge):
        form(ir.And(tuple(ors)))
    with pytest.raises(TooLarge):
        form(ir.And(tuple(ors[:3])), cap=7)


def test_a_wide_product_that_collapses_stays_small() -> None:
    """Nested ranges absorb each other: 2^12 products, a handful of conjunctions."""
    ors = [ir.Or((ir.Compare(">", X, n(i)), opaque(i + 2, Y))) for i in range(12)]
    assert len(form(ir.And(tuple(ors)))) <= 13


def test_hull_is_implied_by_every_disjunct() -> None:
    expr = ir.Or(
        (
            ir.And((eq(X, 1), ir.Compare(">", Y, n(0)))),
            ir.And((eq(X, 2), ir.Compare(">", Y, n(5)), opaque(2))),
        )
    )
    assert hull(form(expr)) == {
        (X, "number"): Range.points((n(1), n(2))),
        (Y, "number"): Range.compare(">", n(0)),
    }


def test_analyze_reads_disjunctions_through_their_form() -> None:
    merged = ir.Or(
        (
            ir.And((eq(X, 1), ir.Compare(">", Y, n(0)))),
            ir.And((eq(X, 2), ir.Compare(">", Y, n(0)))),
        )
    )
    found = analyze((merged,))
    assert not found.residuals and set(found.ranges) == {(X, "number"), (Y, "number")}
    uneven = ir.Or((ir.And((eq(X, 1), opaque(2))), ir.And((eq(X, 2), opaque(3)))))
    found = analyze((uneven,))
    assert len(found.residuals) == 1
    assert found.implied == {(X, "number"): Range.points((n(1), n(2)))}
    assert found.effective(X, "number") == Range.points((n(1), n(2)))
    # a tighter range of the block's own makes the hull redundant
    assert analyze((uneven, eq(X, 1))).implied == {}


# -- implication ---------------------------------------------------------------------------
def test_an_in_list_is_covered_by_disjuncts_one_value_each() -> None:
    target = ir.Or((ir.And((eq(X, 1), opaque(2))), ir.And((eq(X, 2), opaque(2)))))
    held = analyze((ir.InList(X, (n(1), n(2))), opaque(2)))
    assert implies(held, target)
    assert not implies(analyze((ir.InList(X, (n(1), n(3))), opaque(2))), target)


def test_nulls_in_implication() -> None:
    target = ir.Or((ir.IsNull(X), opaque(2, Y)))
    assert implies(analyze((ir.IsNull(X),)), target)
    assert not implies(analyze((ir.Compare(">=", X, n(5)),)), target)
    assert implies(analyze((ir.Not(ir.Compare("<=", X, n(0))), opaque(2, Y))), target)


def test_a_block_no_row_satisfies_implies_nothing() -> None:
    assert not implies(analyze((eq(X, 1), eq(X, 2))), ir.Or((eq(Y, 1), opaque(3))))


def test_splits_are_bounded() -> None:
    """An IN list of 300 values covered by 300 disjuncts, a piece per value: more work than
    one test may do; nine of the values are covered at once."""
    atoms = [opaque(i + 2, Y) for i in range(300)]
    wanted = tuple(
        Conjunction((((X, "number"), Range.points((n(i),))),), frozenset((atoms[i],)))
        for i in range(300)
    )
    item = Conjunction(
        (((X, "number"), Range.points(tuple(n(i) for i in range(300)))),), frozenset(atoms)
    )
    with pytest.raises(TooLarge):
        covered(item, wanted)
    few = Conjunction(
        (((X, "number"), Range.points(tuple(n(i) for i in range(9)))),), frozenset(atoms)
    )
    assert covered(few, wanted)


# -- three-valued logic, row by row ----------------------------------------------------------
NUMBERS = (None, 0, 1, 2, 3)
STRINGS = (None, "", "a", "ab", "abc", "b", "ba")
ROWS = [dict(zip((X, Y, S), r, strict=True)) for r in product(NUMBERS, NUMBERS, STRINGS)]


def truth(expr: ir.Expr, row: dict) -> bool | None:
    """SQL's value of `expr` on `row` (None: NULL)."""
    if isinstance(expr, ir.Literal):
        return None if expr.kind == "null" else expr.text == "true"
    if isinstance(expr, ir.Not):
        inner = truth(expr.term, row)
        return None if inner is None else not inner
    if isinstance(expr, ir.And | ir.Or):
        values = [truth(t, row) for t in expr.terms]
        decisive = isinstance(expr, ir.Or)
        if decisive in values:
            return decisive
        return None if None in values else not decisive
    if isinstance(expr, ir.IsNull):
        return value(expr.term, row) is None
    if isinstance(expr, ir.InList):
        return _in(value(expr.term, row), [value(v, row) for v in expr.values])
    if isinstance(expr, ir.Compare):
        return _compare(expr.op, value(expr.left, row), value(expr.right, row))
    if isinstance(expr, ir.Func) and expr.op == "Like":
        args = dict(expr.args)
        found = _like(value(args["this"], row), args["expression"].text)
        return None if found is None else found != bool(args.get("negate"))
    raise AssertionError(expr)


def value(expr: ir.Expr, row: dict):
    if isinstance(expr, ir.Column):
        found = row[expr]
        return Decimal(found) if isinstance(found, int) else found
    if isinstance(expr, ir.Literal):
        return expr.value
    raise AssertionError(expr)


def _in(item, values: list) -> bool | None:
    if item is None:
        return None
    if item in [v for v in values if v is not None]:
        return True
    return None if None in values else False


def _compare(op: str, a, b) -> bool | None:
    if a is None or b is None:
        return None
    return {"=": a == b, "<>": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def _like(text: str | None, pattern: str) -> bool | None:
    if text is None:
        return None
    regex = "".join(".*" if c == "%" else "." if c == "_" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, text, re.DOTALL) is not None


def passes(item: Conjunction, row: dict) -> bool:
    """Whether `row` is one of the rows the conjunction describes."""
    for (column, _), allowed in item.ranges:
        if not _member(allowed, value(column, row)):
            return False
    return all(truth(atom, row) is True for atom in item.atoms)


def _member(allowed: Range, item) -> bool:
    if item is None:
        return allowed.nulls
    for piece in allowed.intervals:
        low, high = piece.low, piece.high
        if low is not None and (item < low.value or (item == low.value and not low.inclusive)):
            continue
        if high is not None and (item > high.value or (item == high.value and not high.inclusive)):
            continue
        return True
    return False


def _number_atoms() -> st.SearchStrategy[ir.Expr]:
    column = st.sampled_from((X, Y))
    literal = st.sampled_from((0, 1, 2, 3)).map(n)
    listed = st.lists(st.one_of(literal, st.just(NULL)), min_size=1, max_size=3)
    return st.one_of(
        st.builds(ir.Compare, st.sampled_from(("=", "<>", "<", "<=", ">", ">=")), column, literal),
        st.builds(lambda c, v: ir.Compare(">", v, c), column, literal),
        st.builds(lambda c, vs: ir.InList(c, tuple(vs)), column, listed),
        st.builds(ir.IsNull, column),
    )


def _string_atoms() -> st.SearchStrategy[ir.Expr]:
    literal = st.sampled_from(("", "a", "ab", "b", "c")).map(s)
    pattern = st.sampled_from(("a%", "ab%", "b%", "%", "a", "a_", "%b"))
    return st.one_of(
        st.builds(ir.Compare, st.sampled_from(("=", "<>", "<", ">=")), st.just(S), literal),
        st.builds(lambda p, neg: like(S, p, neg), pattern, st.booleans()),
        st.builds(lambda vs: ir.InList(S, tuple(vs)), st.lists(literal, min_size=1, max_size=2)),
        st.just(ir.IsNull(S)),
    )


PREDICATES = st.recursive(
    st.one_of(_number_atoms(), _string_atoms()),
    lambda inner: st.one_of(
        st.builds(ir.Not, inner),
        st.lists(inner, min_size=2, max_size=3).map(lambda ts: ir.And(tuple(ts))),
        st.lists(inner, min_size=2, max_size=3).map(lambda ts: ir.Or(tuple(ts))),
    ),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(PREDICATES)
def test_the_form_holds_exactly_the_rows_where_the_predicate_is_true(expr: ir.Expr) -> None:
    try:
        found = form(expr)
    except TooLarge:
        return
    for row in ROWS:
        assert (truth(expr, row) is True) == any(passes(c, row) for c in found), row


@settings(max_examples=300, deadline=None)
@given(st.lists(PREDICATES, min_size=1, max_size=3), PREDICATES)
def test_implication_is_sound(conjuncts: list[ir.Expr], target: ir.Expr) -> None:
    held = analyze(tuple(conjuncts), TEXT_COLUMNS)
    try:
        proven = implies(held, target)
    except TooLarge:
        return
    if proven:
        for row in ROWS:
            if all(truth(c, row) is True for c in conjuncts):
                assert truth(target, row) is True, row
