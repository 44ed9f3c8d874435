"""The model loader: good models load; every documented problem is reported with its path."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from mvlattice.errors import ModelError
from mvlattice.model.loader import load_model

SCHEMA = """
version: "1.0"
defaultSchema: shop
schemas:
  - name: shop
    type: delta
    location: shop
    tables:
      - name: sales
        columns: [sale_id, product_id, time_id, store_id, units, price]
        notNull: [product_id, time_id]
        foreignKeys:
          - {columns: [product_id], references: product, referencedColumns: [product_id]}
      - name: product
        columns: [product_id, product_class_id, brand]
        primaryKey: [product_id]
      - name: product_class
        columns: [product_class_id, family]
        primaryKey: [product_class_id]
      - name: time_by_day
        columns: [time_id, the_year, the_month, quarter]
        primaryKey: [time_id]
"""

LATTICE = """
lattices:
  - name: sales
    sql: >
      select 1 from "shop"."sales" as "s"
      join "shop"."product" as "p" using ("product_id")
      join "shop"."time_by_day" as "t" using ("time_id")
      join "shop"."product_class" as "pc" on "p"."product_class_id" = "pc"."product_class_id"
    algorithm: true
    rowCountEstimate: 1000
    defaultMeasures:
      - agg: count
      - {agg: sum, args: units}
    tiles:
      - dimensions: [the_year, ["t", "quarter"]]
        measures: [{agg: sum, args: [units]}, {agg: count}]
