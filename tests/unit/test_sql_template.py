"""The literal-free key of a query text (issue 31): texts that differ only in compared
literals of the same Spark type share it; anything else Spark's verdict may depend on keeps
them apart — and a text that cannot be keyed safely gets none."""

from __future__ import annotations

import doctest

import pytest

from mvlattice.sql import template
from mvlattice.sql.template import literal_free_key

BASE = "select p.category, sum(s.units) as u from shop.sales s where "


def test_the_docstring_examples_hold() -> None:
    assert doctest.testmod(template).failed == 0


@pytest.mark.parametrize(
    "one, other",
    [
        ("s.year = 2021", "s.year = 1998"),
        ("s.year >= 2021 and s.year < 2023", "s.year >= 1 and s.year < 5"),
        ("s.year between 2020 and 2021", "s.year between 1 and 9"),
        ("p.category = 'c1'", "p.category = 'something else'"),
        ("p.category in ('a', 'b')", "p.category in ('x', 'y')"),
        ("s.units in (1, 2, 3)", "s.units in (7, 8, 9)"),
        ("s.year = 2021 or s.units <> 3", "s.year = 5 or s.units <> 4"),
        ("s.amount > 1.50", "s.amount > 9.99"),
        ("s.year = 2021", "s.year = 2021  /* a dashboard's comment */"),
        ("s.year = 2021", "s.year = 2021 -- a line comment\n"),
        ("s.year = 3000000000", "s.year = 4000000000"),
    ],
)
def test_texts_that_differ_only_in_compared_literals_share_a_key(one: str, other: str) -> None:
    key = literal_free_key(BASE + one)
    assert key is not None and key == literal_free_key(BASE + other)


@pytest.mark.parametrize(
    "one, other",
    [
        ("s.year = 2021", "s.year = 3000000000"),  # INT against BIGINT
        ("s.year = 1", "s.year = 1.5"),  # INT against DECIMAL
        ("s.amount > 1.5", "s.amount > 1.50"),  # DECIMAL(2,1) against DECIMAL(3,2)
        ("s.year = 1", "s.year = 1L"),  # a suffix types it
        ("s.year = 1", "s.year = 1e0"),  # an exponent: DOUBLE
        ("p.category = 'a'", 'p.category = "a"'),  # the quote is kept
        ("p.category = 'a'", "p.category = 1"),
        ("s.units in (1, 2)", "s.units in (1, 2, 3)"),  # the list's length
        ("s.year = 1 limit 5", "s.year = 1 limit 6"),  # LIMIT is not compared
        ("s.year = 1 group by 1", "s.year = 1 group by 2"),  # ordinals
        ("repeat(p.category, 2) = 'a'", "repeat(p.category, 3) = 'a'"),  # arguments
        ("s.year = 1 + 1", "s.year = 2 + 1"),  # part of an expression
        ("s.day = date '2021-01-01'", "s.day = date '2021-02-30'"),  # typed literals
        ("s.year = -1", "s.year = -2"),  # a sign makes an expression
        ("`s`.year = 1", "s.year = 1"),  # backticks are kept
        ("s.year=1", "s.year = 1"),  # so is whether tokens touched
        ("p.category = 'a'", "p.category = 'a\\'b'"),  # escapes stay as written
    ],
)
def test_what_spark_may_read_differently_keeps_texts_apart(one: str, other: str) -> None:
    assert literal_free_key(BASE + one) != literal_free_key(BASE + other)


@pytest.mark.parametrize(
    "sql",
    [
        BASE + "s.year = 1 /*+ BROADCAST(p) */",  # a hint
        BASE + "s.year = 1 /* nested /* comment */ */",
        BASE + "s.year = 1 /* unterminated",
        'select "foodmart"."sales" from x where a = \'unterminated',
    ],
)
def test_text_between_tokens_that_is_not_plain_gives_no_key(sql: str) -> None:
    assert literal_free_key(sql) is None


def test_a_long_string_stays_in_the_key() -> None:
    long, longer = "x" * 300, "y" * 300
    assert literal_free_key(f"{BASE}p.category = '{long}'") != literal_free_key(
        f"{BASE}p.category = '{longer}'"
    )
