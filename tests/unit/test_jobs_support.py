"""A small shop model for the jobs unit tests (columns declared, so no Spark is needed).
No tests here: the helpers are imported by the test_jobs_* modules."""

from __future__ import annotations

import textwrap
from pathlib import Path

from mvlattice.model.loader import Model, load_model

MODEL = """
version: "1.0"
defaultSchema: shop
schemas:
  - name: shop
    type: delta
    location: shop
    tables:
      - name: sales
        columns: [product_id, time_id, units, amount]
      - name: product
        columns: [product_id, brand, category]
        primaryKey: [product_id]
      - name: time
        columns: [time_id, the_year, the_month]
        primaryKey: [time_id]
    lattices:
      - name: sales_star
        sql:
          - select 1 from shop.sales as s
          - join shop.product as p using (product_id)
          - join shop.time as t using (time_id)
        algorithm: false
        refresh: {cron: "0 3 * * 1-5"}
        maxStaleness: 10m
        defaultMeasures:
          - agg: count
          - {agg: sum, args: units}
          - {agg: avg, args: units}
          - {agg: min, args: amount}
        tiles:
          - dimensions: [brand, the_year, the_month]
          - dimensions: [the_year]
          - dimensions: []
          - dimensions: [category]
            measures: [{agg: count, args: [brand], distinct: true}, {agg: count}]
  - name: adhoc
    materializations:
      - view: sales_by_year
        table: sales_by_year_mv
        sql: >
          with y as (select time_id, the_year from shop.time)
          select y.the_year, sum(s.amount) as amount from shop.sales s
          join y on s.time_id = y.time_id group by y.the_year
        refresh: {cron: "30 2 1 * 0"}
"""


def shop_model(tmp_path: Path) -> Model:
    path = tmp_path / "shop.yaml"
    path.write_text(textwrap.dedent(MODEL), encoding="utf-8")
    return load_model(path, str(tmp_path / "warehouse"))
