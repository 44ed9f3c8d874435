"""Odd names on real Spark and Delta (issue 17): a lattice whose columns, table alias and
values hold a backtick, a space and a quote builds its tiles, and queries rewritten onto them
return the same rows as on the base tables (compared as multisets).

Table names stay plain: Spark's session catalog refuses any table name but letters, digits and
_ however it is quoted, so the model refuses them (tests/unit/test_hostile_names.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.proof.compare import as_multiset
from mvlattice.sql.quote import identifier
from mvlattice.workspace import Workspace

pytestmark = pytest.mark.spark

SCHEMA = "odd_names"
MODEL = """
version: "1.0"
defaultSchema: {schema}
schemas:
  - name: {schema}
    type: delta
    location: {location}
    tables:
      - name: sales_x
        path: sales
      - name: product
        primaryKey: [product_id]
    lattices:
      - name: odd
        sql: >
          select 1 from {schema}.sales_x as `s 'x``1`
          join {schema}.product as p on `s 'x``1`.product_id = p.product_id
        defaultMeasures:
          - agg: count
          - {{agg: sum, args: "unit price"}}
        tiles:
          - dimensions: ["c`d", "o'brien"]
            measures: [{{agg: sum, args: "unit price"}}, {{agg: count}},
                       {{agg: count, args: ["c`d"], distinct: true}}]
          - dimensions: ["o'brien"]
"""
QUERIES = [
    # GROUP BY the tile's dimensions: read as is
    "SELECT `c``d`, `o'brien`, sum(`unit price`) AS s, count(*) AS n "
    f"FROM {SCHEMA}.sales_x AS f JOIN {SCHEMA}.product AS p ON f.product_id = p.product_id "
    "GROUP BY `c``d`, `o'brien`",
    # a rollup of the tile, with a filter on a dimension holding a quote in its values
    "SELECT `o'brien`, sum(`unit price`) AS s "
    f"FROM {SCHEMA}.sales_x AS f JOIN {SCHEMA}.product AS p ON f.product_id = p.product_id "
    "WHERE `c``d` <> 'it\\'s' GROUP BY `o'brien`",
    # COUNT(DISTINCT) of a grouping column of the finer tile
    "SELECT `o'brien`, count(DISTINCT `c``d`) AS k "
    f"FROM {SCHEMA}.sales_x AS f JOIN {SCHEMA}.product AS p ON f.product_id = p.product_id "
    "GROUP BY `o'brien`",
]


def write(spark, location: Path, rows: list[tuple], ddl: str) -> None:
    """A Delta table with column mapping: Delta refuses a space in a column name without it."""
    spark.sql(
        f"CREATE TABLE delta.{identifier(str(location))} ({ddl}) USING delta TBLPROPERTIES ("
        "'delta.columnMapping.mode' = 'name', 'delta.minReaderVersion' = '2', "
        "'delta.minWriterVersion' = '5')"
    )
    spark.createDataFrame(rows, ddl).write.format("delta").mode("append").save(str(location))


@pytest.fixture(scope="module")
def ws(spark, warehouse: Path) -> Workspace:
    base = warehouse / "jobs" / SCHEMA
    sales = [(i % 4, ["a`b", "it's", "x y", None][i % 4], i / 2) for i in range(40)]
    products = [(i, ["O'Neil", "b`c", "d e", "plain"][i % 4]) for i in range(4)]
    write(spark, base / "sales", sales, "product_id INT, `c``d` STRING, `unit price` DOUBLE")
    write(spark, base / "product", products, "product_id INT, `o'brien` STRING")
    model = base / "model.yaml"
    model.write_text(MODEL.format(schema=SCHEMA, location=base), encoding="utf-8")
    workspace = Workspace(model, warehouse=str(warehouse))
    result = workspace.materialize()
    assert not result.failed, [r.error for r in result.failed]
    return workspace


def test_tiles_over_odd_names_are_built(ws: Workspace) -> None:
    entries = [e for e in ws.tiles() if e.status == "fresh"]
    assert len(entries) == 2


@pytest.mark.parametrize("sql", QUERIES)
def test_rewritten_queries_return_the_base_tables_rows(ws: Workspace, sql: str) -> None:
    result = ws.rewrite(sql)
    assert result.rewritten, result.explain
    assert all(m.startswith("mvlattice.odd__") for m in result.materializations)
    rewritten = ws.collect(ws.sql(result.sql))[1]
    original = ws.collect(ws.sql(sql))[1]
    assert as_multiset(rewritten) == as_multiset(original) and original
