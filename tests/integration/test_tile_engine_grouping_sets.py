"""ROLLUP / CUBE through `Workspace.query`: rewritten onto the shop's tiles set by set and
answered by the tile engine (typed NULLs, GROUPING literals, a union) with Spark's rows, in
Spark's order; what the tile engine cannot prove identical (LIMIT over the union) goes to Spark
with the same answer."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from mvlattice.workspace import Workspace
from tests.integration.test_jobs_support import make_shop

pytestmark = pytest.mark.spark

SCHEMA = "tile_engine_gs"
TILES = """\
- dimensions: [brand, category, the_year, the_month]
- dimensions: [the_year]
"""
FROM = (
    f"from {SCHEMA}.sales s join {SCHEMA}.product p on s.product_id = p.product_id "
    f"join {SCHEMA}.time t on s.time_id = t.time_id"
)
ROLLUP = (
    f"select t.the_year, p.category, grouping(p.category), grouping_id() as g, "
    f"sum(s.units) as units, count(*) as c {FROM} "
    f"group by rollup(t.the_year, p.category) order by g, the_year, category"
)
CUBE = (
    f"select p.brand, t.the_month, grouping_id() as g, min(s.amount) as low, count(*) as c "
    f"{FROM} where t.the_year = 2021 group by cube(p.brand, t.the_month) "
    f"order by g, brand, the_month"
)


@pytest.fixture(scope="module")
def shop(spark, warehouse: Path) -> Workspace:
    model = make_shop(spark, warehouse, SCHEMA, TILES)
    model.write_text(model.read_text().replace("        maxStaleness: 1h\n", ""))
    ws = Workspace(model, warehouse=str(warehouse))
    assert ws.materialize().ok
    return ws


def typed(rows) -> list[list[tuple[type, object]]]:
    return [[(type(v), str(v) if isinstance(v, Decimal) else v) for v in r] for r in rows]


@pytest.mark.parametrize("sql", [ROLLUP, CUBE], ids=["rollup", "cube"])
def test_grouping_sets_are_answered_from_tiles_as_spark_answers_them(shop: Workspace, sql) -> None:
    local = shop.query(sql)
    on_spark = shop.query(sql, engine="spark")
    base = shop.query(sql, rewrite=False)
    assert local.rewrite.rewritten and local.engine == "local", local.engine_reason
    assert "UNION ALL" in local.rewrite.sql
    assert local.columns == on_spark.columns == base.columns
    assert typed(local.rows) == typed(on_spark.rows) == typed(base.rows)  # a total order


def test_the_grouping_columns_are_named_as_spark_names_them(shop: Workspace) -> None:
    assert shop.query(ROLLUP).columns[:4] == ("the_year", "category", "grouping(category)", "g")


def test_a_limit_over_the_union_goes_to_spark_with_the_same_rows(shop: Workspace) -> None:
    sql = ROLLUP + " limit 5"
    answered = shop.query(sql)
    assert answered.rewrite.rewritten and answered.engine == "spark"
    assert typed(answered.rows) == typed(shop.query(sql, rewrite=False).rows)
