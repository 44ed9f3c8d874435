"""Building tiles and materializations as Delta tables on real Spark and Delta: cheapest
source, recorded versions, the catalog, registration, freshness, gc, and a failing
tile that does not stop the batch."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.delta.log import latest_version
from mvlattice.jobs import tables
from mvlattice.jobs.api import collect_garbage
from mvlattice.jobs.batch import run_batch
from mvlattice.jobs.catalog import CatalogAvailability, register_tiles
from mvlattice.jobs.context import JobContext
from mvlattice.jobs.targets import tile_location_of, tile_target
from mvlattice.jobs.tilesql import star_tile_sql
from mvlattice.lattice.lattice import TileSpec
from mvlattice.workspace import Workspace
from tests.integration.test_jobs_support import (
    ALL_TILES,
    PRODUCT_DDL,
    make_shop,
    products,
    rows_of,
    tile_name,
)

pytestmark = pytest.mark.spark

SCHEMA = "jobs_build"
STAR = (
    f"from {SCHEMA}.sales s join {SCHEMA}.product p on s.product_id = p.product_id "
    f"join {SCHEMA}.time t on s.time_id = t.time_id"
)


@pytest.fixture(scope="module")
def built(spark, warehouse: Path):
    model = make_shop(spark, warehouse, SCHEMA, ALL_TILES + "- dimensions: [colour]\n")
    ws = Workspace(model, warehouse=str(warehouse))
    # After the model was read, the source loses the column one tile groups by.
    no_colour = [p[:3] for p in products()]
    spark.createDataFrame(no_colour, PRODUCT_DDL.rsplit(",", 1)[0]).write.format("delta").mode(
        "overwrite"
    ).option("overwriteSchema", "true").save(str(warehouse / "jobs" / SCHEMA / "product"))
    events = []
    result = ws.materialize(progress=events.append)
    return ws, result, events


def test_tiles_are_built_from_the_cheapest_source(built) -> None:
    ws, result, events = built
    by_name = {r.target: r for r in result.results}
    fine = tile_name(ws, ("brand", "category", "the_year", "the_month"))
    brand_year = tile_name(ws, ("brand", "the_year"))
    year, total = tile_name(ws, ("the_year",)), tile_name(ws, ())
    assert result.results[0].target == f"{SCHEMA}.by_year"  # materializations first
    assert (by_name[fine].path, by_name[fine].built_from) == ("full", "star")
    assert by_name[brand_year].built_from == fine and by_name[brand_year].path == "rollup"
    assert by_name[year].built_from == brand_year  # the smallest current ancestor
    assert by_name[total].built_from == year
    category = by_name[tile_name(ws, ("category",))]
    assert category.built_from == fine  # COUNT(DISTINCT brand): brand must be grouped
    assert len(events) == 2 * len(result.results) and events[0].result is None
    assert all(r.status == "built" for r in result.results if r.error is None)


def test_tile_contents_equal_the_group_by_over_the_star(built, spark) -> None:
    ws, _, _ = built
    lattice = ws.model.lattices[0]
    for spec in lattice.tiles[:5]:
        name = tile_name(ws, spec.dimensions)
        assert rows_of(spark, f"select * from {name}") == rows_of(
            spark, star_tile_sql(lattice, spec)
        ), name
    brand_year = tile_name(ws, ("brand", "the_year"))
    mine = rows_of(spark, f"select * from {brand_year}")
    theirs = rows_of(
        spark,
        "select brand, the_year, count(*), sum(units), sum(amount), count(amount), "
        f"min(amount), max(units) {STAR} group by brand, the_year",
    )
    assert mine == theirs
    view = rows_of(spark, f"select * from {SCHEMA}.by_year")
    assert view == rows_of(
        spark,
        f"select t.the_year, sum(s.amount), count(*) from {SCHEMA}.sales s "
        f"join {SCHEMA}.time t on s.time_id = t.time_id group by t.the_year",
    )


def test_a_failing_tile_is_reported_and_does_not_stop_the_batch(built) -> None:
    ws, result, _ = built
    colour = tile_name(ws, ("colour",))
    (failed,) = result.failed
    assert failed.target == colour
    assert "colour" in failed.error and "\n" not in failed.error
    assert sum(r.status == "built" for r in result.results) == 6
    entries = {e.name: e for e in ws.tiles()}
    assert entries[colour].status == "failed" and "colour" in entries[colour].last_error
    assert entries[colour].code == "FAILED" and not entries[colour].usable
    again = ws.materialize()
    assert {r.status for r in again.results if r.target != colour} == {"skipped"}
    assert [r.target for r in again.failed] == [colour]


def test_catalog_records_versions_rows_and_stays_registered(built, spark) -> None:
    ws, _, _ = built
    fine = tile_name(ws, ("brand", "category", "the_year", "the_month"))
    entry = next(e for e in ws.tiles() if e.name == fine)
    sales = str(Path(ws.warehouse) / "jobs" / SCHEMA / "sales")
    assert entry.status == "fresh" and entry.code == "FRESH" and entry.usable
    assert entry.source_versions == entry.current_versions
    assert entry.source_versions[f"{SCHEMA}.sales"] == latest_version(spark, sales)
    assert entry.rows == spark.table(fine).count() and entry.size_bytes > 0
    assert entry.origin == "declared" and entry.refresh_path == "full"
    props = spark.sql(f"show tblproperties {fine}").collect()
    keys = {r["key"] for r in props}
    assert {"mvlattice.sql", "mvlattice.sourceVersions", "mvlattice.rows"} <= keys
    spark.sql(f"drop table {fine}")  # a new session knows no tiles ...
    assert register_tiles(spark, ws.model, ws.warehouse) == 6  # ... until it registers them
    assert spark.table(fine).count() == entry.rows


def test_availability_hits_and_gc(built, spark) -> None:
    ws, _, _ = built
    available = CatalogAvailability(spark, ws.model, ws.warehouse)
    year = tile_name(ws, ("the_year",))
    assert available.state(year).code == "FRESH"
    assert available.state(f"{SCHEMA}.by_year").code == "FRESH"
    assert available.state("mvlattice.nothing__here").code == "MISSING"
    available.record_hit(year)
    available.record_hit(year)
    assert next(e for e in ws.tiles() if e.name == year).hits == 2

    lattice = ws.model.lattice(f"{SCHEMA}_star")  # a tile the model neither declares nor plans
    spec = TileSpec(lattice.name, ("category", "the_month"), lattice.default_measures)
    target = tile_target(spec, ws.warehouse, "planned")
    (result,) = run_batch(JobContext.open(spark, ws.model, ws.warehouse), (target,)).results
    assert result.status == "built" and result.path == "rollup"
    assert available.state(target.name).code == "FRESH"
    assert target.name in {e.name for e in ws.tiles()}

    assert collect_garbage(spark, ws.model, ws.warehouse) == ()  # nothing left the model
    doomed = collect_garbage(spark, ws.model, ws.warehouse, unused_seconds=0, dry_run=True)
    assert [g.name for g in doomed] == [target.name]  # declared tiles are never garbage
    assert Path(target.location).exists()
    collect_garbage(spark, ws.model, ws.warehouse, unused_seconds=0)
    assert not Path(target.location).exists()
    assert target.name not in {e.name for e in ws.tiles()}
    assert available.state(target.name).code == "MISSING"


def test_a_large_tile_is_written_sorted_fewest_values_first(
    spark, warehouse: Path, monkeypatch
) -> None:
    monkeypatch.setattr(tables, "SORT_MIN_ROWS", 0)  # "large" from the first row
    dims = ("brand", "category", "the_year", "the_month")
    model = make_shop(spark, warehouse, "jobs_sorted", f"- dimensions: [{', '.join(dims)}]\n")
    ws = Workspace(model, warehouse=str(warehouse))
    assert all(r.status == "built" for r in ws.materialize().results)
    tile = spark.read.format("delta").load(
        tile_location_of(str(warehouse), tile_name(ws, dims).split(".", 1)[-1])
    )
    distinct = {c: tile.select(c).distinct().count() for c in dims}
    order = sorted(dims, key=distinct.__getitem__)  # ties keep the tile's dimension order
    assert order == ["category", "the_year", "brand", "the_month"]
    for file in tile.inputFiles():
        rows = [tuple(r) for r in spark.read.parquet(file).select(*order).collect()]
        assert len(rows) > 1 and rows == sorted(rows)
