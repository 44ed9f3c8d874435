"""Refresh on real Spark and Delta: appends merge incrementally and give exactly what a full
rebuild gives; a delete or a dimension change takes the full path and says why. The fact table
is partitioned, so the appended files carry partition values the incremental path must read."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.delta.appended import appended_view
from mvlattice.delta.log import commits
from mvlattice.jobs.tilesql import star_tile_sql
from mvlattice.workspace import Workspace
from tests.integration.test_jobs_support import (
    SALES_DDL,
    make_shop,
    rows_of,
    sales,
    tile_name,
    write,
)

pytestmark = pytest.mark.spark

SCHEMA = "jobs_refresh"
TILES = """\
- dimensions: [brand, category, the_year, the_month]
- dimensions: [the_year]
- dimensions: [category]
  measures: [{agg: count, args: [brand], distinct: true}, {agg: count}]
"""


def assert_equal_to_a_full_rebuild(ws: Workspace, spark) -> None:
    lattice = ws.model.lattices[0]
    for spec in lattice.tiles:
        name = tile_name(ws, spec.dimensions)
        assert rows_of(spark, f"select * from {name}") == rows_of(
            spark, star_tile_sql(lattice, spec)
        ), name


def paths(result) -> dict[str, tuple[str, str]]:
    return {r.target: (r.path, r.reason) for r in result.results}


def test_appends_merge_and_other_changes_rebuild(spark, warehouse: Path) -> None:
    model = make_shop(spark, warehouse, SCHEMA, TILES, partition_sales_by=("time_id",))
    base = warehouse / "jobs" / SCHEMA
    ws = Workspace(model, warehouse=str(warehouse))
    assert ws.materialize().ok
    fine = tile_name(ws, ("brand", "category", "the_year", "the_month"))
    year, category = tile_name(ws, ("the_year",)), tile_name(ws, ("category",))
    schema_before = spark.table(year).schema

    write(spark, base / "sales", sales(1000, 15), SALES_DDL, mode="append")
    (commit,) = commits(spark, str(base / "sales"), 1, 1)
    view = appended_view(spark, str(base / "sales"), 1, commit.added)  # files read directly
    assert view is not None and all("time_id=" in f.path for f in commit.added)
    appended = rows_of(spark, f"select * from {view}")
    spark.catalog.dropTempView(view)
    assert appended == rows_of(spark, f"select * from {SCHEMA}.sales where sale_id >= 1000")
    stale = {e.name: e for e in ws.tiles()}
    assert {e.status for e in stale.values()} == {"stale"}
    assert stale[year].code == "STALE_ACCEPTED" and stale[year].usable  # maxStaleness: 1h
    assert stale[f"{SCHEMA}.by_year"].code == "STALE"  # no maxStaleness of its own

    events = []
    result = ws.refresh(progress=events.append)
    assert result.ok
    done = paths(result)
    # The two merges ran concurrently, the rollup after them: one start and one end per
    # target, ends counted 1..n as they came, results in build order all the same.
    assert sorted(e.target.name for e in events if e.result is None) == sorted(done)
    assert sorted(e.target.name for e in events if e.result is not None) == sorted(done)
    assert [e.index for e in events if e.result is not None] == list(range(1, len(done) + 1))
    at = {(e.target.name, e.result is None): n for n, e in enumerate(events)}
    assert at[(fine, False)] < at[(category, True)]  # the rollup read the merged fine tile
    assert [r.target for r in result.results] == [
        r.target for r in ws.refresh(dry_run=True).results
    ]
    assert done[year][0] == "incremental"
    assert done[year][1].startswith(f"version 1 of {SCHEMA}.sales only append rows (")
    assert done[fine][0] == "incremental"
    assert done[category] == (
        "rollup",
        "COUNT(DISTINCT …) cannot merge appended rows; not by partitions: the tile does not "
        f"group by the fact table's partition column time_id; rolled up from {fine}",
    )
    assert done[f"{SCHEMA}.by_year"] == ("full", "materializations are rebuilt in full")
    assert_equal_to_a_full_rebuild(ws, spark)
    assert spark.table(year).schema == schema_before  # merging keeps the column types
    assert {e.status for e in ws.tiles()} == {"fresh"}
    assert {r.status for r in ws.refresh().results} == {"skipped"}

    spark.sql(f"delete from delta.`{base / 'sales'}` where sale_id % 5 = 0")
    done = paths(ws.refresh(tile=fine))
    assert done[fine][0] == "full"
    assert done[fine][1].startswith(f"version 2 of {SCHEMA}.sales (DELETE) does more than append")
    refreshed = paths(ws.refresh())
    assert refreshed[fine][0] == "none"
    assert refreshed[year][0] == "rollup"  # from the fine tile, current again
    assert_equal_to_a_full_rebuild(ws, spark)

    spark.sql(f"update delta.`{base / 'product'}` set brand = 'b9' where product_id = 3")
    done = paths(ws.refresh())
    assert done[fine] == ("full", f"dimension table {SCHEMA}.product (version 0 → 1) changed")
    assert done[year][0] == "rollup"
    assert_equal_to_a_full_rebuild(ws, spark)

    done = paths(ws.refresh(full=True, tile="by_year"))
    assert done == {f"{SCHEMA}.by_year": ("full", "a full rebuild was asked for")}
