"""Plans users would pick, on FoodMart and real Spark: without a workload the default plan
groups by no measure column and its tiles answer the README's three documented queries; with a
150-query workload and a 25 % byte budget the plan answers at least 40 % of it, and its
predicted coverage is what the rewriter answers after the tiles are built, statement by
statement."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from mvlattice.cli.commands import DEMO_QUERIES
from mvlattice.datasets.foodmart_workload import generate
from mvlattice.plan.budget import Limits
from mvlattice.plan.planner import NO_WORKLOAD
from mvlattice.workspace import Workspace
from tests.conftest import FOODMART_MODEL

pytestmark = pytest.mark.spark

MEASURE_COLUMNS = {"store_sales", "store_cost", "unit_sales"}  # sales_fact_1997's measures


def fresh(foodmart: Path, tmp_path: Path) -> Workspace:
    """A warehouse of its own holding a copy of FoodMart: no tiles, no query log."""
    shutil.copytree(foodmart / "foodmart", tmp_path / "foodmart")
    return Workspace(FOODMART_MODEL, warehouse=str(tmp_path))


def rows(ws: Workspace, sql: str) -> Counter:
    return Counter(tuple(r) for r in ws.spark.sql(sql).collect())


def test_the_default_plan_answers_the_documented_queries(
    spark: object, foodmart: Path, tmp_path: Path
) -> None:
    ws = fresh(foodmart, tmp_path)
    plan = ws.plan()
    assert plan.weighting == NO_WORKLOAD and plan.tiles
    assert not MEASURE_COLUMNS & set(plan.dimensions)
    for tile in plan.tiles:
        assert not MEASURE_COLUMNS & set(tile.dimensions), tile.dimensions
    assert ws.materialize_plan(plan).ok
    for name, sql in DEMO_QUERIES:
        result = ws.rewrite(sql, explain=False)
        assert result.rewritten and result.materializations, name
        assert rows(ws, result.sql) == rows(ws, sql), name


def test_a_byte_budget_covers_the_workload_as_predicted(
    spark: object, foodmart: Path, tmp_path: Path
) -> None:
    ws = fresh(foodmart, tmp_path / "wh")
    log = tmp_path / "workload.sql"
    log.write_text(";\n".join(generate(150, seed=21)) + ";\n")
    plan = ws.plan(workload=str(log), limits=Limits(max_share=0.25))
    budget = plan.budget
    assert budget.fact_bytes and budget.max_bytes == pytest.approx(0.25 * budget.fact_bytes)
    assert plan.bytes <= budget.max_bytes
    predicted = plan.coverage
    assert predicted is not None and len(predicted.queries) == 150
    assert predicted.share >= 0.40, predicted.share
    assert ws.materialize_plan(plan).ok
    actual = ws.coverage(str(log))
    assert actual is not None and actual.source == "rewriter"
    disagree = [
        (p.sql, p.answered)
        for p, a in zip(predicted.queries, actual.queries, strict=True)
        if p.answered != a.answered
    ]
    assert disagree == []
    assert actual.share >= 0.40 and actual.rows_after < actual.rows_before
