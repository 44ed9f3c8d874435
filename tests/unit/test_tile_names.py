"""Tile names (issue 36): short, readable, stable; a declared tile's `name:` wins. No Spark."""

from __future__ import annotations

import doctest
import textwrap
from pathlib import Path

import pytest

from mvlattice.errors import ModelError
from mvlattice.jobs import naming
from mvlattice.jobs.catalog import planned_targets, tiles_on_disk
from mvlattice.jobs.context import JobContext
from mvlattice.jobs.naming import MAX_READABLE, lattice_prefix, tile_table_name
from mvlattice.jobs.record import spec_json
from mvlattice.jobs.state import StateStore
from mvlattice.jobs.tables import TableReader
from mvlattice.jobs.targets import declared_spec, declared_targets, find_target, tile_target
from mvlattice.lattice.lattice import Measure, TileSpec
from mvlattice.model.loader import Model, load_model

COUNT = (Measure("count"),)
MODEL = """
version: "1.0"
defaultSchema: shop
schemas:
  - name: shop
    type: delta
    location: shop
    tables:
      - name: sales
        columns: [product_id, time_id, units]
      - name: product
        columns: [product_id, brand, product_family, product_category, product_department]
        primaryKey: [product_id]
      - name: time_by_day
        columns: [time_id, the_year, the_month, quarter, week_of_year, day_of_month]
        primaryKey: [time_id]
lattices:
  - name: sales
    sql: >
      select 1 from "shop"."sales" as "s"
      join "shop"."product" as "p" using ("product_id")
      join "shop"."time_by_day" as "t" using ("time_id")
    tiles:
TILES
"""


def model_with(tmp_path: Path, tiles: str) -> Model:
    text = MODEL.replace("TILES", textwrap.indent(textwrap.dedent(tiles).strip(), "      "))
    path = tmp_path / "model.yaml"
    path.write_text(text)
    return load_model(path, warehouse=str(tmp_path / "wh"))


def problems_of(tmp_path: Path, tiles: str) -> list[str]:
    with pytest.raises(ModelError) as err:
        model_with(tmp_path, tiles)
    return [f"{p.path}: {p.message}" for p in err.value.problems]


def test_the_naming_doctest_runs() -> None:
    assert doctest.testmod(naming).failed == 0


# -- generated names ----------------------------------------------------------------------------
def test_a_column_two_tables_share_is_qualified_the_others_are_bare(tmp_path: Path) -> None:
    model = model_with(tmp_path, "- dimensions: [brand, [s, product_id], the_year]")
    (tile,) = model.lattice("sales").tiles
    assert tile.dimensions == ("brand", "s.product_id", "the_year")
    name = tile_table_name(tile)
    assert name.startswith("sales__brand__s_product_id__the_year__")
    assert len(name) == len("sales__brand__s_product_id__the_year__") + 6


def test_names_are_stable_across_runs_and_dimension_order() -> None:
    one = TileSpec("star", ("the_year", "t.quarter"), COUNT)
    other = TileSpec("star", ("t.quarter", "the_year"), COUNT)
    # The hash is the one the old `star__the_year__t__quarter__bc7938` had: identity unchanged.
    assert tile_table_name(one) == tile_table_name(other) == "star__t_quarter__the_year__bc7938"


def test_the_hash_tells_measures_and_sketches_apart() -> None:
    dims = ("the_year",)
    names = {
        tile_table_name(TileSpec("star", dims, COUNT)),
        tile_table_name(TileSpec("star", dims, (Measure("sum", ("units",)),))),
        tile_table_name(TileSpec("star", dims, (Measure("count", ("x",), True),))),
        tile_table_name(TileSpec("star", dims, (Measure("count", ("x",), True, True),))),
    }
    assert len(names) == 4
    assert all(n.startswith("star__the_year__") for n in names)


def test_long_names_are_cut_between_dimensions_and_count_the_rest() -> None:
    dims = ("the_year", "the_month", "quarter", "product_family", "brand", "week_of_year")
    name = tile_table_name(TileSpec("sales", dims, COUNT))
    readable, _, digest = name.rpartition("__")
    assert readable == "sales__brand__product_family__quarter__plus3"
    assert len(readable) <= MAX_READABLE and len(digest) == 6


def test_a_dimension_too_long_to_show_is_only_counted() -> None:
    name = tile_table_name(TileSpec("sales", ("x" * 60, "y" * 60), COUNT))
    assert name.rpartition("__")[0] == "sales__plus2"


