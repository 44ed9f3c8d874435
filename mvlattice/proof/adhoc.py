"""Ad-hoc traffic: the queries dashboards and BI tools send — a finite set of templates (a
shape: which dimensions and measures, in which order, under which aliases, filtered how),
each bound anew to random literals, so every text is new while the shapes repeat.

A template picks a random subset of the star's dimensions and measures, random output and
table aliases, and filters of four literal kinds; a binding draws the literals: a dimension
value read from the data (`=`), an IN list of 1-20 such values, a date range on `the_date`
whose bounds fall on month starts (aligned to a month grain) or on any day (aligned to the day
grain only), and a LIMIT (after an ORDER BY of every output, so the answer is deterministic).
The range's alignment is drawn per binding, not per template: one template crosses the grain
guard a template cache must keep.

`foodmart_document` is FoodMart's model with the tiles that answer every such query in the
tile engine (a DATE day grain, wide and narrow tiles); `DOMAIN_SQL` reads the literals from the
data, and `AdhocTraffic` hands out new texts. Pure: no Spark; the caller runs `DOMAIN_SQL`.
What the tile engine leaves to Spark today is left out: AVG over DECIMAL measures (an exact
division), date_trunc outputs, TIMESTAMP literals and TIMESTAMP grains (see TILES).
"""

from __future__ import annotations

import copy
import datetime as dt
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from mvlattice.sql.quote import string

REPO = Path(__file__).resolve().parents[2]
VALUE, IN_LIST, ALIGNED, UNALIGNED, LIMIT = (
    "value",
    "in_list",
    "aligned_range",
    "unaligned_range",
    "limit",
)
LITERAL_KINDS = (VALUE, IN_LIST, ALIGNED, UNALIGNED, LIMIT)
RANGE = "range"  # a template's date-range filter; its binding is ALIGNED or UNALIGNED
MAX_IN = 20


@dataclass(frozen=True, slots=True)
class Table:
    key: str  # how dimensions and joins name it here
    name: str  # schema.table
    aliases: tuple[str, ...]  # the spellings a template picks from
    join: str = ""  # ON condition over {key} placeholders; "" for the fact table


@dataclass(frozen=True, slots=True)
class Dimension:
    name: str
    table: str  # a Table.key
    column: str
    many: bool = True  # a dozen values or more: IN lists over it seldom repeat


# FoodMart's star as the lattice of `foodmart_document` declares it; the fact table first.
TABLES = (
    Table("s", "foodmart.sales_fact_1997", ("s", "f", "sales", "fact")),
    Table("p", "foodmart.product", ("p", "prod", "product"), "{s}.product_id = {p}.product_id"),
    Table("t", "foodmart.time_by_day", ("t", "d", "cal"), "{s}.time_id = {t}.time_id"),
    Table(
        "pc",
        "foodmart.product_class",
        ("pc", "cls", "klass"),
        "{p}.product_class_id = {pc}.product_class_id",
    ),
)
PARENT = {"p": "s", "t": "s", "pc": "p"}  # the join path back to the fact table
DIMENSIONS = (
    Dimension("product_family", "pc", "product_family", many=False),
    Dimension("product_department", "pc", "product_department"),
    Dimension("product_category", "pc", "product_category"),
    Dimension("brand_name", "p", "brand_name"),
    Dimension("the_year", "t", "the_year", many=False),
    Dimension("quarter", "t", "quarter", many=False),
    Dimension("the_month", "t", "the_month"),
    Dimension("month_of_year", "t", "month_of_year"),
)
DATE = "{t}.the_date"  # TIMESTAMP, one per day
MEASURES = (
    "count(*)",
    "sum({s}.unit_sales)",
    "sum({s}.store_sales)",
    "sum({s}.store_cost)",
    "min({s}.unit_sales)",
    "max({s}.store_sales)",
)
ALIAS_WORDS = ("total", "n", "amt", "val", "metric", "x", "sales", "qty", "k", "dim")
# What reads the literals: dimension -> SQL over the base tables, one value per row.
DOMAIN_SQL = {
    d.name: f"select distinct {d.column} from {t.name} where {d.column} is not null"
    for d in DIMENSIONS
    for t in TABLES
    if t.key == d.table
} | {
    "the_date": "select min(t.the_date), max(t.the_date) from foodmart.sales_fact_1997 s "
    "join foodmart.time_by_day t on s.time_id = t.time_id"
}


