"""A declared tile's `name:` on real Spark and Delta (issue 36): it is built as
`mvlattice.<lattice>__<name>`, listed once, answers queries, is registered and kept by gc like
any tile, and gc still finds it once the model no longer declares it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.jobs.api import collect_garbage
from mvlattice.jobs.catalog import register_tiles
from mvlattice.jobs.targets import tile_location_of
from mvlattice.workspace import Workspace
from tests.integration.test_jobs_support import make_shop, rows_of, tile_name

pytestmark = pytest.mark.spark

SCHEMA = "tile_names"
NAMED = f"mvlattice.{SCHEMA}_star__brand_year"
TILES = """\
- {dimensions: [brand, the_year], name: brand_year}
- dimensions: [the_year]
"""
QUERY = (
    f"select p.brand, t.the_year, count(*) as c from {SCHEMA}.sales s "
    f"join {SCHEMA}.product p on s.product_id = p.product_id "
    f"join {SCHEMA}.time t on s.time_id = t.time_id group by p.brand, t.the_year"
)


@pytest.fixture(scope="module")
def built(spark, warehouse: Path):
    model = make_shop(spark, warehouse, SCHEMA, TILES)
    ws = Workspace(model, warehouse=str(warehouse))
    return ws, model, ws.materialize()


def test_the_named_tile_is_built_under_its_name_and_listed_once(built, spark) -> None:
    ws, _, result = built
    year = tile_name(ws, ("the_year",))
    assert tile_name(ws, ("brand", "the_year")) == NAMED
    assert {r.target for r in result.results if r.kind == "tile"} == {NAMED, year}
    assert all(r.status == "built" for r in result.results)
    tiles = [e for e in ws.tiles() if e.kind == "tile"]
    assert sorted(e.name for e in tiles) == sorted([NAMED, year])  # no unnamed twin
    assert all(e.status == "fresh" for e in tiles)
    assert rows_of(spark, f"select brand, the_year, count from {NAMED}") == rows_of(spark, QUERY)


def test_a_query_is_answered_from_the_named_tile(built) -> None:
    ws, _, _ = built
    result = ws.rewrite(QUERY)
    assert result.materializations == (NAMED,)


def test_the_named_tile_is_registered_and_kept_until_no_longer_declared(built, spark) -> None:
    ws, model, _ = built
    spark.sql(f"drop table {NAMED}")
    assert register_tiles(spark, ws.model, ws.warehouse) == 3  # two tiles, one materialization
    assert spark.table(NAMED).count() > 0
    assert collect_garbage(spark, ws.model, ws.warehouse) == ()
    without = model.parent / "without.yaml"
    without.write_text(model.read_text().replace(", name: brand_year}", "}"))
    gone = Workspace(without, warehouse=ws.warehouse)
    doomed = collect_garbage(spark, gone.model, gone.warehouse, dry_run=True)
    assert [(g.name, g.reason) for g in doomed] == [(NAMED, "no longer declared in the model")]


def test_a_named_tile_whose_dimensions_change_is_rebuilt_under_its_name(built, spark) -> None:
    ws, model, _ = built
    changed = model.parent / "changed.yaml"
    changed.write_text(model.read_text().replace("[brand, the_year], name", "[brand], name"))
    again = Workspace(changed, warehouse=ws.warehouse)
    (entry,) = [e for e in again.tiles() if e.name == NAMED]
    assert entry.status == "stale" and "older definition" in entry.message
    (rebuilt,) = [r for r in again.materialize().results if r.target == NAMED]
    assert rebuilt.status == "refreshed" and rebuilt.error is None
    location = tile_location_of(ws.warehouse, NAMED.split(".", 1)[1])
    tile = spark.read.format("delta").load(location)
    assert tile.columns[:2] == ["brand", "count"]
    by_brand = QUERY.replace(", t.the_year", "")  # the same query grouped by brand alone
    assert rows_of(spark, f"select brand, count from delta.`{location}`") == rows_of(
        spark, by_brand
    )
