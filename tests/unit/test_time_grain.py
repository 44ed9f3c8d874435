"""Time-grain rollup (issue 20, class 2) without Spark: the grain lattice, bound alignment,
and rewrites onto views grouped by day, by week and by date."""

from __future__ import annotations

import datetime as dt

import pytest

from mvlattice.mvrewrite.match import time_grain
from mvlattice.mvrewrite.rewriter import rewrite
from mvlattice.sql import ir
from mvlattice.sql.canon import Classes
from tests.golden.rewrite import time_grain as cases

TS = ir.Column("e", "ts")


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory):
    return cases.model(tmp_path_factory.mktemp("time_grain"))


# -- the grain lattice ------------------------------------------------------------------------
@pytest.mark.parametrize("coarse", ["week", "month", "quarter", "year"])
def test_day_rolls_up_to_week_month_quarter_year(coarse: str) -> None:
    assert time_grain.rolls_up("day", coarse)


@pytest.mark.parametrize("coarse", ["month", "quarter", "year", "day"])
def test_week_never_rolls_into_month_quarter_year(coarse: str) -> None:
    assert not time_grain.rolls_up("week", coarse)
    assert not time_grain.comparable("week", coarse) or coarse == "day"


def test_the_order_is_a_partial_order() -> None:
    grains = time_grain.GRAINS
    for a in grains:
        assert time_grain.rolls_up(a, a)
        for b in grains:
            if a != b and time_grain.rolls_up(a, b):
                assert not time_grain.rolls_up(b, a)
            for c in grains:
                if time_grain.rolls_up(a, b) and time_grain.rolls_up(b, c):
                    assert time_grain.rolls_up(a, c)
    assert not time_grain.rolls_up("month", "day")
    assert not time_grain.rolls_up("day", "hour")


@pytest.mark.parametrize(
    ("moment", "grain", "expected"),
    [
        ("2021-03-01 00:00:00", "month", True),
        ("2021-03-01 00:00:00", "week", True),  # a Monday
        ("2021-04-01 00:00:00", "week", False),  # a Thursday
        ("2021-04-01 00:00:00", "quarter", True),
        ("2021-03-01 00:00:00", "quarter", False),
        ("2021-01-01 00:00:00", "year", True),
        ("2021-03-15 10:00:00", "day", False),
        ("2021-03-15 10:00:00", "hour", True),
        ("2021-03-15 10:00:01", "minute", False),
    ],
)
def test_bounds_align_to_a_grain(moment: str, grain: str, expected: bool) -> None:
    assert time_grain.aligned(dt.datetime.fromisoformat(moment), grain) is expected


def test_moments_are_iso_literals_only() -> None:
    assert time_grain.moment_of(ir.Literal("string", "2021-03-01")) == dt.datetime(2021, 3, 1)
    assert time_grain.moment_of(ir.Literal("date", "2021-03-01")) == dt.datetime(2021, 3, 1)
    assert time_grain.moment_of(ir.Literal("string", "20210301")) is None
    assert time_grain.moment_of(ir.Literal("string", "2021-03-01+01:00")) is None
    assert time_grain.moment_of(ir.Literal("number", "2021")) is None


# -- derive ------------------------------------------------------------------------------------
def _trunc(unit: str, term: ir.Expr = TS) -> ir.Expr:
    return ir.Func("TimestampTrunc", (("this", term), ("unit", ir.Func("Var", (("this", unit),)))))


def _grains(unit: str, kind: str = "TIMESTAMP") -> tuple[time_grain.Grain, ...]:
    return time_grain.grains_of([_trunc(unit)], lambda column: kind)


def test_derive_applies_the_query_function_to_the_view_output() -> None:
    month = ir.Func("Month", (("this", ir.Func("TsOrDsToDate", (("this", TS),))),))
    derived = time_grain.derive(month, _grains("DAY"), Classes())
    assert derived == ir.Func(
        "Month", (("this", ir.Func("TsOrDsToDate", (("this", _trunc("DAY")),))),)
    )
    assert time_grain.derive(month, _grains("WEEK"), Classes()) == month


def test_derive_reads_aligned_bounds_only() -> None:
    grains = _grains("MONTH")
    lower = ir.Compare(">=", TS, ir.Literal("string", "2021-03-01"))
    assert time_grain.derive(lower, grains, Classes()) == ir.Compare(
        ">=", _trunc("MONTH"), ir.Literal("string", "2021-03-01")
    )
    for op, text in (("<", "2021-03-15"), ("<=", "2021-04-01"), (">", "2021-03-01")):
        bound = ir.Compare(op, TS, ir.Literal("string", text))
        assert time_grain.derive(bound, grains, Classes()) == bound


def test_columns_of_unknown_or_other_types_offer_no_grain() -> None:
    assert time_grain.grains_of([_trunc("DAY")], lambda column: None) == ()
    assert time_grain.grains_of([_trunc("DAY")], lambda column: "STRING") == ()
    assert time_grain.grains_of([_trunc("FORTNIGHT")], lambda column: "TIMESTAMP") == ()


# -- rewrites ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("view", "query"), cases.POSITIVE)
def test_finer_grain_answers(model, view: str, query: str) -> None:
    result = rewrite(query, cases.context(model, view))
    assert result.rewritten, result.explain
    assert f"{cases.SCHEMA}.{view} AS mv" in result.sql
    assert "events" not in result.sql


@pytest.mark.parametrize(("view", "query", "reason"), cases.NEGATIVE)
def test_coarser_or_misaligned_does_not(model, view: str, query: str, reason: str) -> None:
    result = rewrite(query, cases.context(model, view))
    assert not result.rewritten, result.sql
    assert result.explain[0].reason == reason


def test_month_from_day_reads_the_day_column(model) -> None:
    query = (
        "SELECT month(ts) AS mo, SUM(amount) AS s FROM events "
        "WHERE ts >= '2021-03-01' AND ts < '2021-04-01' GROUP BY month(ts)"
    )
    result = rewrite(query, cases.context(model, "by_day"))
    assert "MONTH(mv.day)" in result.sql
    assert "mv.day >= '2021-03-01' AND mv.day < '2021-04-01'" in result.sql


def test_without_column_types_nothing_is_derived(model) -> None:
    query = "SELECT year(ts) AS y, COUNT(*) AS c FROM events GROUP BY year(ts)"
    result = rewrite(query, cases.context(model, "by_day", types={}))
    assert not result.rewritten