@dataclass(frozen=True, slots=True)
class Domain:
    """The literals a binding draws from, read from the data."""

    values: Mapping[str, tuple[str, ...]]  # dimension -> SQL literals
    first_day: dt.date  # the fact's dates
    last_day: dt.date

    @staticmethod
    def of(found: Mapping[str, Sequence[Any]], first: dt.date, last: dt.date) -> Domain:
        """From Python values per dimension (as `DOMAIN_SQL` returns them)."""
        return Domain({k: tuple(_literal(v) for v in sorted(vs)) for k, vs in found.items()},
                      first, last)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Template:
    aliases: tuple[tuple[str, str], ...]  # (table key, alias) for the tables it joins
    keys: tuple[tuple[str, str], ...]  # (dimension name, output alias or "")
    measures: tuple[tuple[str, str], ...]  # (measure, output alias or "")
    filters: tuple[tuple[str, str], ...]  # (VALUE | IN_LIST | RANGE, dimension or "the_date")
    limit: bool


@dataclass(frozen=True, slots=True)
class Query:
    sql: str
    template: int  # its index in the traffic's templates
    kinds: frozenset[str]  # the literal kinds bound (LITERAL_KINDS)


def templates(rng: random.Random, count: int) -> tuple[Template, ...]:
    """`count` distinct random templates."""
    found: dict[Template, None] = {}
    while len(found) < count:
        found.setdefault(_template(rng), None)
    return tuple(found)


def _template(rng: random.Random) -> Template:
    dims = rng.sample(DIMENSIONS, rng.randint(0, 3))
    keys = [d.name for d in dims]
    filters = [(RANGE, "the_date")] if rng.random() < 0.75 else []
    if not filters:  # `=` and short lists alone would soon run out of new texts
        filters.append((IN_LIST, rng.choice([d for d in DIMENSIONS if d.many]).name))
    for d in rng.sample(DIMENSIONS, rng.randint(0, 2)):
        if d.name not in (name for _, name in filters):
            filters.append((rng.choice((VALUE, IN_LIST)), d.name))
    measures = rng.sample(MEASURES, rng.randint(1, 4))
    tables = _tables_for([*keys, *(name for _, name in filters)])
    limit = bool(keys) and rng.random() < 0.3
    return Template(
        aliases=tuple((t, rng.choice(_table(t).aliases)) for t in tables),
        keys=tuple((k, _alias(rng, limit)) for k in keys),
        measures=tuple((m, _alias(rng, limit)) for m in measures),
        filters=tuple(filters),
        limit=limit,
    )


def _alias(rng: random.Random, needed: bool) -> str:
    """An output alias, or none (Spark names the output itself) one time in four unless
    `needed`: the tile engine leaves a LIMIT ordered by an unnamed output to Spark."""
    word = f"{rng.choice(ALIAS_WORDS)}_{rng.randint(1, 99)}"
    return "" if rng.random() < 0.25 and not needed else word


def _tables_for(names: Sequence[str]) -> list[str]:
    """The table keys the columns need, with the joins back to the fact table, in star order."""
    needed = {"s"}
    for name in names:
        key: str | None = "t" if name == "the_date" else _dimension(name).table
        while key is not None and key not in needed:
            needed.add(key)
            key = PARENT.get(key)
    return [t.key for t in TABLES if t.key in needed]


