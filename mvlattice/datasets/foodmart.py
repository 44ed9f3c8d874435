"""FoodMart (Maven Central: net.hydromatic:foodmart-data-json) as Delta tables.

The artifact is fetched once with Maven into the local Maven repository; afterwards loading
works offline. Row counts are checked against the published ones after every load.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mvlattice.errors import DataError, SetupError
from mvlattice.jars import Say, run_maven, size_of
from mvlattice.settings import join_location
from mvlattice.sql.quote import path_identifier
from mvlattice.sql.quote import string as literal

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

ARTIFACT = ("net.hydromatic", "foodmart-data-json", "0.4")
SCHEMA_NAME = "foodmart"


@dataclass(frozen=True, slots=True)
class FoodmartTable:
    name: str
    ddl: str  # Spark schema DDL: explicit types, so nothing depends on JSON inference
    rows: int


TABLES = (
    FoodmartTable(
        "sales_fact_1997",
        "product_id INT, time_id INT, customer_id INT, "
        "promotion_id INT, store_id INT, store_sales DECIMAL(10,4), "
        "store_cost DECIMAL(10,4), unit_sales DECIMAL(10,4)",
        86_837,
    ),
    FoodmartTable(
        "time_by_day",
        "time_id INT, the_date TIMESTAMP, the_day STRING, "
        "the_month STRING, the_year INT, day_of_month INT, week_of_year INT, "
        "month_of_year INT, quarter STRING, fiscal_period STRING",
        730,
    ),
    FoodmartTable(
        "product",
        "product_class_id INT, product_id INT, brand_name STRING, "
        "product_name STRING, SKU BIGINT, SRP DECIMAL(10,4), gross_weight DOUBLE, "
        "net_weight DOUBLE, recyclable_package BOOLEAN, low_fat BOOLEAN, "
        "units_per_case INT, cases_per_pallet INT, shelf_width DOUBLE, "
        "shelf_height DOUBLE, shelf_depth DOUBLE",
        1_560,
    ),
    FoodmartTable(
        "product_class",
        "product_class_id INT, product_subcategory STRING, "
        "product_category STRING, product_department STRING, "
        "product_family STRING",
        110,
    ),
    FoodmartTable(
        "customer",
        "customer_id INT, account_num BIGINT, lname STRING, "
        "fname STRING, mi STRING, address1 STRING, address2 STRING, address3 STRING, "
        "address4 STRING, city STRING, state_province STRING, postal_code STRING, "
        "country STRING, customer_region_id INT, phone1 STRING, phone2 STRING, "
        "birthdate DATE, marital_status STRING, yearly_income STRING, gender STRING, "
        "total_children INT, num_children_at_home INT, education STRING, "
        "date_accnt_opened DATE, member_card STRING, occupation STRING, "
        "houseowner STRING, num_cars_owned INT, fullname STRING",
        10_281,
    ),
    FoodmartTable(
        "store",
        "store_id INT, store_type STRING, region_id INT, "
        "store_name STRING, store_number INT, store_street_address STRING, "
        "store_city STRING, store_state STRING, store_postal_code STRING, "
        "store_country STRING, store_manager STRING, store_phone STRING, "
        "store_fax STRING, first_opened_date TIMESTAMP, last_remodel_date TIMESTAMP, "
        "store_sqft INT, grocery_sqft INT, frozen_sqft INT, meat_sqft INT, "
        "coffee_bar BOOLEAN, video_store BOOLEAN, salad_bar BOOLEAN, "
        "prepared_food BOOLEAN, florist BOOLEAN",
        25,
    ),
    FoodmartTable(
        "promotion",
        "promotion_id INT, promotion_district_id INT, "
        "promotion_name STRING, media_type STRING, cost DECIMAL(10,4), "
        "start_date TIMESTAMP, end_date TIMESTAMP",
        1_864,
    ),
)


def declared_types() -> dict[tuple[str, str], str]:
    """(foodmart.table, column) -> Spark type, from TABLES: what the Delta logs would tell,
    for a model whose columns are written in (rewriting without the data)."""
    return {
        (f"{SCHEMA_NAME}.{t.name}", name.lower()): kind
        for t in TABLES
        for name, kind in (c.split(maxsplit=1) for c in re.split(r",\s*(?![^(]*\))", t.ddl))
    }


def with_columns(document: dict) -> dict:
    """A FoodMart model document with each table's `columns` written in from TABLES, so it
    loads without the data (in place; returned for chaining)."""
    names = {t.name: [c.split()[0] for c in re.split(r",(?![^(]*\))", t.ddl)] for t in TABLES}
    for schema in document["schemas"]:
        for table in schema.get("tables", []):
            table["columns"] = names[table["name"]]
    return document


@dataclass(frozen=True, slots=True)
class LoadedTable:
    name: str
    location: str
    rows: int
    skipped: bool  # already there with the right row count


def artifact_jar() -> Path:
    group, name, version = ARTIFACT
    return (
        Path.home()
        / ".m2"
        / "repository"
        / group.replace(".", "/")
        / name
        / version
        / f"{name}-{version}.jar"
    )


def ensure_artifact(say: Say | None = None) -> Path:
    """The data jar from the local Maven repository, fetched from Maven Central if missing."""
    say = say or _quiet
    jar = artifact_jar()
    if jar.is_file():
        say(f"already in {jar} ({size_of([jar])})")
        return jar
    mvn = shutil.which("mvn")
    if mvn is None:
        raise SetupError(f"FoodMart data is not in {jar} and Maven ('mvn') is not on PATH")
    coordinates = ":".join(ARTIFACT)
    say(f"fetching {coordinates} from Maven Central with Maven")
    code, output = run_maven([mvn, "-q", "-B", "dependency:get", f"-Dartifact={coordinates}"], say)
    if code != 0 or not jar.is_file():
        tail = " | ".join(output.strip().splitlines()[-3:])
        raise SetupError(f"could not fetch {coordinates} with Maven: {tail}")
    say(f"{size_of([jar])} in {jar}")
    return jar


def load(
    spark: SparkSession, warehouse: str, force: bool = False, progress: Say | None = None
) -> tuple[LoadedTable, ...]:
    """Load every FoodMart table into <warehouse>/foodmart/<table> and check its row count;
    `progress` hears a line per table: its rows and the seconds it took."""
    say = progress or _quiet
    jar = ensure_artifact(say)
    loaded = []
    with tempfile.TemporaryDirectory(prefix="mvlattice-foodmart-") as tmp:
        for table in TABLES:
            began = time.monotonic()
            location = join_location(warehouse, SCHEMA_NAME, table.name)
            if not force and _has_rows(spark, location, table.rows):
                loaded.append(LoadedTable(table.name, location, table.rows, True))
                say(f"{_table_line(table.name, table.rows, began)} (already loaded)")
                continue
            source = _extract(jar, table.name, Path(tmp))
            rows = _write(spark, source, table, location)
            loaded.append(LoadedTable(table.name, location, rows, False))
            say(_table_line(table.name, rows, began))
    return tuple(loaded)


def _table_line(name: str, rows: int, began: float) -> str:
    return f"{name:<16} {rows:>8,} rows  {time.monotonic() - began:5.1f} s"


def _quiet(_line: str) -> None:
    pass


def _extract(jar: Path, name: str, folder: Path) -> Path:
    target = folder / f"{name}.json"
    with (
        zipfile.ZipFile(jar) as archive,
        archive.open(f"{name}.json") as src,
        target.open("wb") as dst,
    ):
        shutil.copyfileobj(src, dst)
    return target


def _write(spark: SparkSession, source: Path, table: FoodmartTable, location: str) -> int:
    frame = (
        spark.read.schema(table.ddl)
        .option("mode", "FAILFAST")
        .option("timestampFormat", "yyyy-MM-dd HH:mm:ss[.S]")
        .json(str(source))
    )
    # Delta's overwrite is one atomic commit: readers never see a half-loaded table.
    frame.write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(location)
    rows = spark.sql(f"SELECT count(*) FROM delta.{path_identifier(location)}").collect()[0][0]
    if rows != table.rows:
        raise DataError(
            f"FoodMart table {table.name} has {rows:,} rows after loading, expected {table.rows:,}"
        )
    return int(rows)


def _has_rows(spark: SparkSession, location: str, expected: int) -> bool:
    from mvlattice.delta.columns import is_local_delta_table

    if "://" not in location and not is_local_delta_table(location):
        return False
    try:
        return (
            spark.sql(f"SELECT count(*) FROM delta.{path_identifier(location)}").collect()[0][0]
            == expected
        )
    except Exception:  # noqa: BLE001 - unreadable means "load it again"
        return False


__all__ = ["TABLES", "declared_types", "ensure_artifact", "literal", "load", "with_columns"]
