"""Storage on real Delta tables: a refresh vacuums what replaced versions left behind, so ten
refreshes keep a tile within twice one version; gc moves a tile aside before deleting it, so a
killed gc leaves it missing (never fresh) and the next gc finishes; gc reports what it could not
remove; a tile whose log outlived its data files reads as missing, and a refresh rebuilds it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mvlattice.delta.log import checksum, latest_version
from mvlattice.jobs import trash, vacuum
from mvlattice.jobs.api import collect_garbage
from mvlattice.jobs.catalog import CatalogAvailability
from mvlattice.jobs.lease import Leases
from mvlattice.jobs.naming import materialization_location
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

FINE = ("brand", "category", "the_year", "the_month")
TILES = f"- dimensions: [{', '.join(FINE)}]\n- dimensions: [the_year]\n- dimensions: [category]\n"


def data_bytes(location: Path) -> int:
    """Bytes of every file under the table's folder except its Delta log."""
    total = 0
    for folder, dirs, files in os.walk(location):
        dirs[:] = [d for d in dirs if d != "_delta_log"]
        total += sum(os.path.getsize(Path(folder, f)) for f in files)
    return total


def version_bytes(spark, location: Path) -> int:
    """Bytes of the data files the table's current version reads."""
    crc = checksum(spark, str(location), latest_version(spark, str(location)))
    return int(crc["tableSizeBytes"])


def location_of(ws: Workspace, name: str) -> Path:
    return Path(ws.warehouse) / "_mvlattice" / "tiles" / name.split(".")[1]


def status(ws: Workspace, name: str) -> str:
    return next(e.status for e in ws.tiles() if e.name == name)


