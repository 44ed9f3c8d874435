"""Merges run in-process (DuckDB over the tile read by delta-rs, written back by delta-rs), on
real Spark and Delta: the tile afterwards holds exactly what a full rebuild on Spark holds, with
the same column types; the commit carries the record, so freshness, a foreign edit and the
status page read it as they read Spark's commits; what is not proven identical merges on Spark
and says why; a commit over a version that moved on is refused and writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from mvlattice.delta.writer import OverwriteRefused, overwrite
from mvlattice.jobs import local_merge
from mvlattice.workspace import Workspace
from tests.integration.test_jobs_refresh import assert_equal_to_a_full_rebuild
from tests.integration.test_jobs_support import SALES_DDL, make_shop, sales, tile_name, write

pytestmark = pytest.mark.spark

SCHEMA = "jobs_local_merge"
TILES = """\
- dimensions: [brand, category, the_year, the_month]
- dimensions: [category, the_year]
- dimensions: [the_year]
- dimensions: []
"""


def engines(result) -> dict[str, tuple[str, str, str]]:
    return {r.target: (r.path, r.engine, r.reason) for r in result.results}


def last_commit(location: Path) -> dict:
    newest = max((location / "_delta_log").glob("*.json"))
    lines = [json.loads(line) for line in newest.read_text().splitlines() if line.strip()]
    return next(a["commitInfo"] for a in lines if "commitInfo" in a)


def test_a_merge_in_process_equals_a_full_rebuild_and_is_read_like_sparks(
    spark, warehouse: Path, monkeypatch
) -> None:
    model = make_shop(spark, warehouse, SCHEMA, TILES)
    base = warehouse / "jobs" / SCHEMA
    ws = Workspace(model, warehouse=str(warehouse))
    assert ws.materialize().ok
    tiles = [tile_name(ws, t.dimensions) for t in ws.model.lattices[0].tiles]
    schemas = {t: spark.table(t).schema for t in tiles}

    write(spark, base / "sales", sales(1000, 40), SALES_DDL, mode="append")
    done = engines(ws.refresh())
    for tile in tiles:
        assert done[tile][:2] == ("incremental", "local"), done[tile]
        assert spark.table(tile).schema == schemas[tile]  # types as Spark built them
    assert_equal_to_a_full_rebuild(ws, spark)
    fine = tiles[0]
    entries = {e.name: e for e in ws.tiles()}
    assert {entries[t].status for t in tiles} == {"fresh"}
    assert entries[fine].rows == spark.table(fine).count()

    # Spark reads the tile, and answers through it, as after any build.
    sql = (
        f"select t.the_year, count(*) from {SCHEMA}.sales s join {SCHEMA}.time t "
        "on s.time_id = t.time_id group by t.the_year"
    )
    answer = ws.query(sql)
    assert answer.rewrite.rewritten
    assert sorted(map(tuple, answer.rows)) == sorted(map(tuple, ws.query(sql, rewrite=False).rows))

    # The same change again, merged on Spark (in-process refused): still equal.
    monkeypatch.setattr(local_merge, "MAX_ROWS", 0)
    write(spark, base / "sales", sales(2000, 25), SALES_DDL, mode="append")
    done = engines(ws.refresh())
    for tile in tiles:
        assert done[tile][:2] == ("incremental", "spark"), done[tile]
        assert "merged on Spark: the change has more than 0 groups" in done[tile][2]
    assert_equal_to_a_full_rebuild(ws, spark)


def test_deletes_and_updates_merge_in_process(spark, warehouse: Path, monkeypatch) -> None:
    schema = SCHEMA + "_feed"
    parts = "[{agg: count}, {agg: sum, args: amount}, {agg: avg, args: amount}]"
    tiles = "".join(
        f"- dimensions: {dims}\n  measures: {parts}\n"
        for dims in ("[brand, category, the_year, the_month]", "[category]", "[]")
    )
    model = make_shop(spark, warehouse, schema, tiles)
    base = warehouse / "jobs" / schema
    sales_at = f"delta.`{base / 'sales'}`"
    spark.sql(f"ALTER TABLE {sales_at} SET TBLPROPERTIES (delta.enableChangeDataFeed = true)")
    ws = Workspace(model, warehouse=str(warehouse))
    assert ws.materialize().ok
    fine, category = (
        tile_name(ws, ("brand", "category", "the_year", "the_month")),
        tile_name(ws, ("category",)),
    )
    # Rows move between groups, amounts turn NULL and back, a whole month goes.
    spark.sql(
        f"UPDATE {sales_at} SET product_id = (product_id + 3) % 10, "
        "amount = CASE WHEN amount IS NULL THEN 4 WHEN amount > 8 THEN NULL ELSE amount + 3 END "
        "WHERE sale_id % 7 = 0"
    )
    spark.sql(f"DELETE FROM {sales_at} WHERE time_id = 5 OR sale_id % 11 = 0")
    total = tile_name(ws, ())
    done = {}
    for tile in (fine, category, total):  # each alone: no current finer tile makes full cheaper
        done.update(engines(ws.refresh(tile=tile)))
    for tile in (fine, category, total):
        assert done[tile][:2] == ("incremental", "local"), done[tile]
        assert "change data feed" in done[tile][2]
    assert_equal_to_a_full_rebuild(ws, spark)

    # The same SQL on Spark (in-process refused) takes the next change back the same way.
    monkeypatch.setattr(local_merge, "MAX_ROWS", 0)
    spark.sql(f"DELETE FROM {sales_at} WHERE sale_id % 3 = 0")
    done = {}
    for tile in (fine, category, total):
        done.update(engines(ws.refresh(tile=tile)))
    for tile in (fine, category, total):
        assert done[tile][:2] == ("incremental", "spark"), done[tile]
    assert_equal_to_a_full_rebuild(ws, spark)


def test_a_foreign_edit_after_an_in_process_merge_is_stale(spark, warehouse: Path) -> None:
    schema = SCHEMA + "_foreign"
    model = make_shop(spark, warehouse, schema, "- dimensions: [the_year]\n")
    base = warehouse / "jobs" / schema
    ws = Workspace(model, warehouse=str(warehouse))
    assert ws.materialize().ok
    year = tile_name(ws, ("the_year",))
    write(spark, base / "sales", sales(1000, 30), SALES_DDL, mode="append")
    (result,) = ws.refresh(tile=year).results
    assert (result.path, result.engine) == ("incremental", "local")
    location = Path(spark.sql(f"DESCRIBE DETAIL {year}").first()["location"].removeprefix("file:"))
    info = last_commit(location)
    assert info["engineInfo"].startswith("delta-rs") and info["operation"] == "WRITE"
    assert info["userMetadata"].startswith("mvlattice record {")
    assert {e.status for e in ws.tiles() if e.name == year} == {"fresh"}

    spark.sql(f"DELETE FROM {year} WHERE the_year = 2020")
    (entry,) = [e for e in ws.tiles() if e.name == year]
    assert entry.status == "stale"
    (rebuilt,) = ws.refresh(tile=year).results
    assert rebuilt.path == "full" and "was not written by mvlattice" in rebuilt.reason
    assert_equal_to_a_full_rebuild(ws, spark)


def test_a_commit_over_a_version_that_moved_on_is_refused(spark, warehouse: Path) -> None:
    location = warehouse / "local_merge_overwrite"
    spark.sql(
        f"CREATE TABLE delta.`{location}` USING delta AS "
        "SELECT CAST(id AS INT) AS k, CAST(id AS BIGINT) AS n FROM range(3)"
    )
    spark.sql(f"INSERT INTO delta.`{location}` VALUES (9, 9)")  # version 1
    rows = pa.table({"k": pa.array([1], pa.int32()), "n": pa.array([1], pa.int64())})
    with pytest.raises(OverwriteRefused, match="over version 0"):
        overwrite(str(location), 0, rows, "mvlattice record {}")
    wrong = pa.table({"k": pa.array([1], pa.int64()), "n": pa.array([1], pa.int64())})
    with pytest.raises(OverwriteRefused, match="do not have the schema"):
        overwrite(str(location), 1, wrong, "mvlattice record {}")
    assert spark.sql(f"DESCRIBE HISTORY delta.`{location}`").count() == 2  # nothing written
    assert overwrite(str(location), 1, rows, "tag") == 2
    assert [tuple(r) for r in spark.sql(f"SELECT * FROM delta.`{location}`").collect()] == [(1, 1)]