"""


def write(tmp_path: Path, text: str, name: str = "model.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def problems_of(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(ModelError) as err:
        load_model(write(tmp_path, text), warehouse=str(tmp_path / "wh"))
    return [f"{p.path}: {p.message}" for p in err.value.problems]


def test_good_model_loads_with_lattice_tiles_and_measures(tmp_path: Path) -> None:
    model = load_model(write(tmp_path, SCHEMA + LATTICE), warehouse=str(tmp_path / "wh"))
    lattice = model.lattice("sales")
    assert [n.alias for n in lattice.nodes] == ["s", "p", "t", "pc"]
    assert lattice.algorithm is True and lattice.row_count_estimate == 1000
    assert [str(m) for m in lattice.default_measures] == ["count(*)", "sum(units)"]
    (tile,) = lattice.tiles
    assert tile.dimensions == ("the_year", "quarter")
    assert [str(m) for m in tile.measures] == ["sum(units)", "count(*)"]
    sales = model.table("shop", "sales")
    assert sales is not None and sales.location == str(tmp_path / "wh" / "shop" / "sales")


def test_json_models_load_too(tmp_path: Path) -> None:
    import yaml

    doc = yaml.safe_load(SCHEMA + LATTICE)
    path = tmp_path / "model.json"
    path.write_text(json.dumps(doc))
    assert load_model(path, warehouse=str(tmp_path)).lattice("sales").name == "sales"


def test_calcite_placement_of_lattices_inside_a_schema(tmp_path: Path) -> None:
    text = SCHEMA + textwrap.indent(
        "- name: adhoc\n  " + LATTICE.strip().replace("\n", "\n  "), "  "
    )
    model = load_model(write(tmp_path, text), warehouse=str(tmp_path))
    assert model.lattice("sales").schema == "adhoc"


def test_misspelled_tile_column_names_path_and_suggestion(tmp_path: Path) -> None:
    bad = (SCHEMA + LATTICE).replace("[the_year, ", "[the_yaer, ")
    assert problems_of(tmp_path, bad) == [
        "lattices[0].tiles[0].dimensions[0]: unknown column 'the_yaer' (did you mean 'the_year'?)"
    ]


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    bad = (
        (SCHEMA + LATTICE)
        .replace("[the_year, ", "[the_yaer, ")
        .replace("algorithm: true", "algoritm: true")
        .replace("{agg: sum, args: [units]}", "{agg: summ, args: [units]}")
    )
    found = problems_of(tmp_path, bad)
    assert len(found) == 3
    assert "lattices[0].algoritm: unknown key 'algoritm' (did you mean 'algorithm'?)" in found
    assert any(
        p.startswith("lattices[0].tiles[0].measures[0].agg: unknown aggregate") for p in found
    )


def test_invalid_yaml_reports_line(tmp_path: Path) -> None:
    (problem,) = problems_of(tmp_path, "version: 1\nschemas: [\n")
    assert problem.startswith("line ") and "invalid YAML" in problem


def test_root_must_be_a_mapping_and_have_a_version(tmp_path: Path) -> None:
    assert problems_of(tmp_path, "- 1\n- 2\n") == [": the model must be a mapping, got a list"]
    assert ": missing required key 'version'" in problems_of(tmp_path, "schemas: []\n")


def test_unknown_schema_type_and_unknown_default_schema(tmp_path: Path) -> None:
    text = SCHEMA.replace("type: delta", "type: deltaa").replace(
        "defaultSchema: shop", "defaultSchema: shopp"
    )
    found = problems_of(tmp_path, text)
    assert any(
        "schemas[0].type: unknown schema type 'deltaa'" in p and "did you mean 'delta'" in p
        for p in found
    )
    assert "defaultSchema: no schema named 'shopp' (did you mean 'shop'?)" in found


def test_key_columns_and_foreign_key_targets_are_checked(tmp_path: Path) -> None:
    text = SCHEMA.replace("primaryKey: [product_id]", "primaryKey: [prodct_id]").replace(
        "references: product,", "references: prodcut,"
    )
    found = problems_of(tmp_path, text)
    assert (
        "schemas[0].tables[1].primaryKey: unknown column 'prodct_id' in table "
        "'shop.product' (did you mean 'product_id'?)"
    ) in found
    assert any(
        p.startswith("schemas[0].tables[0].foreignKeys[0].references: unknown table 'shop.prodcut'")
        and "did you mean 'product'" in p
        for p in found
    )


def test_table_without_data_is_reported(tmp_path: Path) -> None:
    text = SCHEMA.replace("        columns: [time_id, the_year, the_month, quarter]\n", "")
    (problem,) = problems_of(tmp_path, text)
    assert problem.startswith("schemas[0].tables[3]: table 'shop.time_by_day' not found at ")


def test_measures_and_options_are_validated(tmp_path: Path) -> None:
    text = (
        (SCHEMA + LATTICE)
        .replace("{agg: sum, args: units}", "{agg: sum, args: unitz}")
        .replace("rowCountEstimate: 1000", "rowCountEstimate: lots\n    statisticProvider: magic")
    )
    found = problems_of(tmp_path, text)
    assert (
        "lattices[0].defaultMeasures[1].args: unknown column 'unitz' (did you mean 'units'?)"
        in found
    )
    assert "lattices[0].rowCountEstimate: must be a number, got a string ('lots')" in found
    assert any(
        p.startswith("lattices[0].statisticProvider: unknown statistic provider 'magic'")
        for p in found
    )


def test_refresh_cron_and_staleness_are_validated(tmp_path: Path) -> None:
    text = (SCHEMA + LATTICE).replace(
        "algorithm: true",
        'algorithm: true\n    refresh: {cron: "0 25 * * *"}\n    maxStaleness: soon',
    )
    found = problems_of(tmp_path, text)
    assert any(
        p.startswith("lattices[0].refresh.cron: cron expression '0 25 * * *': bad hour")
        for p in found
    )
    assert any(p.startswith("lattices[0].maxStaleness: 'soon' is not a duration") for p in found)


def test_good_refresh_policy_is_kept(tmp_path: Path) -> None:
    text = (SCHEMA + LATTICE).replace(
        "algorithm: true",
        'algorithm: true\n    refresh: {cron: "0 3 * * mon-fri"}\n    maxStaleness: 2h',
    )
    lattice = load_model(write(tmp_path, text), warehouse=str(tmp_path)).lattice("sales")
    assert lattice.refresh.cron == "0 3 * * mon-fri"
    assert lattice.refresh.max_staleness_seconds == 7200


def test_duplicate_lattice_names(tmp_path: Path) -> None:
    body = LATTICE.split("lattices:\n", 1)[1]
    found = problems_of(tmp_path, SCHEMA + LATTICE + body)
    assert ": lattice 'sales' is declared more than once" in found


def test_materializations_check_their_sql(tmp_path: Path) -> None:
    text = (
        SCHEMA
        + """
