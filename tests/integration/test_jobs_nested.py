"""Nested materializations on real Spark and Delta (issue 20, class 5): an outer materialization
reading an inner one is built after it, records the inner's Delta version and table id, goes
stale when the inner's source changes (transitively) or the inner is rebuilt, is refreshed
after its inner, and both levels answer queries, compared with the base query's rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.test_jobs_support import SALES_DDL, make_shop, rows_of, write

pytestmark = pytest.mark.spark

SCHEMA = "jobs_nested"
OUTER, INNER = f"{SCHEMA}.big_by_year", f"{SCHEMA}.big_sales"

# Declared outer first: the build order comes from what each reads, not from the file.
NESTED = f"""\
      - view: {SCHEMA}_big_by_year
        table: big_by_year
        sql: >
          select the_year, sum(amount) as amount, count(*) as c
          from {SCHEMA}.big_sales group by the_year
      - view: {SCHEMA}_big_sales
        table: big_sales
        sql: >
          select s.sale_id, s.amount, t.the_year
          from {SCHEMA}.sales s join {SCHEMA}.time t on s.time_id = t.time_id
          where s.amount > 2
"""
JOIN = f"from {SCHEMA}.sales s join {SCHEMA}.time t on s.time_id = t.time_id where s.amount > 2"
BY_YEAR = f"select t.the_year, sum(s.amount) as a {JOIN} group by t.the_year"
TOP_BY_YEAR = f"select t.the_year, max(s.amount) as m {JOIN} group by t.the_year"
INNER_BY_NAME = f"select the_year, count(*) as n from {INNER} group by the_year"


@pytest.fixture(scope="module")
def ws(spark, warehouse: Path):
    from mvlattice.workspace import Workspace

    model = make_shop(spark, warehouse, SCHEMA, "- dimensions: [the_year]\n")
    model.write_text(model.read_text() + NESTED)
    return Workspace(model, warehouse=str(warehouse))


def entries(ws) -> dict:
    return {e.name: e for e in ws.tiles()}


def test_nested_materializations_build_refresh_and_answer(ws, spark, warehouse: Path) -> None:
    built = ws.materialize()
    assert built.ok
    order = [r.target for r in built.results]
    assert order.index(INNER) < order.index(OUTER)
    assert rows_of(spark, f"select * from {OUTER}") == rows_of(
        spark, f"select t.the_year, sum(s.amount), count(*) {JOIN} group by t.the_year"
    )
    found = entries(ws)
    assert found[OUTER].status == "fresh" and found[OUTER].usable
    assert set(found[OUTER].source_versions) == {INNER}  # its source is the inner table

    # Both levels answer queries over base tables; the inner table's readers get the outer.
    for query, used in ((BY_YEAR, OUTER), (TOP_BY_YEAR, INNER), (INNER_BY_NAME, OUTER)):
        result = ws.rewrite(query)
        assert result.rewritten, query
        assert ws.serving.catalog.table_of(result.materializations[0]) == used
        assert rows_of(spark, result.sql) == rows_of(spark, query)

    # The inner's source changes: the outer, fresh by its own record, is stale through it.
    sales = warehouse / "jobs" / SCHEMA / "sales"
    write(spark, sales, [(500, 1, 1, None, 7), (501, 2, 30 % 24, None, 9)], SALES_DDL, "append")
    found = entries(ws)
    assert (found[INNER].status, found[INNER].usable) == ("stale", False)
    assert (found[OUTER].status, found[OUTER].usable) == ("stale", False)
    assert found[OUTER].message.startswith(f"reads {INNER}, which is not fresh")
    assert not set(ws.rewrite(BY_YEAR).materializations) & {
        f"{SCHEMA}_big_by_year",
        f"{SCHEMA}_big_sales",
    }

    # Refreshing the outer refreshes its inner first, each in full, saying why.
    refreshed = ws.refresh(tile=f"{SCHEMA}_big_by_year")
    assert [(r.target, r.path) for r in refreshed.results] == [(INNER, "full"), (OUTER, "full")]
    assert "whose refresh rewrites its table" in refreshed.results[1].reason
    assert {entries(ws)[n].status for n in (INNER, OUTER)} == {"fresh"}
    result = ws.rewrite(BY_YEAR)
    assert ws.serving.catalog.table_of(result.materializations[0]) == OUTER
    assert rows_of(spark, result.sql) == rows_of(spark, BY_YEAR)

    # A rebuilt inner (a new Delta version of its table) makes the outer stale.
    assert [r.target for r in ws.refresh(tile="big_sales", full=True).results] == [INNER]
    found = entries(ws)
    assert found[INNER].status == "fresh"
    assert (found[OUTER].status, found[OUTER].usable) == ("stale", False)
    assert INNER in found[OUTER].message
