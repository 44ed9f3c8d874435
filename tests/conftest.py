"""Shared fixtures: one local SparkSession with Delta for the whole run, FoodMart loaded once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FOODMART_MODEL = REPO / "models" / "foodmart.yaml"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="rewrite the expected outcomes of golden files (tests/golden/) from the current "
        "code; review the diff before committing",
    )


@pytest.fixture(scope="session")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's warehouse directory; tests put their own tables under sub-folders of it."""
    return tmp_path_factory.mktemp("warehouse")


@pytest.fixture(scope="session")
def spark(warehouse: Path) -> Iterator[object]:
    from mvlattice.spark import build_session, spark_conf

    master = "local[2]"
    conf = spark_conf(
        master,
        str(warehouse),
        ({"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"},),
    )
    session = build_session(master, str(warehouse), conf, app_name="mvlattice-tests")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def foodmart(spark: object, warehouse: Path) -> Path:
    """FoodMart loaded into the run's warehouse; returns the warehouse path."""
    from mvlattice.datasets import foodmart as dataset

    dataset.load(spark, str(warehouse), progress=lambda _line: None)
    return warehouse
