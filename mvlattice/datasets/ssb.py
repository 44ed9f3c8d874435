"""The Star Schema Benchmark (O'Neil, O'Neil, Chen) generated deterministically with Spark.

Row counts follow the specification: lineorder 6,000,000 x SF, customer 30,000 x SF, supplier
2,000 x SF, part 200,000 x (1 + floor(log2 SF)), date 2,556 days from 1992-01-01. Column domains
follow the specification (regions, nations, cities, brands, categories, discounts 0-10,
quantities 1-50). Values come from hashes of the row number, so the same scale factor always
gives the same data, on any number of cores.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mvlattice.settings import join_location
from mvlattice.sql.quote import path_identifier, string

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

MODEL = Path(__file__).resolve().parents[2] / "models" / "ssb.yaml"
SCHEMA_NAME = "ssb"
DATE_ROWS = 2556

NATIONS = (  # TPC-H's 25 nations with their regions
    ("ALGERIA", "AFRICA"),
    ("ARGENTINA", "AMERICA"),
    ("BRAZIL", "AMERICA"),
    ("CANADA", "AMERICA"),
    ("EGYPT", "MIDDLE EAST"),
    ("ETHIOPIA", "AFRICA"),
    ("FRANCE", "EUROPE"),
    ("GERMANY", "EUROPE"),
    ("INDIA", "ASIA"),
    ("INDONESIA", "ASIA"),
    ("IRAN", "MIDDLE EAST"),
    ("IRAQ", "MIDDLE EAST"),
    ("JAPAN", "ASIA"),
    ("JORDAN", "MIDDLE EAST"),
    ("KENYA", "AFRICA"),
    ("MOROCCO", "AFRICA"),
    ("MOZAMBIQUE", "AFRICA"),
    ("PERU", "AMERICA"),
    ("CHINA", "ASIA"),
    ("ROMANIA", "EUROPE"),
    ("SAUDI ARABIA", "MIDDLE EAST"),
    ("VIETNAM", "ASIA"),
    ("RUSSIA", "EUROPE"),
    ("UNITED KINGDOM", "EUROPE"),
    ("UNITED STATES", "AMERICA"),
)
SEGMENTS = ("AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD")
PRIORITIES = ("1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECI", "5-LOW")
SHIPMODES = ("AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK")
COLORS = (
    "almond",
    "antique",
    "aquamarine",
    "azure",
    "beige",
    "bisque",
    "black",
    "blanched",
    "blue",
    "blush",
    "brown",
    "burlywood",
    "burnished",
    "chartreuse",
    "chiffon",
)
CONTAINERS = (
    "SM CASE",
    "SM BOX",
    "MED BAG",
    "MED BOX",
    "LG CASE",
    "LG BOX",
    "JUMBO PACK",
    "WRAP CASE",
)
TYPES = (
    "STANDARD ANODIZED TIN",
    "SMALL PLATED BRASS",
    "MEDIUM BURNISHED COPPER",
    "LARGE BRUSHED STEEL",
    "ECONOMY POLISHED NICKEL",
    "PROMO PLATED TIN",
)


@dataclass(frozen=True, slots=True)
class SsbSizes:
    lineorder: int
    customer: int
    supplier: int
    part: int
    date: int = DATE_ROWS


def sizes(sf: float) -> SsbSizes:
    part_factor = 1 + (int(math.log2(sf)) if sf >= 1 else 0)
    return SsbSizes(
        int(6_000_000 * sf),
        max(1, int(30_000 * sf)),
        max(1, int(2_000 * sf)),
        max(1, int(200_000 * part_factor)) if sf >= 1 else max(1, int(200_000 * sf)),
    )


def generate(
    spark: SparkSession, warehouse: str, sf: float, force: bool = False, progress=print
) -> dict[str, int]:  # any print-like callable
    """Write the five SSB tables as Delta under <warehouse>/ssb_sf<SF>/; returns row counts."""
    n = sizes(sf)
    base = location(warehouse, sf)
    tables = {
        "date": lambda: _dates(spark),
        "customer": lambda: _customers(spark, n.customer),
        "supplier": lambda: _suppliers(spark, n.supplier),
        "part": lambda: _parts(spark, n.part),
        "lineorder": lambda: _lineorders(spark, n),
    }
    counts = {}
    for name, build in tables.items():
        path = join_location(base, name)
        expected = getattr(n, name)
        if not force and _rows(spark, path) == expected:
            progress(f"  {name:<10} {expected:>12,} rows (already generated)")
        else:
            build().write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(
                path
            )
            progress(f"  {name:<10} {expected:>12,} rows")
        counts[name] = expected
    return counts


def folder(sf: float) -> str:
    """The warehouse folder of a scale factor: ssb_sf1, ssb_sf10, ssb_sf0_01."""
    return f"ssb_sf{sf:g}".replace(".", "_")


def location(warehouse: str, sf: float) -> str:
    return join_location(warehouse, folder(sf))


def model_file(sf: float, directory: str | os.PathLike[str]) -> Path:
    """`models/ssb.yaml` pointed at the data of scale factor `sf`, written into `directory`."""
    text = MODEL.read_text(encoding="utf-8")
    path = Path(directory) / f"{folder(sf)}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace("location: ssb_sf1", f"location: {folder(sf)}"), "utf-8")
    return path


def _rows(spark: SparkSession, path: str) -> int | None:
    try:
        return int(spark.sql(f"SELECT count(*) FROM delta.{path_identifier(path)}").collect()[0][0])
    except Exception:  # noqa: BLE001 - missing or unreadable: generate again
        return None


def _pick(values: tuple[str, ...], hashed: str) -> str:
    """SQL choosing one of `values` by a non-negative integer expression."""
    arr = ", ".join(string(v) for v in values)
    return f"element_at(array({arr}), CAST(pmod({hashed}, {len(values)}) AS INT) + 1)"


def _h(seed: int, col: str = "id") -> str:
    return f"abs(xxhash64({col}, {seed}))"


def _nation_columns(prefix: str, seed: int) -> tuple[str, str, str]:
    """City, nation and region: one nation per row, its region, and one of its ten cities
    (the spec's city is the nation's first nine characters, padded, plus a digit)."""
    nations = _pick(tuple(n for n, _ in NATIONS), _h(seed))
    regions = _pick(tuple(r for _, r in NATIONS), _h(seed))
    city = (
        f"concat(rpad(substr({nations}, 1, 9), 9, ' '), CAST(pmod({_h(seed + 1)}, 10) AS STRING))"
    )
    return (
        f"{city} AS {prefix}_city",
        f"{nations} AS {prefix}_nation",
        f"{regions} AS {prefix}_region",
    )


def _customers(spark: SparkSession, rows: int) -> DataFrame:
    return spark.range(1, rows + 1).selectExpr(
        "CAST(id AS INT) AS c_custkey",
        "concat('Customer#', lpad(CAST(id AS STRING), 9, '0')) AS c_name",
        f"substr(sha1(CAST({_h(11)} AS STRING)), 1, 20) AS c_address",
        *_nation_columns("c", 12),
        f"concat(CAST(10 + pmod({_h(13)}, 25) AS STRING), '-', "
        f"lpad(CAST(pmod({_h(14)}, 1000) AS STRING), 3, '0')) AS c_phone",
        f"{_pick(SEGMENTS, _h(15))} AS c_mktsegment",
    )


def _suppliers(spark: SparkSession, rows: int) -> DataFrame:
    return spark.range(1, rows + 1).selectExpr(
        "CAST(id AS INT) AS s_suppkey",
        "concat('Supplier#', lpad(CAST(id AS STRING), 9, '0')) AS s_name",
        f"substr(sha1(CAST({_h(21)} AS STRING)), 1, 20) AS s_address",
        *_nation_columns("s", 22),
        f"concat(CAST(10 + pmod({_h(23)}, 25) AS STRING), '-', "
        f"lpad(CAST(pmod({_h(24)}, 1000) AS STRING), 3, '0')) AS s_phone",
    )


def _parts(spark: SparkSession, rows: int) -> DataFrame:
    mfgr = f"CAST(pmod({_h(31)}, 5) + 1 AS INT)"
    category = f"CAST(pmod({_h(32)}, 5) + 1 AS INT)"
    brand = f"CAST(pmod({_h(33)}, 40) + 1 AS INT)"
    return spark.range(1, rows + 1).selectExpr(
        "CAST(id AS INT) AS p_partkey",
        f"concat_ws(' ', {_pick(COLORS, _h(34))}, {_pick(COLORS, _h(35))}) AS p_name",
        f"concat('MFGR#', {mfgr}) AS p_mfgr",
        f"concat('MFGR#', {mfgr}, {category}) AS p_category",
        f"concat('MFGR#', {mfgr}, {category}, lpad(CAST({brand} AS STRING), 2, '0')) AS p_brand1",
        f"{_pick(COLORS, _h(36))} AS p_color",
        f"{_pick(TYPES, _h(37))} AS p_type",
        f"CAST(pmod({_h(38)}, 50) + 1 AS INT) AS p_size",
        f"{_pick(CONTAINERS, _h(39))} AS p_container",
    )


def _dates(spark: SparkSession) -> DataFrame:
    frame = spark.range(0, DATE_ROWS).selectExpr("date_add(DATE'1992-01-01', CAST(id AS INT)) AS d")
    return frame.selectExpr(
        "CAST(date_format(d, 'yyyyMMdd') AS INT) AS d_datekey",
        "date_format(d, 'MMMM d, yyyy') AS d_date",
        "date_format(d, 'EEEE') AS d_dayofweek",
        "date_format(d, 'MMMM') AS d_month",
        "year(d) AS d_year",
        "year(d) * 100 + month(d) AS d_yearmonthnum",
        "date_format(d, 'MMMyyyy') AS d_yearmonth",
        "dayofweek(d) AS d_daynuminweek",
        "dayofmonth(d) AS d_daynuminmonth",
        "dayofyear(d) AS d_daynuminyear",
        "month(d) AS d_monthnuminyear",
        "weekofyear(d) AS d_weeknuminyear",
        "CASE WHEN month(d) IN (11, 12) THEN 'Christmas' WHEN month(d) IN (6, 7, 8) "
        "THEN 'Summer' WHEN month(d) IN (3, 4, 5) THEN 'Spring' ELSE 'Winter' END "
        "AS d_sellingseason",
        "dayofweek(d) = 7 AS d_lastdayinweekfl",
        "d = last_day(d) AS d_lastdayinmonthfl",
        "(month(d) = 12 AND dayofmonth(d) = 25) OR (month(d) = 1 AND dayofmonth(d) = 1) "
        "AS d_holidayfl",
        "dayofweek(d) BETWEEN 2 AND 6 AS d_weekdayfl",
    )


def _lineorders(spark: SparkSession, n: SsbSizes) -> DataFrame:
    # About four lines per order, as dbgen makes (1-7); keys are uniform over each dimension.
    order_day = f"CAST(pmod({_h(41, 'orderkey')}, {DATE_ROWS - 1}) AS INT)"
    frame = spark.range(0, n.lineorder).selectExpr(
        "id",
        "CAST(floor(id / 4) + 1 AS BIGINT) AS orderkey",
        "CAST(pmod(id, 4) + 1 AS INT) AS linenumber",
    )
    return frame.selectExpr(
        "orderkey AS lo_orderkey",
        "linenumber AS lo_linenumber",
        f"CAST(pmod({_h(42, 'orderkey')}, {n.customer}) + 1 AS INT) AS lo_custkey",
        f"CAST(pmod({_h(43)}, {n.part}) + 1 AS INT) AS lo_partkey",
        f"CAST(pmod({_h(44)}, {n.supplier}) + 1 AS INT) AS lo_suppkey",
        f"CAST(date_format(date_add(DATE'1992-01-01', {order_day}), 'yyyyMMdd') AS INT) "
        "AS lo_orderdate",
        f"{_pick(PRIORITIES, _h(45, 'orderkey'))} AS lo_orderpriority",
        "0 AS lo_shippriority",
        f"CAST(pmod({_h(46)}, 50) + 1 AS INT) AS lo_quantity",
        f"CAST((pmod({_h(46)}, 50) + 1) * (90000 + pmod({_h(47)}, 110001)) / 100 AS BIGINT) "
        "AS lo_extendedprice",
        f"CAST(pmod({_h(48, 'orderkey')}, 50000000) AS BIGINT) AS lo_ordtotalprice",
        f"CAST(pmod({_h(49)}, 11) AS INT) AS lo_discount",
        f"CAST((pmod({_h(46)}, 50) + 1) * (90000 + pmod({_h(47)}, 110001)) / 100 "
        f"* (100 - pmod({_h(49)}, 11)) / 100 AS BIGINT) AS lo_revenue",
        f"CAST(6 * (90000 + pmod({_h(47)}, 110001)) / 1000 AS BIGINT) AS lo_supplycost",
        f"CAST(pmod({_h(50)}, 9) AS INT) AS lo_tax",
        f"CAST(date_format(date_add(DATE'1992-01-01', {order_day} + 30 + "
        f"CAST(pmod({_h(51)}, 61) AS INT)), 'yyyyMMdd') AS INT) AS lo_commitdate",
        f"{_pick(SHIPMODES, _h(52))} AS lo_shipmode",
    )