def bind(template: Template, index: int, rng: random.Random, domain: Domain) -> Query:
    """The template's text with new random literals."""
    alias = dict(template.aliases)
    kinds: set[str] = set()
    outputs = [f"{_key_sql(k, alias)}{_as(a)}" for k, a in template.keys]
    outputs += [f"{m.format(**alias)}{_as(a)}" for m, a in template.measures]
    sql = f"select {', '.join(outputs)} from {_from(template, alias)}"
    conditions = [_condition(kind, name, alias, rng, domain, kinds) for kind, name in
                  template.filters]  # fmt: skip
    if conditions:
        sql += " where " + " and ".join(conditions)
    keys = [_key_sql(k, alias) for k, _ in template.keys]
    if keys:
        sql += " group by " + ", ".join(keys)
    if template.limit:  # every output ordered: one deterministic answer under the LIMIT
        order = ", ".join(
            f"{k} {rng.choice(('asc', 'desc'))}" for k in _order_terms(template, alias)
        )
        sql += f" order by {order} limit {rng.randint(1, 50)}"
        kinds.add(LIMIT)
    return Query(sql, index, frozenset(kinds))


def _order_terms(template: Template, alias: Mapping[str, str]) -> list[str]:
    """Every output, by its alias where it has one (the tile engine answers a LIMIT only under
    an ORDER BY of every output)."""
    keys = [a or _key_sql(k, alias) for k, a in template.keys]
    return keys + [a or m.format(**alias) for m, a in template.measures]


def _from(template: Template, alias: Mapping[str, str]) -> str:
    parts = []
    for key, name in template.aliases:
        table = _table(key)
        if not table.join:
            parts.append(f"{table.name} {name}")
        else:
            parts.append(f"join {table.name} {name} on {table.join.format(**alias)}")
    return " ".join(parts)


def _key_sql(key: str, alias: Mapping[str, str]) -> str:
    d = _dimension(key)
    return f"{alias[d.table]}.{d.column}"


def _as(name: str) -> str:
    return f" as {name}" if name else ""


def _condition(
    kind: str,
    name: str,
    alias: Mapping[str, str],
    rng: random.Random,
    domain: Domain,
    kinds: set[str],
) -> str:
    if kind == RANGE:
        aligned = rng.random() < 0.5
        kinds.add(ALIGNED if aligned else UNALIGNED)
        low, high = (_month_range if aligned else _day_range)(rng, domain)
        column = DATE.format(**alias)
        return f"{column} >= {_day(low)} and {column} < {_day(high)}"
    column, values = _key_sql(name, alias), domain.values[name]
    if kind == VALUE:
        kinds.add(VALUE)
        return f"{column} = {rng.choice(values)}"
    kinds.add(IN_LIST)
    chosen = rng.sample(values, rng.randint(1, min(MAX_IN, len(values))))
    return f"{column} in ({', '.join(chosen)})"


def _month_range(rng: random.Random, domain: Domain) -> tuple[dt.date, dt.date]:
    """[start of a month, start of a later month), within the data's months."""
    months = _months(domain.first_day, domain.last_day)
    i = rng.randrange(len(months))
    j = rng.randrange(i + 1, len(months) + 1)
    end = months[j] if j < len(months) else _next_month(months[-1])
    return months[i], end


def _day_range(rng: random.Random, domain: Domain) -> tuple[dt.date, dt.date]:
    """[a day, a later day), within the data's days (+1 for the last)."""
    days = (domain.last_day - domain.first_day).days + 1
    start = rng.randrange(days)
    end = rng.randrange(start + 1, days + 1)
    one = dt.timedelta(days=1)
    return domain.first_day + start * one, domain.first_day + end * one


def _months(first: dt.date, last: dt.date) -> list[dt.date]:
    out, month = [], first.replace(day=1)
    while month <= last:
        out.append(month)
        month = _next_month(month)
    return out


