"""`refresh --tile NAME` checks the name before Spark starts (issue 36: a typo took ~70 s to
report): declared, built and last-planned tiles and materializations are known by any name
`find_target` takes; anything else is one NotFoundError with the closest name. No Spark."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.errors import NotFoundError
from mvlattice.jobs.catalog import check_target_name
from mvlattice.jobs.naming import tile_table_name
from mvlattice.jobs.record import spec_json
from mvlattice.jobs.state import StateStore
from mvlattice.lattice.lattice import Measure, TileSpec
from tests.unit.test_tile_names import model_with

COUNT = (Measure("count"),)


def test_declared_built_and_planned_tiles_pass_and_a_typo_is_named(tmp_path: Path) -> None:
    model = model_with(tmp_path, "- {name: brand_year, dimensions: [brand, the_year]}")
    warehouse = str(tmp_path / "wh")
    built = tile_table_name(TileSpec("sales", ("the_month",), COUNT))
    (Path(warehouse) / "_mvlattice" / "tiles" / built).mkdir(parents=True)
    planned = TileSpec("sales", ("quarter",), COUNT)
    StateStore.for_warehouse(warehouse).save_plan("sales", [spec_json(planned)], 0.0)

    declared = tile_table_name(model.lattices[0].tiles[0])
    for name in ("brand_year", f"mvlattice.{declared}", declared, f"mvlattice.{built}",
                 built.upper(), f"mvlattice.{tile_table_name(planned)}"):  # fmt: skip
        check_target_name(model, warehouse, name, None)

    with pytest.raises(NotFoundError) as err:
        check_target_name(model, warehouse, "brand_yaer", None)
    assert str(err.value) == "no tile or materialization 'brand_yaer' (did you mean 'brand_year'?)"
    with pytest.raises(NotFoundError):
        check_target_name(model, warehouse, f"mvlattice.{built}x", None)


def test_a_remote_warehouse_is_left_to_spark(tmp_path: Path) -> None:
    model = model_with(tmp_path, "- {dimensions: [brand]}")
    check_target_name(model, "s3a://bucket/wh", "anything", None)
