"""GROUPING SETS / ROLLUP / CUBE rewrites (tests/golden/rewrite/grouping_sets.txt) on Spark: each
positive case's original and rewritten SQL return the same rows (as multisets) under the same
column names, with the same Spark types column by column."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden.rewrite import runner

pytestmark = pytest.mark.spark

GOLDEN = runner.load(runner.HERE / "grouping_sets.txt")
POSITIVE = [c for c in GOLDEN.cases if c.positive]


@pytest.fixture(scope="module")
def hr(spark, warehouse: Path):
    runner.load_hr_tables(spark, warehouse)
    with runner._schema(spark):  # the views' SQL names tables without their schema
        for name in sorted({n for case in POSITIVE for n in case.views}):
            spark.sql(f"CREATE OR REPLACE VIEW {runner.SCHEMA}.{name} AS {GOLDEN.views[name]}")
    return spark


def test_there_are_positive_and_negative_cases() -> None:
    assert len(POSITIVE) >= 10
    assert len(GOLDEN.cases) - len(POSITIVE) >= len(POSITIVE)


def test_every_rewrite_returns_the_same_rows(hr) -> None:
    pairs = {case.title: (case.query, case.expected) for case in POSITIVE}
    found = runner.differences(hr, pairs)
    assert {name: diff for name, diff in found.items() if diff} == {}


@pytest.mark.parametrize("case", POSITIVE, ids=[c.title for c in POSITIVE])
def test_every_rewrite_has_the_same_names_and_types(hr, case: runner.Case) -> None:
    """Exactly: a SUM of a DECIMAL re-summed from a view's SUM is cast back to the
    DECIMAL(p + 10, s) Spark gives the original SUM, not left at the wider DECIMAL(p + 20, s)."""
    original, rewritten = (_schema(hr, sql) for sql in (case.query, case.expected))
    assert rewritten == original


def test_the_empty_input_cases_really_are_empty_and_one_row(hr) -> None:
    """The two 'no rows' cases check what they claim: Spark itself returns no row for ROLLUP
    over no rows and one row for GROUPING SETS (()) alone (the rewrite must match both)."""
    cases = {c.title: c for c in POSITIVE}
    rollup = cases["no rows: the grand total among other sets returns no row"]
    alone = cases["no rows: the empty set alone is a global aggregate and returns one row"]
    assert runner.rows(hr, rollup.query) == runner.rows(hr, rollup.expected) == []
    assert runner.rows(hr, alone.query) == runner.rows(hr, alone.expected) == [(0, 0)]


def test_grouping_tells_a_null_in_the_data_from_a_rolled_up_null(hr) -> None:
    case = next(c for c in POSITIVE if c.title.startswith("a dimension with NULL values"))
    found = runner.rows(hr, case.expected)
    assert sorted(g for name, g, *_ in found if name is None) == [0, 1]
    assert found == runner.rows(hr, case.query)


def _schema(spark, sql: str) -> list[tuple[str, str]]:
    with runner._schema(spark):
        fields = spark.sql(sql).schema.fields
    return [(f.name, f.dataType.simpleString()) for f in fields]