materializations:
  - view: units_by_product
    table: units_by_product
    sql: select product_id, sum(units) from shop.sales group by product_id
  - view: broken
    sql: select * from shop.nowhere
  - table: t3
    sql: "select from where"
"""
    )
    found = problems_of(tmp_path, text)
    assert "materializations[1].sql: unknown table 'shop.nowhere'" in found
    assert any(p.startswith("materializations[2].sql: SQL does not parse") for p in found)
    first = text.split("  - view: broken")[0]
    good = load_model(write(tmp_path, first), warehouse=str(tmp_path))
    assert [m.name for m in good.materializations] == ["units_by_product"]


def test_missing_file_is_a_model_error(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="file not found"):
        load_model(tmp_path / "nope.yaml")


def test_spark_section(tmp_path: Path) -> None:
    text = SCHEMA + 'spark:\n  master: "local[1]"\n  conf: {spark.sql.shuffle.partitions: 4}\n'
    model = load_model(write(tmp_path, text), warehouse=str(tmp_path))
    assert model.spark.master == "local[1]"
    assert model.spark.conf == (("spark.sql.shuffle.partitions", "4"),)
    found = problems_of(tmp_path, SCHEMA + "spark:\n  mastr: x\n")
    assert "spark.mastr: unknown key 'mastr' (did you mean 'master'?)" in found


def test_the_repository_foodmart_model_parses_its_lattice(tmp_path: Path) -> None:
    """The shipped model, with column lists stubbed (no data needed for the structure)."""
    from tests.conftest import FOODMART_MODEL

    columns = {
        "sales_fact_1997": (
            "product_id",
            "time_id",
            "customer_id",
            "promotion_id",
            "store_id",
            "store_sales",
            "store_cost",
            "unit_sales",
        ),
        "product": ("product_class_id", "product_id", "brand_name", "product_name"),
        "time_by_day": ("time_id", "the_date", "the_month", "the_year", "quarter"),
        "product_class": ("product_class_id", "product_family"),
        "customer": ("customer_id",),
        "store": ("store_id",),
        "promotion": ("promotion_id",),
    }
    model = load_model(
        FOODMART_MODEL, warehouse=str(tmp_path), columns_fallback=lambda t: columns.get(t.name)
    )
    star = model.lattice("star")
    assert [(n.alias, n.table, n.parent) for n in star.nodes] == [
        ("s", "sales_fact_1997", None),
        ("p", "product", "s"),
        ("t", "time_by_day", "s"),
        ("pc", "product_class", "p"),
    ]
    assert star.row_count_estimate == 86837 and star.auto and star.algorithm
    assert "s.product_id" in star.labels and "p.product_id" in star.labels
    assert "the_month" in star.labels


def test_missing_data_is_reported_once_not_again_by_each_lattice(tmp_path: Path) -> None:
    text = (SCHEMA + LATTICE).replace(
        "        columns: [time_id, the_year, the_month, quarter]\n", ""
    )
    (problem,) = problems_of(tmp_path, text)
    assert "table 'shop.time_by_day' not found" in problem


def test_sql_that_does_not_even_tokenize_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    # The model fuzzer's find: an unclosed backtick is a sqlglot TokenError, not a ParseError.
    lattice = LATTICE.replace(LATTICE.split("sql: >\n", 1)[1].split("    algorithm")[0], "")
    lattice = lattice.replace("sql: >\n", 'sql: "0`0"\n')
    found = problems_of(tmp_path, SCHEMA + lattice)
    assert any(p.startswith("lattices[0].sql: lattice SQL does not parse") for p in found), found
    text = SCHEMA + '\nmaterializations:\n  - table: t1\n    sql: "select `a from shop.sales"\n'
    found = problems_of(tmp_path, text)
    assert any(p.startswith("materializations[0].sql: SQL does not parse") for p in found), found
