"""Multiset equality of collected rows, as the SSB bench and the demo use it."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from mvlattice.proof.comparison import same_rows


def test_order_does_not_matter_but_multiplicity_does() -> None:
    assert same_rows([(1, "a"), (2, None)], [(2, None), (1, "a")])
    assert not same_rows([(1, "a"), (1, "a")], [(1, "a")])
    assert not same_rows([(1, "a"), (1, "a")], [(1, "a"), (2, "a")])


def test_numbers_by_value_within_a_relative_tolerance() -> None:
    assert same_rows([(0.1 + 0.2, Decimal("1.50"))], [(0.3, 1.5)])
    assert same_rows([(1_000_000.0000001,)], [(1_000_000.0,)])
    assert not same_rows([(1.0,)], [(1.001,)])


def test_nulls_equal_only_nulls_and_other_values_compare_plainly() -> None:
    assert not same_rows([(None,)], [(0,)])
    day = dt.date(1997, 1, 1)
    assert same_rows([(day, True)], [(day, True)])
    assert not same_rows([(day, True)], [(day, False)])