def _next_month(day: dt.date) -> dt.date:
    return dt.date(day.year + day.month // 12, day.month % 12 + 1, 1)


def _day(day: dt.date) -> str:
    """An ISO date as a string: Spark compares it with the TIMESTAMP as that day's midnight,
    and a DATE tile column with it as that day (a TIMESTAMP literal would send the rewritten
    query to Spark: the tile engine does not take casts of text to TIMESTAMP)."""
    return string(day.isoformat())


def _literal(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return string(str(value))
    return str(value)


def _table(key: str) -> Table:
    return next(t for t in TABLES if t.key == key)


def _dimension(name: str) -> Dimension:
    return next(d for d in DIMENSIONS if d.name == name)


# FoodMart-shaped literals for use without the data (tests, the parse-cost bench).
EXAMPLE_DOMAIN = Domain.of(
    {
        "product_family": ["Drink", "Food", "Non-Consumable"],
        "product_department": ["Alcoholic Beverages", "Dairy", "Snack Foods", "Produce"],
        "product_category": [f"Category {i}" for i in range(40)] + ["Beer and Wine"],
        "brand_name": [f"Brand {i}" for i in range(100)] + ["Nancy's", "Big Time"],
        "the_year": [1997, 1998],
        "quarter": ["Q1", "Q2", "Q3", "Q4"],
        "the_month": ["January", "February", "March", "April"],
        "month_of_year": list(range(1, 13)),
    },
    dt.date(1997, 1, 1),
    dt.date(1997, 12, 31),
)


class AdhocTraffic:
    """New query texts from `count` templates: a template at random, then new literals; a
    text seen before is drawn again (so no kept answer can serve it)."""

    def __init__(
        self, domain: Domain, seed: int, count: int = 64, literal_seed: int | None = None
    ) -> None:
        """`literal_seed`: other literals for the same templates (default: `seed`)."""
        self.domain = domain
        self.rng = random.Random(seed if literal_seed is None else literal_seed)
        self.templates = templates(random.Random(seed), count)
        self.seen: set[str] = set()

    def next(self) -> Query:
        for _ in range(1000):
            i = self.rng.randrange(len(self.templates))
            query = bind(self.templates[i], i, self.rng, self.domain)
            if query.sql not in self.seen:
                self.seen.add(query.sql)
                return query
        raise RuntimeError("no new text in 1000 draws: too few templates or literals")


# -- the model whose tiles answer every such query ----------------------------------------------
MEASURE_ELEMENTS = [
    {"agg": "count"},
    {"agg": "sum", "args": "unit_sales"},
    {"agg": "sum", "args": "store_sales"},
    {"agg": "sum", "args": "store_cost"},
    {"agg": "min", "args": "unit_sales"},
    {"agg": "max", "args": "store_sales"},
]
PRODUCT = ["product_family", "product_department", "product_category", "brand_name"]
CALENDAR = ["the_year", "quarter", "the_month", "month_of_year"]
# The day grain is a DATE (`sale_day`): the rewriter reads day-aligned bounds on `the_date`
# from it, and the tile engine compares a DATE with an ISO date string as Spark does. (A month
# grain, `date_trunc('MONTH', the_date)`, would answer month-aligned ranges too, but it is a
# TIMESTAMP, whose comparisons the tile engine leaves to Spark: not served here, today.)
TILES = (
    ["sale_day", *CALENDAR, *PRODUCT],  # any range, by day: ~80k rows
    [*CALENDAR, *PRODUCT],  # no range
    ["sale_day", "product_family"],  # narrow ones, chosen when they answer
    [*CALENDAR, "product_family", "product_department"],
)
LATTICE_SQL = [
    "select to_date(t.the_date) as sale_day",
    "from foodmart.sales_fact_1997 as s",
    "join foodmart.product as p using (product_id)",
    "join foodmart.time_by_day as t using (time_id)",
    "join foodmart.product_class as pc on p.product_class_id = pc.product_class_id",
]


def foodmart_document() -> dict[str, Any]:
    """models/foodmart.yaml with its lattice `star` replaced: a derived month column and the
    TILES declared (no planning), each with every measure the traffic asks for."""
    doc = copy.deepcopy(yaml.safe_load((REPO / "models" / "foodmart.yaml").read_text()))
    for schema in doc["schemas"]:
        for lattice in schema.get("lattices", []):
            if lattice["name"] == "star":
                lattice.update(sql=LATTICE_SQL, algorithm=False, auto=False)
                lattice["defaultMeasures"] = MEASURE_ELEMENTS
                lattice["tiles"] = [{"dimensions": list(dims)} for dims in TILES]
                lattice.pop("rowCountEstimate", None)
    return doc
