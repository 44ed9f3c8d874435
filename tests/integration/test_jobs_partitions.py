"""Refresh by partitions on real Spark and Delta: with the fact table partitioned by time_id and
no change data feed, a delete, an update, a partition overwritten and a NULL partition are each
refreshed by recomputing the touched partitions of the tiles that group by time_id — MIN and MAX
included — giving exactly what a full rebuild gives; appends still merge; a tile that does not
group by the partition column is rebuilt and says why; and the partitions path reads nothing of
the partitions the change did not touch (a data file of one of those is hidden while it runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.jobs.tilesql import star_tile_sql
from mvlattice.workspace import Workspace
from tests.integration.test_jobs_refresh import assert_equal_to_a_full_rebuild, paths
from tests.integration.test_jobs_support import (
    SALES_DDL,
    make_shop,
    rows_of,
    sales,
    tile_name,
    write,
)

pytestmark = pytest.mark.spark

SCHEMA = "jobs_partitions"
TILES = """\
- dimensions: [s.time_id, brand]
- dimensions: [t.time_id, the_year]
  measures: [{agg: count}, {agg: count, args: [brand], distinct: true}, {agg: max, args: units}]
- dimensions: [category]
"""


@pytest.fixture(scope="module")
def shop(spark, warehouse: Path) -> tuple[Workspace, Path]:
    model = make_shop(spark, warehouse, SCHEMA, TILES, partition_sales_by=("time_id",))
    ws = Workspace(model, warehouse=str(warehouse))
    assert ws.materialize().ok
    return ws, warehouse / "jobs" / SCHEMA / "sales"


def names(ws: Workspace) -> tuple[str, str, str]:
    return (
        tile_name(ws, ("s.time_id", "brand")),
        tile_name(ws, ("t.time_id", "the_year")),
        tile_name(ws, ("category",)),
    )


def test_deletes_updates_and_overwrites_refresh_the_touched_partitions(spark, shop) -> None:
    ws, fact = shop
    by_time, by_key, category = names(ws)
    changes = (
        f"delete from delta.`{fact}` where time_id = 5",
        f"update delta.`{fact}` set amount = amount + 100, units = units * 3 "
        "where time_id in (3, 4)",
        f"delete from delta.`{fact}` where time_id = 6 and sale_id % 2 = 0",
    )
    for change in changes:
        spark.sql(change)
        result = ws.refresh()
        assert result.ok
        done = paths(result)
        for tile in (by_time, by_key):
            path, reason = done[tile]
            assert path == "partitions", (tile, reason)
            assert "partitions of time_id)" in reason or "1 partition of time_id)" in reason
        assert "does more than append" in done[by_time][1]
        assert "has no change data feed" in done[by_time][1]
        assert done[by_key][1].startswith("COUNT(DISTINCT …) cannot merge appended rows; ")
        assert done[category][0] in ("full", "rollup")
        assert "not by partitions: the tile does not group by the fact table's partition " \
            "column time_id" in done[category][1]  # fmt: skip
        assert_equal_to_a_full_rebuild(ws, spark)
    record = {e.name: e for e in ws.tiles()}[by_time]
    assert record.refresh_path == "partitions" and record.status == "fresh"
    assert record.built_from == "star (1 partition of time_id)"


def test_a_partition_overwritten_and_a_null_partition(spark, shop) -> None:
    ws, fact = shop
    by_time, by_key, _ = names(ws)
    replaced = [(9000 + i, i % 10, 7, None, 1000 + i) for i in range(4)]
    spark.createDataFrame(replaced, SALES_DDL).write.format("delta").mode("overwrite").option(
        "replaceWhere", "time_id = 7"
    ).save(str(fact))
    done = paths(ws.refresh())
    assert done[by_time][0] == done[by_key][0] == "partitions"
    assert_equal_to_a_full_rebuild(ws, spark)
    orphans = [(9100, 1, None, None, 5)]  # no time: not in the star, in the NULL partition
    write(spark, fact, orphans, SALES_DDL, mode="append")
    appended = paths(ws.refresh())
    assert appended[by_time][0] == "incremental" and appended[by_key][0] == "partitions"
    spark.sql(f"delete from delta.`{fact}` where time_id is null")
    done = paths(ws.refresh())
    assert done[by_time][0] == "partitions", done[by_time]
    assert_equal_to_a_full_rebuild(ws, spark)


def test_appends_still_merge(spark, shop) -> None:
    ws, fact = shop
    by_time, by_key, _ = names(ws)
    write(spark, fact, sales(7000, 12), SALES_DDL, mode="append")
    done = paths(ws.refresh())
    assert done[by_time][0] == "incremental", done[by_time]
    assert done[by_key][0] == "partitions"  # COUNT(DISTINCT) cannot merge; no full star read
    assert_equal_to_a_full_rebuild(ws, spark)


def test_partitions_not_touched_are_not_read(spark, shop) -> None:
    ws, fact = shop
    by_time, _, _ = names(ws)
    spark.sql(f"delete from delta.`{fact}` where time_id = 2 and sale_id = 14")
    lattice = ws.model.lattices[0]
    spec = next(s for s in lattice.tiles if s.dimensions == ("s.time_id", "brand"))
    expected = rows_of(spark, star_tile_sql(lattice, spec))  # computed before hiding a file
    tile_rows = {e.name: e for e in ws.tiles()}[by_time].rows
    hidden = sorted((fact / "time_id=11").glob("*.parquet"))[0]
    aside = hidden.with_name("aside.bin")
    hidden.rename(aside)
    try:
        plan = paths(ws.refresh(tile=by_time, dry_run=True))
        assert plan[by_time][0] == "partitions"
        result = ws.refresh(tile=by_time)
    finally:
        aside.rename(hidden)
    assert result.ok, [r.error for r in result.failed]
    assert paths(result)[by_time][0] == "partitions"
    assert rows_of(spark, f"select * from {by_time}") == expected
    (estimate,) = [r.estimate for r in result.results]
    in_partition = spark.sql(f"select count(*) from delta.`{fact}` where time_id = 2").first()
    assert estimate is not None and estimate.partitions and in_partition is not None
    assert estimate.partition_rows == (tile_rows or 0) + in_partition[0]
