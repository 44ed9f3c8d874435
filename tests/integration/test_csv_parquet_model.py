"""A model over a Parquet fact table and CSV dimension tables that lists no `columns:` (issue 36):
it validates, its tiles build, and its tile-answerable queries are rewritten onto them with
Spark's answer on the base tables. The columns come from Spark's schema of each source, read
once when the model is loaded and kept on the model."""

from __future__ import annotations

import json
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from mvlattice.cli.main import main
from mvlattice.model.loader import known_columns
from mvlattice.workspace import Workspace

pytestmark = pytest.mark.spark

FACT, DIMS = "csvpq_shop", "csvpq_dims"  # schema names no other test uses
MODEL = """
version: "1.0"
defaultSchema: {fact}
schemas:
  - name: {fact}
    type: parquet
    location: {root}/fact
    tables:
      - name: orders
        notNull: [product_id, customer_id]
        foreignKeys:
          - {{columns: [product_id], references: {dims}.products, referencedColumns: [product_id]}}
          - {{columns: [customer_id], references: {dims}.customers,
              referencedColumns: [customer_id]}}
  - name: {dims}
    type: csv
    location: {root}/dims
    tables:
      - name: products
        primaryKey: [product_id]
      - name: customers
        primaryKey: [customer_id]
    lattices:
      - name: csvpq_star
        sql:
          - select 1 from {fact}.orders as o
          - join {dims}.products as p using (product_id)
          - join {dims}.customers as c using (customer_id)
        algorithm: false
        defaultMeasures: [{{agg: count}}, {{agg: sum, args: amount}}, {{agg: max, args: amount}}]
        tiles:
          - dimensions: [category, region]
          - dimensions: [category]
"""
QUERIES = (
    f"select p.category, count(*) as n, sum(o.amount) as amount from {FACT}.orders o "
    f"join {DIMS}.products p on o.product_id = p.product_id group by p.category",
    f"select c.region, max(o.amount) as top from orders o join {DIMS}.customers c "
    f"using (customer_id) join {DIMS}.products p using (product_id) "
    f"where p.category = 'tools' group by c.region",
    f"select count(*) as n from {FACT}.orders o join {DIMS}.products p "
    f"on o.product_id = p.product_id where p.category in ('tools', 'toys')",
)


@pytest.fixture(scope="module")
def model(spark, warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = warehouse / "csv_parquet_model"
    orders = [(i, i % 6, i % 4, (i * 37 % 100) / 4) for i in range(60)]
    spark.createDataFrame(orders, "order_id INT, product_id INT, customer_id INT, amount DOUBLE") \
        .write.mode("overwrite").parquet(str(root / "fact" / "orders"))  # fmt: skip
    (root / "dims" / "products").mkdir(parents=True, exist_ok=True)
    (root / "dims" / "products" / "part-0.csv").write_text(
        "product_id,category,brand\n"
        + "".join(f"{i},{('tools', 'toys', 'food')[i % 3]},b{i}\n" for i in range(6))
    )
    (root / "dims" / "customers").mkdir(parents=True, exist_ok=True)
    (root / "dims" / "customers" / "part-0.csv").write_text(
        "customer_id,region\n0,north\n1,south\n2,north\n3,east\n"
    )
    path = tmp_path_factory.mktemp("csv_parquet") / "shop.yaml"
    path.write_text(textwrap.dedent(MODEL.format(fact=FACT, dims=DIMS, root=root)))
    return path


@pytest.fixture(scope="module")
def ws(model: Path, warehouse: Path) -> Workspace:
    workspace = Workspace(model, warehouse=str(warehouse))
    built = workspace.materialize()
    assert built.ok, built.to_json()
    return workspace


def test_the_model_knows_each_sources_columns(ws: Workspace) -> None:
    columns = {t.qualified_name: known_columns(t) for t in ws.model.tables}
    assert columns == {
        f"{FACT}.orders": ("order_id", "product_id", "customer_id", "amount"),
        f"{DIMS}.products": ("product_id", "category", "brand"),
        f"{DIMS}.customers": ("customer_id", "region"),
    }


def test_validate_reports_nothing_wrong(model: Path, warehouse: Path, capsys) -> None:
    assert main(["validate", str(model), "--warehouse", str(warehouse), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] and report["lattices"][0]["columns"] == 9  # keys once per side
    assert main(["validate", str(model), "--warehouse", str(warehouse), "--data"]) == 0


@pytest.mark.parametrize("sql", QUERIES)
def test_tile_queries_are_rewritten_and_answer_as_spark(ws: Workspace, sql: str) -> None:
    rewritten = ws.query(sql)
    assert rewritten.rewrite.rewritten, [e.message for e in ws.rewrite(sql).explain]
    assert all(m.startswith("mvlattice.") for m in rewritten.rewrite.materializations)
    base = ws.query(sql, rewrite=False)
    assert not base.rewrite.rewritten
    assert rewritten.columns == base.columns
    assert Counter(rewritten.rows) == Counter(base.rows)
    assert base.rows  # the data answers something
