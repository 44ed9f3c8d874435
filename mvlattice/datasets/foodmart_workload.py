"""A varied, reproducible workload of star queries over FoodMart's sales (`generate`).

Each query joins the fact table to the time, product and product class tables it needs, groups
by one to three levels of the time and product hierarchies (or a store or promotion), may filter
on a coarser level, and aggregates one or two measures (SUM, COUNT, AVG, MIN, MAX; now and then
an exact distinct count of customers). Most ask coarse questions, some ask fine ones (product by
day, customers by month): a plan with a byte budget cannot answer everything, which is what its
coverage report is for. The same seed gives the same statements.
"""

from __future__ import annotations

import random

FACT = "foodmart.sales_fact_1997 s"
JOINS = {
    "t": "join foodmart.time_by_day t on s.time_id = t.time_id",
    "p": "join foodmart.product p on s.product_id = p.product_id",
    "pc": "join foodmart.product_class pc on p.product_class_id = pc.product_class_id",
}
COARSE = ("t.the_year", "t.quarter", "t.the_month", "pc.product_family", "pc.product_department")
MEDIUM = (
    "pc.product_category",
    "pc.product_subcategory",
    "t.month_of_year",
    "t.week_of_year",
    "s.store_id",
    "s.promotion_id",
    "p.low_fat",
)
FINE = ("p.brand_name", "p.product_name", "t.the_date", "s.customer_id")
MEASURES = (
    "sum(s.unit_sales)",
    "sum(s.store_sales)",
    "count(*)",
    "avg(s.store_cost)",
    "max(s.store_sales)",
    "min(s.unit_sales)",
)
FILTERS = (
    ("t.the_year", "t.the_year = 1997"),
    ("t.quarter", "t.quarter in ('Q1', 'Q2')"),
    ("pc.product_family", "pc.product_family = 'Food'"),
    ("t.month_of_year", "t.month_of_year <= 6"),
)


def generate(count: int = 150, seed: int = 21) -> list[str]:
    """`count` SELECT statements, the same for the same seed."""
    rng = random.Random(seed)
    return [_query(rng) for _ in range(count)]


def _query(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.6:
        groups = rng.sample(COARSE, rng.randint(1, 2))
    elif kind < 0.85:
        groups = [rng.choice(MEDIUM), rng.choice(COARSE)]
    else:
        groups = [rng.choice(FINE), rng.choice(COARSE)]
    groups = list(dict.fromkeys(groups))
    measures = rng.sample(MEASURES, rng.randint(1, 2))
    if rng.random() < 0.05:
        measures.append("count(distinct s.customer_id)")
    where = [sql for column, sql in FILTERS if rng.random() < 0.2 and column not in groups][:1]
    used = {c.split(".")[0] for c in groups + [w.split(" ")[0] for w in where]}
    if "pc" in used:
        used.add("p")
    joins = " ".join(JOINS[a] for a in ("t", "p", "pc") if a in used)
    select = ", ".join([*groups, *measures])
    clause = f" where {' and '.join(where)}" if where else ""
    return f"select {select} from {FACT} {joins}{clause} group by {', '.join(groups)}".replace(
        "  ", " "
    )
