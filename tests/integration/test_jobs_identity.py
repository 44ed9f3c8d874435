"""Source identity and the tile's own commits on real Spark and Delta: a source deleted and
recreated (versions restart) and a commit someone else makes to a tile both make the tile
stale and take a full rebuild, which then equals the GROUP BY over the base tables; appends
still merge incrementally, and mvlattice's own commits (and OPTIMIZE) keep a tile fresh."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mvlattice.delta import log as deltalog
from mvlattice.delta.versions import table_id as described_id
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

TILES = """\
- dimensions: [brand, the_year]
- dimensions: [the_year]
"""


def paths(result) -> dict[str, tuple[str, str]]:
    return {r.target: (r.path, r.reason) for r in result.results}


def assert_equal_to_the_group_by(ws: Workspace, spark, schema: str) -> None:
    """Every tile and the materialization hold what Spark's GROUP BY over the base tables
    gives now (as multisets)."""
    lattice = ws.model.lattices[0]
    for spec in lattice.tiles:
        name = tile_name(ws, spec.dimensions)
        assert rows_of(spark, f"select * from {name}") == rows_of(
            spark, star_tile_sql(lattice, spec)
        ), name
    assert rows_of(spark, f"select * from {schema}.by_year") == rows_of(
        spark,
        f"select t.the_year, sum(s.amount), count(*) from {schema}.sales s "
        f"join {schema}.time t on s.time_id = t.time_id group by t.the_year",
    )


def test_a_recreated_source_is_stale_and_rebuilt_in_full(spark, warehouse: Path) -> None:
    schema = "jobs_identity_source"
    ws = Workspace(make_shop(spark, warehouse, schema, TILES), warehouse=str(warehouse))
    assert ws.materialize().ok
    fine, year = tile_name(ws, ("brand", "the_year")), tile_name(ws, ("the_year",))
    location = warehouse / "jobs" / schema / "sales"

    # Deleted and created anew with other rows: version 0 again, the version recorded.
    shutil.rmtree(location)
    write(spark, location, sales(500, 40), SALES_DDL)
    entries = {e.name: e for e in ws.tiles()}
    assert entries[fine].current_versions == entries[fine].source_versions  # versions agree
    assert {e.status for e in entries.values()} == {"stale"}
    recreated = f"{schema}.sales was recreated (table id changed)"
    assert entries[year].message == f"{recreated}; refresh rebuilds it"
    assert not entries[year].usable  # not even within its maxStaleness (1h)

    # Past the recorded version by appends only: merging them would add to the old totals.
    write(spark, location, sales(540, 15), SALES_DDL, mode="append")
    done = paths(ws.refresh())
    reason = f"{recreated}: full rebuild"
    assert done[fine] == ("full", reason)
    assert done[year] == ("rollup", f"{reason}; rolled up from {fine}")
    assert done[f"{schema}.by_year"] == ("full", reason)
    assert_equal_to_the_group_by(ws, spark, schema)
    assert {e.status for e in ws.tiles()} == {"fresh"}
    assert {r.status for r in ws.refresh().results} == {"skipped"}


def test_a_commit_someone_else_makes_to_a_tile_makes_it_stale(spark, warehouse: Path) -> None:
    schema = "jobs_identity_tile"
    ws = Workspace(make_shop(spark, warehouse, schema, TILES), warehouse=str(warehouse))
    assert ws.materialize().ok
    fine, year = tile_name(ws, ("brand", "the_year")), tile_name(ws, ("the_year",))

    # mvlattice's own commits keep tiles fresh; appends still merge incrementally.
    write(spark, warehouse / "jobs" / schema / "sales", sales(1000, 15), SALES_DDL, mode="append")
    done = paths(ws.refresh())
    assert done[fine][0] == done[year][0] == "incremental"
    assert {e.status for e in ws.tiles()} == {"fresh"}
    spark.sql(f"optimize {fine} zorder by (brand)")  # rewrites files, not rows
    (optimized,) = spark.sql(f"describe history {fine} limit 1").collect()
    assert optimized["operation"] == "OPTIMIZE"
    assert {e.status for e in ws.tiles()} == {"fresh"}

    spark.sql(f"delete from {fine} where brand = 'b1'")
    version = optimized["version"] + 1
    change = f"version {version} of the table (DELETE) was not written by mvlattice"
    entries = {e.name: e for e in ws.tiles()}
    assert (entries[fine].status, entries[fine].code) == ("stale", "STALE")
    assert entries[fine].message == f"{change}; refresh rebuilds it"
    assert entries[year].status == "fresh"  # its own table is untouched
    done = paths(ws.refresh())
    assert done[fine] == ("full", f"{change}: full rebuild")
    assert done[year][0] == "none"
    assert_equal_to_the_group_by(ws, spark, schema)
    assert {e.status for e in ws.tiles()} == {"fresh"}


def test_the_table_id_behind_a_checkpoint(spark, warehouse: Path) -> None:
    location = warehouse / "jobs" / "identity_checkpoint"
    spark.sql(
        f"create table delta.`{location}` (n int) using delta "
        "tblproperties ('delta.checkpointInterval' = '2')"
    )
    for n in (1, 2):
        spark.sql(f"insert into delta.`{location}` values ({n})")
    expected = described_id(spark, f"delta.`{location}`")
    assert expected and deltalog.table_id(None, str(location), 2) == expected  # checksum
    log = location / "_delta_log"
    assert (log / f"{2:020d}.checkpoint.parquet").exists()
    for old in (*log.glob("*.crc"), log / f"{0:020d}.json", log / f"{1:020d}.json"):
        old.unlink()  # what log cleanup leaves: the checkpoint and the commits after it
    assert deltalog.table_id(None, str(location), 2) is None  # the log alone cannot say
    assert deltalog.table_id(spark, str(location), 2) == expected  # Delta reads the checkpoint
