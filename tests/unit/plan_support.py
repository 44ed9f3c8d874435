"""A small shop lattice and its statistics, shared by the tile-planning unit tests."""

from __future__ import annotations

import textwrap
from pathlib import Path

from mvlattice.lattice.lattice import Lattice
from mvlattice.model.loader import Model, load_model
from mvlattice.statistics.dict_provider import DictStatisticProvider

TABLES = """
version: "1.0"
defaultSchema: shop
schemas:
  - name: shop
    type: delta
    location: shop
    tables:
      - name: sales
        columns: [product_id, time_id, store_id, units, price]
      - name: product
        columns: [product_id, product_class_id, brand]
        primaryKey: [product_id]
      - name: product_class
        columns: [product_class_id, family]
        primaryKey: [product_class_id]
      - name: time_by_day
        columns: [time_id, the_year, the_month, quarter, fiscal_period]
        primaryKey: [time_id]
      - name: store
        columns: [store_id, city]
        primaryKey: [store_id]
"""

LATTICE = """
lattices:
  - name: sales
    sql: >
      select 1 from "shop"."sales" as "s"
      join "shop"."product" as "p" using ("product_id")
      join "shop"."time_by_day" as "t" using ("time_id")
      join "shop"."product_class" as "pc" on "p"."product_class_id" = "pc"."product_class_id"
    algorithm: {algorithm}
    defaultMeasures:
      - agg: count
      - {{agg: sum, args: units}}
    tiles: {tiles}
"""

ROWS = 10_000
COUNTS = {
    "s.product_id": 500,
    "s.time_id": 365,
    "store_id": 20,
    "units": 6,
    "price": 5_000,  # nearly one value per row: not dimension-like
    "p.product_id": 500,
    "p.product_class_id": 50,
    "brand": 40,
    "t.time_id": 365,
    "the_year": 2,
    "the_month": 12,
    "quarter": 4,
    "fiscal_period": 1,  # constant: groups nothing
    "pc.product_class_id": 50,
    "family": 3,
    ("the_year", "the_month"): 24,
    ("the_month", "quarter"): 12,
    ("the_year", "quarter"): 8,
    ("brand", "family"): 40,
}

# A workload over the shop lattice: what is asked, how often.
ASKED = [
    {"dimensions": ["the_year", "the_month"], "weight": 10},
    {"dimensions": ["brand"], "filters": ["the_year"], "weight": 5},
    {"dimensions": ["family", "quarter"], "weight": 3},
    {"dimensions": ["p.product_id"], "weight": 1},
]


def write_model(
    tmp_path: Path, *, algorithm: bool = True, tiles: str = "[]", extra: str = ""
) -> Path:
    text = textwrap.dedent(TABLES) + textwrap.dedent(LATTICE).format(
        algorithm=str(algorithm).lower(), tiles=tiles
    )
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "shop.yaml"
    path.write_text(text + textwrap.dedent(extra))
    return path


def shop_model(tmp_path: Path, **options: object) -> Model:
    return load_model(write_model(tmp_path, **options), str(tmp_path / "warehouse"))  # type: ignore[arg-type]


def shop_lattice(tmp_path: Path, **options: object) -> Lattice:
    return shop_model(tmp_path, **options).lattices[0]


def shop_stats() -> DictStatisticProvider:
    return DictStatisticProvider(ROWS, COUNTS)
