"""Tiny shop stars in the run's warehouse for the jobs tests, each under its own schema name
(so its tables and tiles never meet another test's). No tests here."""

from __future__ import annotations

import textwrap
from pathlib import Path

from mvlattice.jobs.targets import tile_target
from mvlattice.lattice.lattice import TileSpec

PRODUCT_DDL = "product_id INT, brand STRING, category STRING, colour STRING"
TIME_DDL = "time_id INT, the_year INT, the_month INT"
SALES_DDL = "sale_id INT, product_id INT, time_id INT, units DECIMAL(10,2), amount INT"

MODEL = """
version: "1.0"
defaultSchema: {schema}
schemas:
  - name: {schema}
    type: delta
    location: {location}
    tables:
      - name: sales
      - name: product
        primaryKey: [product_id]
      - name: time
        primaryKey: [time_id]
    lattices:
      - name: {schema}_star
        sql:
          - select 1 from {schema}.sales as s
          - join {schema}.product as p using (product_id)
          - join {schema}.time as t using (time_id)
        algorithm: false
        maxStaleness: 1h
        refresh: {{cron: "0 3 * * *"}}
        defaultMeasures:
          - agg: count
          - {{agg: sum, args: units}}
          - {{agg: avg, args: amount}}
          - {{agg: min, args: amount}}
          - {{agg: max, args: units}}
        tiles:
{tiles}
    materializations:
      - view: {schema}_by_year
        table: by_year
        sql: >
          select t.the_year, sum(s.amount) as amount, count(*) as c
          from {schema}.sales s join {schema}.time t on s.time_id = t.time_id
          group by t.the_year
"""


ALL_TILES = """\
- dimensions: [brand, category, the_year, the_month]
- dimensions: [brand, the_year]
- dimensions: [the_year]
- dimensions: []
- dimensions: [category]
  measures: [{agg: count, args: [brand], distinct: true}, {agg: count}]
"""


def products() -> list[tuple]:
    return [(i, f"b{i % 4}", f"c{i % 2}", f"red{i % 3}") for i in range(10)]


def times() -> list[tuple]:
    return [(i, 2020 + i // 12, 1 + i % 12) for i in range(24)]


def sales(first: int, count: int) -> list[tuple]:
    from decimal import Decimal

    return [
        (i, i % 10, (i * 7) % 24, Decimal(i % 9) / 4, None if i % 13 == 0 else i % 11)
        for i in range(first, first + count)
    ]


def write(
    spark,
    location: Path,
    rows: list[tuple],
    ddl: str,
    mode: str = "overwrite",
    partition_by: tuple[str, ...] = (),
) -> None:
    writer = spark.createDataFrame(rows, ddl).write.format("delta").mode(mode)
    writer.partitionBy(*partition_by).save(str(location))


def make_shop(
    spark,
    warehouse: Path,
    schema: str,
    tiles: str = ALL_TILES,
    partition_sales_by: tuple[str, ...] = (),
) -> Path:
    """Tables product (10), time (24) and sales (120 rows) and a model over them with `tiles`
    (YAML); returns the model path. The lattice is `<schema>_star`; the materialization
    `<schema>.by_year`."""
    base = warehouse / "jobs" / schema
    write(spark, base / "product", products(), PRODUCT_DDL)
    write(spark, base / "time", times(), TIME_DDL)
    write(spark, base / "sales", sales(0, 120), SALES_DDL, partition_by=partition_sales_by)
    model = base / "model.yaml"
    text = MODEL.format(schema=schema, location=base, tiles=textwrap.indent(tiles, " " * 10))
    model.write_text(text, encoding="utf-8")
    return model


def rows_of(spark, sql: str) -> list[tuple]:
    return sorted((tuple(r) for r in spark.sql(sql).collect()), key=repr)


def tile_name(ws, dims: tuple[str, ...]) -> str:
    """The table name of the declared tile of the workspace's only lattice with `dims`."""
    lattice = ws.model.lattices[0]
    spec: TileSpec = next(t for t in lattice.tiles if t.dimensions == dims)
    return tile_target(spec, ws.warehouse).name