def test_the_all_tile_and_the_lattice_prefix() -> None:
    assert tile_table_name(TileSpec("Sales", (), COUNT)).startswith("sales__all__")
    for spec in (TileSpec("Sales", ("b",), COUNT), TileSpec("Sales", ("b",), COUNT, "mine")):
        assert tile_table_name(spec).startswith(lattice_prefix("Sales"))


# -- a declared tile's name: ------------------------------------------------------------------
NAMED = """
- {dimensions: [the_year], name: by_year}
- dimensions: [the_year, quarter]
"""


def test_a_named_tile_is_its_lattice_and_name(tmp_path: Path) -> None:
    model = model_with(tmp_path, NAMED)
    named, plain = model.lattice("sales").tiles
    assert named.name == "by_year" and plain.name is None
    wh = str(tmp_path / "wh")
    target = tile_target(named, wh)
    assert target.name == "mvlattice.sales__by_year"
    assert target.location == str(tmp_path / "wh" / "_mvlattice" / "tiles" / "sales__by_year")
    targets = declared_targets(model, wh)
    assert find_target(targets, "by_year") is find_target(targets, "mvlattice.sales__by_year")


def test_the_name_is_not_part_of_a_tiles_identity(tmp_path: Path) -> None:
    """A plan or build record keeps no name: read back, it is still the declared tile."""
    model = model_with(tmp_path, NAMED)
    named = model.lattice("sales").tiles[0]
    unnamed = TileSpec("sales", ("the_year",), named.measures)
    assert unnamed == named and hash(unnamed) == hash(named)
    assert declared_spec(model, unnamed).name == "by_year"
    other = TileSpec("sales", ("quarter",), named.measures)
    assert declared_spec(model, other) is other


def test_a_plan_read_back_keeps_the_declared_tiles_name(tmp_path: Path) -> None:
    """A plan is stored without names; its declared tile must not come back as an unnamed
    twin (a second table for the same tile in `tiles`, `materialize` and serving)."""
    model = model_with(tmp_path, NAMED)
    wh = str(tmp_path / "wh")
    store = StateStore.for_warehouse(wh)
    store.save_plan("sales", [spec_json(t) for t in model.lattice("sales").tiles], 0.0)
    ctx = JobContext(None, model, wh, store, TableReader(None))  # type: ignore[arg-type]
    planned = [t.name for t in planned_targets(ctx)]
    assert planned == [tile_target(t, wh).name for t in model.lattice("sales").tiles]
    assert planned[0] == "mvlattice.sales__by_year"


def test_named_and_generated_tiles_are_found_on_disk_by_lattice(tmp_path: Path) -> None:
    tiles = tmp_path / "_mvlattice" / "tiles"
    for name in ("sales__by_year", "sales__the_year__abc123", "other__by_year", "Bad-Dir"):
        (tiles / name).mkdir(parents=True)
    found = tiles_on_disk(None, str(tmp_path), ["sales"])
    assert [n for n, _ in found] == [
        "mvlattice.sales__by_year",
        "mvlattice.sales__the_year__abc123",
    ]


@pytest.mark.parametrize("bad", ["By_Year", "by-year", "by__year", "_by", "1st", "a" * 49, "[x]"])
def test_a_name_that_is_not_plain_is_refused(tmp_path: Path, bad: str) -> None:
    found = problems_of(tmp_path, f"- {{dimensions: [the_year], name: '{bad}'}}")
    assert found == [
        f"lattices[0].tiles[0].name: tile name '{bad}' is not a plain name: lowercase letters, "
        "digits and single underscores, starting with a letter, at most 48 characters"
    ]


def test_a_name_used_twice_in_the_model_is_refused(tmp_path: Path) -> None:
    found = problems_of(
        tmp_path,
        """
        - {dimensions: [the_year], name: mine}
        - {dimensions: [quarter], name: mine}
        """,
    )
    assert found == [
        "lattices[0].tiles[1].name: tile name 'mine' is already used at lattices[0].tiles[0].name"
    ]


def test_a_named_tile_repeating_another_is_refused(tmp_path: Path) -> None:
    found = problems_of(
        tmp_path,
        """
        - {dimensions: [the_year, quarter]}
        - {dimensions: [quarter, the_year], name: again}
        """,
    )
    assert found == [
        "lattices[0].tiles[1]: tile declares the same dimensions and measures as "
        "lattices[0].tiles[0]"
    ]
