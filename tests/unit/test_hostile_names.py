"""Hostile or odd names (issue 17): they never break generated SQL, never place data outside
the warehouse, and a deeply nested document is a model problem. No Spark."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from mvlattice.cli.main import main
from mvlattice.errors import ModelError, UsageError
from mvlattice.jobs.naming import materialization_location, tile_location
from mvlattice.jobs.targets import tile_location_of
from mvlattice.jobs.tilesql import rollup_tile_sql, star_tile_sql
from mvlattice.lattice.lattice import Measure, TileSpec
from mvlattice.lattice.stored_names import stored_name_clashes
from mvlattice.model.loader import Model, load_model
from mvlattice.mvrewrite.views import tile_sql
from mvlattice.sql.quote import format_safe, identifier, qualified, string
from mvlattice.statistics.counting_sql import key_expression

ODD = ["c`d", "unit price", "o'brien", "x``y", 'say "hi"', "a}{b", "é ü", "select"]
TICK, SPACE, QUOTE = "c`d", "unit price", "o'brien"

MODEL = """
version: "1.0"
defaultSchema: shop
schemas:
  - name: shop
    type: delta
    location: shop
    tables:
      - name: sales_x
        columns: [id, product_id, "c`d", "unit price"]
      - name: product
        columns: [product_id, "o'brien"]
        primaryKey: [product_id]
    lattices:
      - name: odd
        sql: >
          select 1 from shop.sales_x as `s``1`
          join shop.product as p on `s``1`.product_id = p.product_id
        defaultMeasures:
          - agg: count
          - {agg: sum, args: "unit price"}
        tiles:
          - dimensions: ["c`d", "o'brien"]
            measures: [{agg: avg, args: "unit price"}, {agg: count, args: ["c`d"], distinct: true}]
"""


def write(tmp_path: Path, text: str, name: str = "model.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load(tmp_path: Path, text: str, name: str = "model.yaml") -> Model:
    return load_model(write(tmp_path, text, name), warehouse=str(tmp_path / "wh"))


def problems_of(tmp_path: Path, text: str, name: str = "model.yaml") -> list[str]:
    with pytest.raises(ModelError) as err:
        load(tmp_path, text, name)
    return [f"{p.path}: {p.message}" for p in err.value.problems]


def columns_read(sql: str) -> set[str]:
    return {c.name for c in sqlglot.parse_one(sql, read="spark").find_all(exp.Column)}


# -- quoting ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ODD)
def test_an_identifier_reads_back_as_the_same_name(name: str) -> None:
    tree = sqlglot.parse_one(f"SELECT {qualified('t', name)} FROM {qualified('s', name)}", "spark")
    assert tree.find(exp.Column).name == name and tree.find(exp.Table).name == name
    assert identifier(name) == "`" + name.replace("`", "``") + "`"


@pytest.mark.parametrize("text", ["it's", "a\\b", "line\nbreak", "'; DROP TABLE x; --"])
def test_a_string_literal_reads_back_as_the_same_text(text: str) -> None:
    literal = sqlglot.parse_one(f"SELECT {string(text)}", read="spark").find(exp.Literal)
    assert literal.this == text


def test_a_string_literal_hides_dollar_brace_from_spark_variable_substitution() -> None:
    assert "${" not in string("${env:HOME}") and string("$x") == "'\\u0024x'"


def test_braces_in_names_survive_spark_sql_formatting() -> None:
    key = key_expression("a}{b", "int")
    assert format_safe(key).format() == key


# -- the SQL generated from odd model names ----------------------------------------------------
def test_tile_sql_over_odd_names_reads_exactly_the_model_columns(tmp_path: Path) -> None:
    model = load(tmp_path, MODEL)
    lattice = model.lattice("odd")
    (spec,) = lattice.tiles
    for sql in (star_tile_sql(lattice, spec), tile_sql(lattice, spec), lattice.star_sql()):
        assert columns_read(sql) >= {TICK, QUOTE, SPACE, "product_id"}
        tables = {t.name for t in sqlglot.parse_one(sql, read="spark").find_all(exp.Table)}
        assert tables == {"sales_x", "product"}
    coarser = TileSpec("odd", (TICK,), (Measure("sum", (SPACE,)),))
    assert columns_read(rollup_tile_sql(coarser, spec, "t")) == {"c_d", "sum_unit_price"}


def test_tile_column_names_are_plain_and_distinct(tmp_path: Path) -> None:
    lattice = load(tmp_path, MODEL).lattice("odd")
    (spec,) = lattice.tiles
    tree = sqlglot.parse_one(star_tile_sql(lattice, spec), read="spark")
    names = [e.alias for e in tree.expressions]
    assert names == ["c_d", "o_brien", "sum_unit_price", "count_unit_price", "count_distinct_c_d"]


@pytest.mark.parametrize(
    ("labels", "measures", "clash"),
    [
        (["unit price", "unit_price"], [], "column 'unit price' and column 'unit_price'"),
        (["count"], [Measure("count")], "column 'count' and measure count(*)"),
        (["a b", "a_b"], [], "'a_b'"),
        ([], [Measure("sum", ("a b",)), Measure("sum", ("a_b",))], "'sum_a_b'"),
    ],
)
def test_tile_column_name_clashes_are_found(labels: list, measures: list, clash: str) -> None:
    (message,) = stored_name_clashes(labels, measures)
    assert clash in message and "AS" in message


def test_avg_and_sum_of_one_column_share_their_stored_column() -> None:
    measures = [Measure("avg", ("x",)), Measure("sum", ("x",)), Measure("count", ("x",))]
    assert stored_name_clashes(["x", "y"], measures) == []


def test_a_model_whose_tile_columns_would_clash_is_refused(tmp_path: Path) -> None:
    text = MODEL.replace("[id, product_id,", "[id, product_id, c_d,")
    assert problems_of(tmp_path, text) == [
        "schemas[0].lattices[0]: column 'c_d' and column 'c`d' would both be stored in tiles "
        "as column 'c_d'; give the column another label with AS"
    ]


# -- names that would become paths ------------------------------------------------------------
MATERIALIZATION = """
    materializations:
      - view: mv
        table: {table}
        sql: select product_id from shop.product
