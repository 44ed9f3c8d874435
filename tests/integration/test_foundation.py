"""Foundation on real Spark and Delta: round trips, data checks, FoodMart's documented numbers."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from mvlattice.cli.main import main
from mvlattice.workspace import Workspace
from tests.conftest import FOODMART_MODEL

pytestmark = pytest.mark.spark

MONTHS_1997 = {
    "January": 7034,
    "February": 6844,
    "March": 7710,
    "April": 6590,
    "May": 6866,
    "June": 6912,
    "July": 7752,
    "August": 7038,
    "September": 6663,
    "October": 6479,
    "November": 8232,
    "December": 8717,
}
QUARTERS_1997 = {"Q1": 21588, "Q2": 20368, "Q3": 21453, "Q4": 23428}


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_month_counts_through_the_sql_command(foodmart: Path, capsys) -> None:
    query = (
        "select the_month, count(*) as c from foodmart.sales_fact_1997 "
        "join foodmart.time_by_day using (time_id) group by the_month"
    )
    code, out, err = run_cli(
        capsys, "sql", str(FOODMART_MODEL), query, "--json", "--warehouse", str(foodmart)
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["columns"] == ["the_month", "c"]
    assert dict(map(tuple, doc["rows"])) == MONTHS_1997


def test_quarter_counts_through_the_sql_command(foodmart: Path, capsys) -> None:
    query = (
        "select t.quarter, count(*) as c from foodmart.sales_fact_1997 s "
        "join foodmart.time_by_day t on s.time_id = t.time_id "
        "where t.the_year = 1997 group by t.quarter"
    )
    code, out, _ = run_cli(
        capsys, "sql", str(FOODMART_MODEL), query, "--json", "--warehouse", str(foodmart)
    )
    assert code == 0
    assert dict(map(tuple, json.loads(out)["rows"])) == QUARTERS_1997


def test_foodmart_model_validates_and_its_constraints_hold(foodmart: Path, capsys) -> None:
    code, out, err = run_cli(
        capsys, "validate", str(FOODMART_MODEL), "--data", "--json", "--warehouse", str(foodmart)
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["valid"] is True and doc["violations"] == []
    assert doc["constraints_checked"] >= 10


def test_misspelled_column_exits_2_with_path_and_suggestion(
    foodmart: Path, tmp_path: Path, capsys
) -> None:
    text = FOODMART_MODEL.read_text().replace(
        "        defaultMeasures:\n          - agg: count",
        "        defaultMeasures:\n          - agg: count\n"
        "        tiles:\n          - dimensions: [the_yeer]",
    )
    bad = tmp_path / "foodmart.yaml"
    bad.write_text(text)
    code, out, err = run_cli(capsys, "validate", str(bad), "--warehouse", str(foodmart))
    assert code == 2
    assert (
        "schemas[1].lattices[0].tiles[0].dimensions[0]: unknown column 'the_yeer' "
        "(did you mean 'the_year'?)" in err
    )
    assert "Traceback" not in err and out == ""


def test_bad_sql_exits_2_with_one_line(foodmart: Path, capsys) -> None:
    code, _, err = run_cli(
        capsys,
        "sql",
        str(FOODMART_MODEL),
        "select nope from foodmart.store",
        "--warehouse",
        str(foodmart),
    )
    assert code == 2
    assert err.startswith("mvlattice: error: SQL is not valid for this model:")
    assert len(err.strip().splitlines()) == 1


def _write_delta(spark, location: Path, rows: list[tuple], ddl: str) -> None:
    spark.createDataFrame(rows, ddl).write.format("delta").mode("overwrite").save(str(location))


def test_delta_round_trip_and_other_formats(spark, warehouse: Path) -> None:
    base = warehouse / "roundtrip"
    rows = [(1, "a", 2.5), (2, None, None), (2, "b", 1.0)]
    _write_delta(spark, base / "things", rows, "id INT, name STRING, weight DOUBLE")
    spark.createDataFrame([(1, "x")], "id INT, tag STRING").write.mode("overwrite").parquet(
        str(base / "pq" / "tags")
    )
    (base / "csv" / "notes").mkdir(parents=True)
    (base / "csv" / "notes" / "part.csv").write_text("id,note\n1,hello\n2,world\n")
    model = base / "model.yaml"
    model.write_text(
        textwrap.dedent(f"""
        version: "1.0"
        defaultSchema: rt
        schemas:
          - {{name: rt, type: delta, location: {base}, tables: [{{name: things}}]}}
          - {{name: pq, type: parquet, location: {base / "pq"}, tables: [{{name: tags}}]}}
          - {{name: cs, type: csv, location: {base / "csv"}, tables: [{{name: notes}}]}}
    """)
    )
    ws = Workspace(model, warehouse=str(warehouse))
    _, got = ws.collect(ws.sql("select id, name, weight from rt.things"))
    assert sorted(got, key=repr) == sorted(rows, key=repr)
    _, joined = ws.collect(
        ws.sql(
            "select t.id, g.tag, n.note from rt.things t join pq.tags g on t.id = g.id "
            "join cs.notes n on n.id = t.id"
        )
    )
    assert joined == [(1, "x", "hello")]


def test_validate_data_reports_duplicate_keys_and_orphans(spark, warehouse: Path, capsys) -> None:
    base = warehouse / "broken"
    _write_delta(spark, base / "fact", [(1, 10), (2, 10), (3, 99), (4, None)], "id INT, dim_id INT")
    _write_delta(spark, base / "dim", [(10, "a"), (10, "b"), (11, "c")], "dim_id INT, label STRING")
    model = base / "model.yaml"
    model.write_text(
        textwrap.dedent(f"""
        version: "1.0"
        defaultSchema: b
        schemas:
          - name: b
            type: delta
            location: {base}
            tables: [{{name: fact}}, {{name: dim}}]
        lattices:
          - name: l
            sql: select 1 from b.fact f join b.dim d using (dim_id)
    """)
    )
    code, out, err = run_cli(
        capsys, "validate", str(model), "--data", "--warehouse", str(warehouse)
    )
    assert code == 1
    assert "b.dim(dim_id) is not unique: 1 key value(s) occur more than once (e.g. 10)" in out
    assert "b.fact(dim_id) -> b.dim(dim_id): 2 row(s) whose key is NULL or has no match" in out
    assert "99" in out and "NULL" in out
    assert "violates 2 constraint(s)" in err
