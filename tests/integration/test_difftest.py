"""A bounded slice of the differential tester (bench/difftest.py runs it long): seeded random
queries over the synthetic star (NULLs, duplicates, empty groups) and over FoodMart, each
rewritten onto generated tiles and materializations and compared with the original on Spark."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mvlattice.proof import difftest
from mvlattice.proof.stars import FOODMART, SYNTHETIC

pytestmark = pytest.mark.spark


def _prepared(spark, star, warehouse: str, folder: Path, **sizes: int) -> Iterator:
    database = spark.catalog.currentDatabase()
    prepared = difftest.prepare(spark, star, warehouse, folder, seed=1, **sizes)
    spark.catalog.setCurrentDatabase(database)  # the workspace chose the model's schema
    yield prepared
    difftest.release(prepared)


@pytest.fixture(scope="module")
def synthetic(spark, warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    folder = tmp_path_factory.mktemp("difftest_synthetic")
    yield from _prepared(spark, SYNTHETIC, str(warehouse), folder, tiles=2, mvs=2)


@pytest.fixture(scope="module")
def foodmart_star(spark, foodmart: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    folder = tmp_path_factory.mktemp("difftest_foodmart")
    yield from _prepared(spark, FOODMART, str(foodmart), folder, tiles=2, mvs=1)


def _check(report: difftest.Report, queries: int, share: float) -> None:
    assert report.queries == queries
    assert [str(f) for f in report.findings] == []  # every mismatch and error, with its seed
    assert report.rewritten >= share * queries, report.summary()


def test_synthetic_star(synthetic) -> None:
    assert synthetic.problems == ()
    _check(difftest.run(synthetic, range(1000, 1040)), 40, 0.25)


def test_foodmart(foodmart_star) -> None:
    assert foodmart_star.problems == ()
    _check(difftest.run(foodmart_star, range(2000, 2010)), 10, 0.2)


def test_a_wrong_rewrite_is_reported(synthetic) -> None:
    """The comparison can fail: a lost row, a changed value, SQL Spark rejects."""
    base = (
        "SELECT c.city, COUNT(*) AS n FROM difft.sales AS s "
        "JOIN difft.cust AS c ON s.cust_id = c.cust_id GROUP BY c.city"
    )
    found = difftest.compare_pairs(
        synthetic,
        [
            (1, base, base + " HAVING c.city IS NOT NULL"),
            (2, base, base.replace("COUNT(*)", "COUNT(s.qty)")),
            (
                3,
                base,
                base.replace("c.city,", "c.city, c.segment,").replace(
                    "BY c.city", "BY c.city, c.segment"
                ),
            ),
            (4, base, base.replace("difft.cust", "difft.nowhere")),
            (5, base, base + " ORDER BY n"),
        ],
    )
    assert [(f.seed, f.kind) for f in found] == [
        (1, "mismatch"),
        (2, "mismatch"),
        (3, "mismatch"),
        (4, "error"),
    ]