"""


@pytest.mark.parametrize(
    ("table", "reason"),
    [
        ("../../x", "contains '..'"),
        ("/tmp/x", "is an absolute path"),
        ("a/b", "contains a path separator"),
        ('"a\\\\b"', "contains a path separator"),
        ('"x\\0y"', "contains a control character"),
        ("a.b", "contains '.'"),
        ('"c${env:HOME}"', "variable substitution"),
        ("a b", "is not a name Spark's catalog accepts (only letters, digits and _)"),
    ],
)
def test_a_materialization_table_is_a_plain_name(tmp_path: Path, table: str, reason: str) -> None:
    (problem,) = problems_of(tmp_path, MODEL + MATERIALIZATION.format(table=table))
    assert problem.startswith("schemas[0].materializations[0].table: materialization table '")
    assert reason in problem and "\n" not in problem


def test_a_materialization_named_by_view_alone_is_checked_there(tmp_path: Path) -> None:
    text = MODEL + MATERIALIZATION.replace("view: mv", "view: ../mv").replace(
        "        table: {table}\n", ""
    )
    (problem,) = problems_of(tmp_path, text)
    assert problem.startswith("schemas[0].materializations[0].view: ")


def test_schema_table_and_lattice_names_that_become_paths_are_checked(tmp_path: Path) -> None:
    text = (
        MODEL.replace("- name: shop\n", "- name: ../shop\n")
        .replace("- name: product\n", "- name: /etc/product\n")
        .replace("- name: odd\n", "- name: a/b\n")
    )
    expected = {
        "schemas[0].name: schema name '../shop' contains '..'; it must be a plain name",
        "schemas[0].tables[1].name: table name '/etc/product' is an absolute path; it must be "
        "a plain name",
        "schemas[0].lattices[0].name: lattice name 'a/b' contains a path separator ('/' or "
        "'\\'); it must be a plain name",
    }
    assert expected <= set(problems_of(tmp_path, text))


def test_a_registered_table_has_a_name_spark_s_catalog_accepts(tmp_path: Path) -> None:
    """Spark's session catalog refuses `sales` 'x` however it is quoted; the model says so
    instead of failing when tables are registered. Columns and aliases may be odd."""
    text = MODEL.replace("name: sales_x", 'name: "sales` \'x"\n        path: sales')
    assert problems_of(tmp_path, text)[0] == (
        "schemas[0].tables[0].name: table name 'sales` 'x' is not a name Spark's catalog "
        "accepts (only letters, digits and _)"
    )


