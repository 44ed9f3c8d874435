"""Tile planning on FoodMart with real statistics: the plan answers (the_year, the_month) from
a chosen tile whose estimated rows are within 10 % of Spark's GROUP BY count on the star."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mvlattice.cli.main import main
from mvlattice.workspace import Workspace
from tests.conftest import FOODMART_MODEL

pytestmark = pytest.mark.spark

FACT = "foodmart.sales_fact_1997 s"
TIME = "join foodmart.time_by_day t on s.time_id = t.time_id"
PRODUCT = "join foodmart.product p on s.product_id = p.product_id"
CLASS = "join foodmart.product_class pc on p.product_class_id = pc.product_class_id"
LOG = [
    f"select t.the_year, t.the_month, sum(s.unit_sales) from {FACT} {TIME} "
    "group by t.the_year, t.the_month",
    f"select t.the_year, t.the_month, sum(s.unit_sales) from {FACT} {TIME} "
    "group by t.the_year, t.the_month",
    f"select the_month, count(*) from {FACT} join foodmart.time_by_day using (time_id) "
    "where the_year = 1997 group by the_month",
    f"select pc.product_family, t.quarter, count(*) from {FACT} {TIME} {PRODUCT} {CLASS} "
    "group by pc.product_family, t.quarter",
    f"select p.brand_name, count(*) from {FACT} {PRODUCT} where s.store_id = 2 "
    "group by p.brand_name",
    "select c.country, count(*) from foodmart.sales_fact_1997 s "
    "join foodmart.customer c on s.customer_id = c.customer_id group by c.country",
    "select count(*) from foodmart.store",
]


@pytest.fixture(scope="module")
def workload(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("plan") / "log.sql"
    path.write_text(";\n".join(LOG) + ";\n")
    return path


def group_count(spark: object, ws: Workspace, dimensions: tuple[str, ...]) -> int:
    lattice = ws.model.lattice("star")
    columns = ", ".join(lattice.column(d).expression for d in dimensions)
    query = f"select count(*) from (select {columns} {lattice.from_sql()} group by {columns})"
    return spark.sql(query).collect()[0][0]  # type: ignore[attr-defined]


def test_foodmart_plan_answers_year_and_month_with_a_good_estimate(
    spark: object, foodmart: Path, workload: Path
) -> None:
    ws = Workspace(FOODMART_MODEL, warehouse=str(foodmart))
    assert ws.spark.sparkContext is spark.sparkContext  # type: ignore[attr-defined]
    plan = ws.plan(max_tiles=3, workload=workload, max_size=1)  # profile singles; the plan
    # counts what it needs (asked sets, then chosen tiles) in a pass or two more
    assert plan.lattice.name == "star"
    assert plan.top_rows == 86_837
    assert plan.workload is not None
    assert (plan.workload.statements, plan.workload.ignored) == (7, 1)
    assert 1 <= len(plan.tiles) <= 3
    assert all(t.counted for t in plan.tiles)
    tile = plan.answering(["the_year", "the_month"])
    assert tile is not None, [t.dimensions for t in plan.tiles]
    real = group_count(spark, ws, tile.dimensions)
    assert abs(tile.rows - real) <= 0.10 * real, (tile.dimensions, tile.rows, real)
    for asked in (["product_family", "quarter"], ["brand_name", "store_id"], ["customer_id"]):
        assert plan.answering(asked) is not None, asked  # customer_id: the join to customer


def test_the_plan_command_prints_json_and_dot(
    spark: object, foodmart: Path, workload: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["plan", str(FOODMART_MODEL), "--warehouse", str(foodmart), "--max-size", "1"]
    args += ["--workload"]
    assert main([*args, str(workload), "--max-tiles", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["lattice"] == "star" and doc["rows"] == 86_837
    assert len(doc["tiles"]) == 2
    assert all({"agg": "count"} in t["measures"] for t in doc["tiles"])
    # the workload's SUM(s.unit_sales) rides on the tile chosen for its queries (issue 21)
    assert any({"agg": "sum", "args": ["unit_sales"]} in t["measures"] for t in doc["tiles"])
    assert doc["coverage"]["queries"] == 6 and doc["weighting"] == "workload"
    assert [r["chosen"] for r in doc["rounds"]] == [t["dimensions"] for t in doc["tiles"]]
    assert main([*args, str(workload), "--max-tiles", "2", "--format", "dot"]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith('digraph "star" {') and "star -> t1;" in dot
