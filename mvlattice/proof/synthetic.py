"""A small dedicated star for the differential tester: a few hundred fact rows with NULLs in
dimensions and measures, exact duplicate rows, dimension rows no fact references (empty
groups), a snowflake level, and a nullable key to a table outside the lattice.

Deterministic: the rows come from a fixed seed.
"""

from __future__ import annotations

import datetime
import random
from decimal import Decimal

SCHEMA = "difft"

TABLES: dict[str, str] = {
    "sales": "id INT, cust_id INT, prod_id INT, day_id INT, promo_id INT, qty INT, "
    "price DOUBLE, amount DECIMAL(12,2), channel STRING",
    "cust": "cust_id INT, city STRING, segment STRING",
    "prod": "prod_id INT, brand STRING, cls_id INT, size INT",
    "cls": "cls_id INT, family STRING, dept STRING",
    "day": "day_id INT, yr INT, mon INT, sold_on DATE, sold_at TIMESTAMP",
    "promo": "promo_id INT, media STRING",
}

# Every FK the data honours is declared; promo_id is nullable, so `promo` is not in the
# lattice (an inner join to it would drop rows) and queries reach it by joining back.
MODEL = f"""
version: "1.0"
defaultSchema: {SCHEMA}
schemas:
  - name: {SCHEMA}
    type: delta
    location: {SCHEMA}
    tables:
      - name: sales
        notNull: [cust_id, prod_id, day_id]
        foreignKeys:
          - {{columns: [cust_id], references: cust}}
          - {{columns: [prod_id], references: prod}}
          - {{columns: [day_id], references: day}}
          - {{columns: [promo_id], references: promo}}
      - name: cust
        primaryKey: [cust_id]
      - name: prod
        primaryKey: [prod_id]
        notNull: [cls_id]
        foreignKeys:
          - {{columns: [cls_id], references: cls}}
      - name: cls
        primaryKey: [cls_id]
      - name: day
        primaryKey: [day_id]
      - name: promo
        primaryKey: [promo_id]
    lattices:
      - name: difftest
        sql:
          - select s.qty * s.amount as revenue
          - from "{SCHEMA}"."sales" as s
          - join "{SCHEMA}"."cust" as c on s.cust_id = c.cust_id
          - join "{SCHEMA}"."prod" as p on s.prod_id = p.prod_id
          - join "{SCHEMA}"."cls" as k on p.cls_id = k.cls_id
          - join "{SCHEMA}"."day" as d on s.day_id = d.day_id
        algorithm: false
        rowCountEstimate: 400
        defaultMeasures:
          - agg: count
"""

CITIES = ("Austin", "Boston", "Chicago", "Denver", None)
SEGMENTS = ("retail", "corporate", "home")
BRANDS = ("Acme", "Bolt", "Crest", "Dyna", None)
FAMILIES = ("Food", "Drink", None)
CHANNELS = ("web", "store", "phone", None)


def rows(seed: int = 7) -> dict[str, list[tuple]]:
    rng = random.Random(seed)
    cust = [(i, rng.choice(CITIES), rng.choice(SEGMENTS)) for i in range(1, 41)]
    cls = [(i, FAMILIES[i % 3], f"dept{i % 2}") for i in range(1, 8)]
    prod = [
        (i, rng.choice(BRANDS), rng.randint(1, 7), rng.choice((1, 2, 3, None)))
        for i in range(1, 31)
    ]
    start = datetime.date(2023, 11, 1)
    day = [
        (
            i,
            (start + datetime.timedelta(days=7 * i)).year,
            (start + datetime.timedelta(days=7 * i)).month,
            None if i == 13 else start + datetime.timedelta(days=7 * i),
            # a time of day that varies (hour, minute, second) for the time-grain rollups;
            # NULL on another day than sold_on's
            None
            if i == 29
            else datetime.datetime(2023, 11, 1, 0, 0, 0)
            + datetime.timedelta(
                days=7 * i, hours=(5 * i) % 24, minutes=(37 * i) % 60, seconds=(11 * i) % 60
            ),
        )
        for i in range(1, 41)
    ]
    promo = [(i, rng.choice(("tv", "radio", None))) for i in range(1, 6)]
    sales = []
    for i in range(1, 361):
        sales.append(
            (
                i,
                rng.randint(1, 32),  # customers 33-40 never buy: empty groups
                rng.randint(1, 26),  # products 27-30 never sell
                rng.randint(1, 36),  # days 37-40 have no sales
                rng.choice((1, 2, 3, 4, None)),
                rng.choice((1, 2, 3, 5, 8, None)),
                rng.choice((0.5, 1.25, 2.75, 10.1, 99.99, None)),
                rng.choice((Decimal("1.50"), Decimal("20.00"), Decimal("3.33"), None)),
                rng.choice(CHANNELS),
            )
        )
    sales += [sales[i] for i in range(0, 360, 12)]  # exact duplicates, no key on the fact
    return {"sales": sales, "cust": cust, "prod": prod, "cls": cls, "day": day, "promo": promo}


def load(spark, warehouse: str) -> None:  # a SparkSession
    """Write the tables as Delta under <warehouse>/difft/<table>, unless already there with
    the same columns and rows (a rewrite would make every view built from them stale)."""
    from pathlib import Path

    from mvlattice.settings import join_location

    for name, data in rows().items():
        location = join_location(warehouse, SCHEMA, name)
        present = (Path(location) / "_delta_log").is_dir()
        columns = [c.split(" ")[0] for c in TABLES[name].split(", ")]
        if present:
            frame = spark.read.format("delta").load(location)
            if frame.columns == columns and frame.count() == len(data):
                continue
        frame = spark.createDataFrame(data, TABLES[name])
        frame.coalesce(1).write.format("delta").mode("overwrite").option(
            "overwriteSchema", "true"
        ).save(location)