def test_ten_refreshes_keep_a_tile_within_two_versions(spark, warehouse: Path, monkeypatch) -> None:
    monkeypatch.setattr(vacuum, "MIN_RETENTION", 0.0)  # a test may see files go at once
    schema = "jobs_vacuum"
    model = make_shop(spark, warehouse, schema, f"- dimensions: [{', '.join(FINE)}]\n")
    text = model.read_text(encoding="utf-8")
    model.write_text(
        text.replace("maxStaleness: 1h", "maxStaleness: 1h\n        vacuum: {retention: 0s}")
    )
    ws = Workspace(model, warehouse=str(warehouse))
    assert ws.materialize().ok
    tile = tile_name(ws, FINE)
    location = location_of(ws, tile)
    by_year = Path(materialization_location(ws.warehouse, schema, "by_year"))  # 7 days: default
    assert by_year.is_dir()
    props = {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES {tile}").collect()}
    assert props["delta.deletedFileRetentionDuration"] == "interval 0 seconds"

    kept_without_vacuum = version_bytes(spark, location)  # what every version holds, summed
    for i in range(10):
        write(
            spark,
            warehouse / "jobs" / schema / "sales",
            sales(1000 + 10 * i, 10),
            SALES_DDL,
            mode="append",
        )
        result = ws.refresh()
        assert result.ok, result.to_json()
        assert {r.status for r in result.results} == {"refreshed"}
        assert all(r.warning is None for r in result.results), result.to_json()
        kept_without_vacuum += version_bytes(spark, location)
    one, total = version_bytes(spark, location), data_bytes(location)
    print(
        f"tile: one version {one} B; all 11 versions {kept_without_vacuum} B; on storage {total} B"
    )
    assert total <= 2 * one < kept_without_vacuum / 5
    assert status(ws, tile) == "fresh"  # VACUUM's own commits change no data
    star = (
        f"{schema}.sales s join {schema}.product p using (product_id) "
        f"join {schema}.time t using (time_id)"
    )
    expected = rows_of(spark, f"select {', '.join(FINE)}, count(*) from {star} group by 1, 2, 3, 4")
    assert rows_of(spark, f"select {', '.join(FINE)}, `count` from {tile}") == expected
    operations = {r[0] for r in spark.sql(f"describe history {tile}").select("operation").collect()}
    assert "VACUUM END" in operations

    # the materialization keeps the model's default 7 days: every version is still there
    kept, its_one = data_bytes(by_year), version_bytes(spark, by_year)
    print(f"materialization: one version {its_one} B, on storage {kept} B")
    assert kept > 5 * its_one


@pytest.fixture(scope="module")
def three_tiles(spark, warehouse: Path, tmp_path_factory):
    """Three declared tiles in a warehouse of their own; a second model declares only the
    first, so to it the other two are garbage."""
    schema = "jobs_gc"
    model = make_shop(spark, warehouse, schema, TILES)
    tiles_home = tmp_path_factory.mktemp("gc_warehouse")
    ws = Workspace(model, warehouse=str(tiles_home))
    assert ws.materialize().ok
    fewer = model.with_name("fewer.yaml")
    text = model.read_text(encoding="utf-8")
    fewer.write_text(
        text.replace("          - dimensions: [the_year]\n          - dimensions: [category]\n", "")
    )
    return ws, Workspace(fewer, warehouse=str(tiles_home))


def test_gc_moves_aside_reports_failures_and_finishes_after_a_kill(
    three_tiles, spark, monkeypatch
) -> None:
    ws, fewer = three_tiles
    year, category = tile_name(ws, ("the_year",)), tile_name(ws, ("category",))
    assert {status(ws, year), status(ws, category)} == {"fresh"}
    bin_ = Path(trash.trash_location(ws.warehouse))

    # 0. a tile whose lease another builder holds is left to it, and so said
    with Leases.for_warehouse(ws.warehouse).acquire(year, "cli build") as building:
        held = {g.name: g.error for g in collect_garbage(spark, fewer.model, fewer.warehouse)}
        assert held[year] == (
            f"{year} is held by {building.holder.describe()} (cli build), so left in place "
            "(the next gc tries again)"
        )
        assert status(ws, year) == "fresh" and location_of(ws, year).exists()
    ws.materialize()  # the other tile, removed meanwhile, is built again for what follows
    assert {status(ws, year), status(ws, category)} == {"fresh"}
    assert trash.leftovers(spark, ws.warehouse) == ()
    bin_.rmdir()  # empty: step 1 puts a file in its place

    # 1. the trash cannot be made (a file where its folder goes): reported, tiles untouched
    bin_.parent.mkdir(parents=True, exist_ok=True)
    bin_.write_text("in the way")
    failed = collect_garbage(spark, fewer.model, fewer.warehouse)
    assert sorted(g.name for g in failed) == sorted([year, category])
    assert all(g.error and g.error.startswith("not moved aside, so left in place") for g in failed)
    assert {status(ws, year), status(ws, category)} == {"fresh"}
    bin_.unlink()

    # 2. killed right after moving the first tile aside
    def killed(*_args) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(trash, "unregister", killed)
    with pytest.raises(KeyboardInterrupt):
        collect_garbage(spark, fewer.model, fewer.warehouse)
    monkeypatch.undo()
    (left,) = trash.leftovers(spark, ws.warehouse)
    gone = year if Path(left).name.startswith(year.split(".")[1]) else category
    assert not location_of(ws, gone).exists()
    assert status(ws, gone) == "missing"  # to the model that declares it: missing, never fresh
    assert CatalogAvailability(spark, ws.model, ws.warehouse).state(gone).code == "MISSING"
    assert CatalogAvailability(spark, fewer.model, fewer.warehouse).state(gone).code == "MISSING"

    # 3. the next gc deletes the leftover and removes the other tile
    done = collect_garbage(spark, fewer.model, fewer.warehouse)
    assert all(g.error is None for g in done), done
    assert {g.location for g in done} == {
        left,
        str(location_of(ws, ({year, category} - {gone}).pop())),
    }
    assert trash.leftovers(spark, ws.warehouse) == ()
    assert not location_of(ws, year).exists() and not location_of(ws, category).exists()
    assert {status(ws, year), status(ws, category)} == {"missing"}
    assert collect_garbage(spark, fewer.model, fewer.warehouse) == ()


def test_a_log_without_its_data_files_reads_missing(three_tiles, spark) -> None:
    ws, _ = three_tiles
    fine = tile_name(ws, FINE)
    location = location_of(ws, fine)
    available = CatalogAvailability(spark, ws.model, ws.warehouse)
    assert available.state(fine).code == "FRESH"
    for part in location.glob("*.parquet"):  # what an interrupted delete leaves: the log only
        part.unlink()
    assert (location / "_delta_log").is_dir()
    assert available.state(fine).code == "MISSING"
    assert status(ws, fine) == "missing"
    again = ws.refresh(tile=fine)
    assert again.ok and again.results[0].path == "full", again.to_json()
    assert status(ws, fine) == "fresh" and available.state(fine).code == "FRESH"
    assert spark.table(fine).count() == again.results[0].rows
