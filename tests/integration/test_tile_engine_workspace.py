"""The tile engine behind `Workspace.query`: a query rewritten onto small fresh tiles is
answered in the driver with Spark's rows and types; an append to a base table sends the very
next query past the old tile; `explain` says which engine answers and why; hits still count."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from mvlattice.workspace import Workspace
from tests.integration.test_jobs_support import SALES_DDL, make_shop, sales, tile_name, write

pytestmark = pytest.mark.spark

SCHEMA = "tile_engine_ws"
TILES = """\
- dimensions: [brand, category, the_year, the_month]
- dimensions: [the_year]
"""
BY_YEAR = (
    f"select t.the_year, sum(s.units) as units, avg(s.amount) as amount, count(*) as c "
    f"from {SCHEMA}.sales s join {SCHEMA}.time t on s.time_id = t.time_id "
    f"group by t.the_year order by t.the_year"
)
BY_CATEGORY = (
    f"select p.category, t.the_year, sum(s.units) as units, min(s.amount) as lo "
    f"from {SCHEMA}.sales s join {SCHEMA}.product p on s.product_id = p.product_id "
    f"join {SCHEMA}.time t on s.time_id = t.time_id "
    f"where t.the_year = 2021 group by p.category, t.the_year order by p.category"
)


@pytest.fixture(scope="module")
def shop(spark, warehouse: Path) -> Workspace:
    model = make_shop(spark, warehouse, SCHEMA, TILES)
    # no maxStaleness: a stale tile may not be read at all
    model.write_text(model.read_text().replace("        maxStaleness: 1h\n", ""))
    ws = Workspace(model, warehouse=str(warehouse))
    assert ws.materialize().ok
    return ws


def typed(rows) -> list[list[tuple[type, object]]]:
    return [[(type(v), str(v) if isinstance(v, Decimal) else v) for v in r] for r in rows]


@pytest.mark.parametrize("sql", [BY_YEAR, BY_CATEGORY])
def test_tile_queries_are_answered_locally_as_spark_answers_them(shop: Workspace, sql) -> None:
    local = shop.query(sql)
    on_spark = shop.query(sql, engine="spark")
    base = shop.query(sql, rewrite=False)
    assert local.rewrite.rewritten and local.engine == "local", local.engine_reason
    assert on_spark.engine == "spark" and base.engine == "spark"
    assert local.columns == on_spark.columns == base.columns
    assert typed(local.rows) == typed(on_spark.rows)
    assert typed(local.rows) == typed(base.rows)  # ordered by unique keys: order is exact
    assert local.to_dict()["engine"] == "local"


def test_explain_says_which_engine_answers(shop: Workspace) -> None:
    notes = [e for e in shop.rewrite(BY_YEAR, explain=True).explain if e.outcome == "engine"]
    assert [n.message for n in notes] == ["the tile engine answers it in the driver"]
    division = BY_YEAR.replace("avg(s.amount)", "sum(s.units) / count(*)")
    explained = shop.rewrite(division, explain=True)
    assert explained.rewritten
    (note,) = [e for e in explained.explain if e.outcome == "engine"]
    assert note.message.startswith("Spark answers it: a division of DECIMALs")
    answered = shop.query(division)
    assert answered.engine == "spark" and "division of DECIMALs" in answered.engine_reason
    assert typed(answered.rows) == typed(shop.query(division, rewrite=False).rows)


def test_hits_of_local_answers_are_counted(shop: Workspace) -> None:
    name = tile_name(shop, ("the_year",))
    before = {e.name: e.hits for e in shop.tiles()}[name]
    for _ in range(3):
        assert shop.query(BY_YEAR).engine == "local"
    assert {e.name: e.hits for e in shop.tiles()}[name] == before + 3


def test_an_append_sends_the_next_query_past_the_old_tile(shop: Workspace, spark, warehouse):
    assert shop.query(BY_YEAR).engine == "local"  # the tile's data is cached now
    base = warehouse / "jobs" / SCHEMA
    write(spark, base / "sales", sales(500, 40), SALES_DDL, mode="append")
    after = shop.query(BY_YEAR)
    assert not after.rewrite.rewritten and after.engine == "spark"
    assert typed(after.rows) == typed(shop.query(BY_YEAR, rewrite=False).rows)
    assert shop.refresh().ok
    again = shop.query(BY_YEAR)
    assert again.engine == "local"
    assert typed(again.rows) == typed(after.rows)  # the refreshed tile's version, not the old


def test_a_repeated_query_is_served_its_kept_answer(shop: Workspace) -> None:
    answers = shop.tile_engine.answers
    first = shop.query(BY_CATEGORY)
    hits = answers.hits
    again = shop.query(BY_CATEGORY)
    assert first.engine == again.engine == "local"
    assert answers.hits == hits + 1  # not run again
    assert again.rewrite == first.rewrite and again.columns == first.columns
    assert typed(again.rows) == typed(shop.query(BY_CATEGORY, rewrite=False).rows)
    limited = shop.query(BY_CATEGORY, limit=1)  # another limit: another answer
    assert answers.hits == hits + 1 and len(limited.rows) == 1


def test_a_kept_answer_is_never_served_to_another_describer(shop: Workspace) -> None:
    asked: list[str] = []

    def describer(name: str):
        def describe(sql: str):
            asked.append(name)
            return shop.sql(sql).schema

        return describe

    def refuse(_sql: str, _rows):
        raise AssertionError("the tile engine was to answer")

    one, other = describer("one"), describer("other")
    for describe in (one, one, other):
        found = shop.query(BY_YEAR, runner=refuse, describe=describe)
        assert found.engine == "local"
    assert asked == ["one", "other"]  # the second describer checked the SQL itself


def test_a_kept_answer_is_not_served_once_the_tile_is_edited_outside(
    shop: Workspace, spark
) -> None:
    assert shop.query(BY_CATEGORY).engine == "local"
    assert shop.query(BY_CATEGORY).engine == "local"  # kept now
    spark.sql(f"DELETE FROM {tile_name(shop, ('brand', 'category', 'the_year', 'the_month'))}")
    after = shop.query(BY_CATEGORY)
    assert not (after.rewrite.rewritten and after.engine == "local")
    assert typed(after.rows) == typed(shop.query(BY_CATEGORY, rewrite=False).rows)
    assert after.rows  # the base tables still have the rows the edited tile lost
    assert shop.refresh().ok


def test_an_unknown_engine_is_a_usage_error(shop: Workspace) -> None:
    from mvlattice.errors import UsageError

    with pytest.raises(UsageError, match="unknown engine 'duck'"):
        shop.query(BY_YEAR, engine="duck")