def test_a_column_with_dollar_brace_is_refused(tmp_path: Path) -> None:
    text = MODEL.replace('"unit price"]', '"unit price", "${x}"]')
    assert problems_of(tmp_path, text) == [
        "schemas[0].lattices[0].sql: column '${x}' contains '${', which Spark's variable "
        "substitution would rewrite"
    ]


def test_locations_stay_in_their_warehouse_folder() -> None:
    spec = TileSpec("a/../../b", ("x/../y",), (Measure("count"),))
    location = tile_location("/w", spec)  # lattice and labels are slugged into one segment
    assert location.startswith("/w/_mvlattice/tiles/a_") and location.count("/") == 4
    assert materialization_location("s3a://b/w", "s", "t") == (
        "s3a://b/w/_mvlattice/materializations/s/t"
    )
    for schema, table in (("s", "../../x"), ("..", "x"), ("s", "/x"), ("s", "x\0"), ("s", "")):
        with pytest.raises(UsageError, match="refusing to place data under"):
            materialization_location("/w", schema, table)
    with pytest.raises(UsageError):
        tile_location_of("/w", "/etc")


# -- deep nesting -----------------------------------------------------------------------------
DEEP = [
    ("list.yaml", "[" * 10_000),
    ("flow.yaml", "version: 1\nx: " + "{a: " * 10_000 + "1" + "}" * 10_000),
    ("block.yaml", "version: 1\n" + "".join(" " * i + "a:\n" for i in range(3_000))),
    ("dashes.yaml", "- " * 5_000 + "x"),
    ("list.json", "[" * 10_000),
    ("object.json", '{"version": "1", "x": ' + '{"a": ' * 10_000 + "1" + "}" * 10_001),
]


@pytest.mark.parametrize(("name", "text"), DEEP)
def test_a_deeply_nested_document_is_one_located_problem(
    tmp_path: Path, name: str, text: str
) -> None:
    (problem,) = problems_of(tmp_path, text, name)
    assert problem.startswith("line ") and problem.endswith(
        ": model nests deeper than 64 levels (lists and mappings inside each other)"
    )


def test_nesting_up_to_the_limit_is_read(tmp_path: Path) -> None:
    doc = {"version": "1", "x": json.loads("[" * 63 + "]" * 63)}  # 64 levels with the root
    for name, text in (("ok.json", json.dumps(doc)), ("ok.yaml", json.dumps(doc))):
        assert problems_of(tmp_path, text, name) == ["x: unknown key 'x'"]


def test_brackets_inside_json_strings_do_not_count(tmp_path: Path) -> None:
    text = json.dumps({"version": "1", "x": "[" * 10_000 + '\\"{'})
    assert problems_of(tmp_path, text, "model.json") == ["x: unknown key 'x'"]


# -- the command line -------------------------------------------------------------------------
def validate(capsys: pytest.CaptureFixture[str], model: Path) -> tuple[int, list[str]]:
    code = main(["validate", str(model), "--warehouse", str(model.parent / "wh")])
    return code, capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "model.yaml",
            MODEL + MATERIALIZATION.format(table="../../x"),
            "schemas[0].materializations[0].table: materialization table '../../x' contains "
            "'..'; it must be a plain name",
        ),
        ("model.yaml", "[" * 10_000, "line 1, column 65: model nests deeper than 64 levels"),
        ("model.json", '{"a": ' * 10_000, "line 1, column 385: model nests deeper than 64"),
    ],
)
def test_validate_reports_one_problem_line_and_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, text: str, message: str
) -> None:
    code, lines = validate(capsys, write(tmp_path, text, name))
    assert code == 2
    assert lines[0] == "mvlattice: error: 1 problem in model:"
    assert len(lines) == 2 and lines[1].startswith(f"  {tmp_path / name}: {message}")
    assert "Traceback" not in "\n".join(lines) and "internal error" not in lines[0]
