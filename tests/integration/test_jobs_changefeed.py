"""Refresh with Delta's change data feed, on real Spark and Delta: deletes and updates are
merged incrementally (COUNT/SUM/AVG with retractions) and give exactly what a full rebuild
gives; a tile with MIN/MAX or a distinct count is rebuilt, saying why; `refresh --dry-run`
shows each tile's estimates and choice and builds nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mvlattice.cli.main import main
from mvlattice.workspace import Workspace
from tests.integration.test_jobs_refresh import assert_equal_to_a_full_rebuild, paths
from tests.integration.test_jobs_support import SALES_DDL, make_shop, sales, tile_name, write

pytestmark = pytest.mark.spark

SCHEMA = "jobs_changefeed"
PARTS = "[{agg: count}, {agg: sum, args: amount}, {agg: avg, args: amount}]"
TILES = f"""\
- dimensions: [brand, category, the_year, the_month]
  measures: {PARTS}
- dimensions: [the_year]
  measures: {PARTS}
- dimensions: []
  measures: {PARTS}
- dimensions: [category]
"""
FEED = "version {v} of jobs_changefeed.sales change rows; read from its change data feed"


def refresh_alone(ws: Workspace, *tiles: str) -> dict[str, tuple[str, str]]:
    """Each tile refreshed by itself: no finer tile is current, so a full refresh reads the
    star and the cost choice takes the incremental path (the one under test)."""
    done = {}
    for tile in tiles:
        done.update(paths(ws.refresh(tile=tile)))
    return done


def test_deletes_and_updates_merge_through_the_change_data_feed(
    spark, warehouse: Path, capsys
) -> None:
    model = make_shop(spark, warehouse, SCHEMA, TILES)
    base = warehouse / "jobs" / SCHEMA
    sales_at = f"delta.`{base / 'sales'}`"
    spark.sql(f"ALTER TABLE {sales_at} SET TBLPROPERTIES (delta.enableChangeDataFeed = true)")
    write(spark, base / "sales", sales(1000, 2000), SALES_DDL, mode="append")
    ws = Workspace(model, warehouse=str(warehouse))
    assert ws.materialize().ok
    fine = tile_name(ws, ("brand", "category", "the_year", "the_month"))
    year, total = tile_name(ws, ("the_year",)), tile_name(ws, ())
    category = tile_name(ws, ("category",))  # default measures: SUM(units) without COUNT, MIN
    assert ws.change_feeds() == {f"{SCHEMA}.sales": True}
    tiles = (fine, year, total, category)

    write(spark, base / "sales", sales(5000, 15), SALES_DDL, mode="append")
    done = paths(ws.refresh())
    assert {done[t][0] for t in tiles} <= {"incremental", "rollup"}
    assert done[fine][0] == "incremental"
    assert_equal_to_a_full_rebuild(ws, spark)

    spark.sql(f"DELETE FROM {sales_at} WHERE sale_id % 5 = 0")  # version 4: 427 rows
    planned = ws.refresh(dry_run=True)
    assert {r.status for r in planned.results} == {"planned"}
    plan = {r.target: r for r in planned.results}
    estimate = plan[fine].estimate
    assert estimate is not None and plan[fine].path == "incremental"
    assert estimate.incremental_rows == spark.table(fine).count() + 427
    assert (estimate.full_rows, estimate.full_from) == (2135 - 427, "star")
    assert plan[category].path == "full"
    assert plan[category].reason.endswith(
        "(sum_units: SUM over nullable units without COUNT(units) cannot tell an emptied sum "
        "from 0)"
    )
    assert {e.status for e in ws.tiles() if e.name != f"{SCHEMA}.by_year"} == {"stale"}

    code = main(["refresh", str(model), "--warehouse", str(warehouse), "--dry-run", "--json"])
    shown = json.loads(capsys.readouterr().out)
    assert code == 0
    by_name = {r["target"]: r for r in shown["results"]}
    assert by_name[fine]["estimate"]["choice"] == "incremental"
    assert by_name[fine]["estimate"]["incremental_rows"] == estimate.incremental_rows

    done = refresh_alone(ws, total, year, fine, category)
    for tile in (fine, year, total):
        assert done[tile][0] == "incremental", done[tile]
        assert done[tile][1].startswith(FEED.format(v=4)), done[tile]
    assert done[category][0] == "full"
    assert "cannot tell an emptied sum from 0" in done[category][1]
    assert_equal_to_a_full_rebuild(ws, spark)

    # Rows move between groups (another product: brand and category), amounts change, NULLs
    # appear and go; then every row of one month goes: its groups must go too.
    spark.sql(
        f"UPDATE {sales_at} SET product_id = (product_id + 3) % 10, "
        "amount = CASE WHEN amount IS NULL THEN 4 WHEN amount > 8 THEN NULL ELSE amount + 3 END "
        "WHERE sale_id % 17 = 0"
    )
    spark.sql(f"DELETE FROM {sales_at} WHERE time_id = 5")
    done = refresh_alone(ws, total, year, fine)
    for tile in (fine, year, total):
        assert done[tile][0] == "incremental", done[tile]
        assert done[tile][1].startswith("versions 5–6 of"), done[tile]
    assert paths(ws.refresh())[category][0] == "full"
    assert_equal_to_a_full_rebuild(ws, spark)
