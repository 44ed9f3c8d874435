"""The jobs commands end to end on a copy of FoodMart (the issue's "done when"): materialize
builds the planned tiles; `tiles --json` lists them fresh; appending to the fact table makes
them stale; `refresh` brings them back to fresh by the incremental path. Plus bad input."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from mvlattice.cli.main import main

pytestmark = pytest.mark.spark

SCHEMA = "jobs_fm"
TABLES = ("sales_fact_1997", "product", "time_by_day", "product_class")
MODEL = """
version: "1.0"
defaultSchema: {schema}
schemas:
  - name: {schema}
    type: delta
    location: {location}
    tables:
      - name: sales_fact_1997
        foreignKeys:
          - {{columns: [product_id], references: product}}
          - {{columns: [time_id], references: time_by_day}}
      - {{name: time_by_day, primaryKey: [time_id]}}
      - {{name: product, primaryKey: [product_id]}}
      - {{name: product_class, primaryKey: [product_class_id]}}
    lattices:
      - name: {schema}_star
        sql:
          - select 1 from "{schema}"."sales_fact_1997" as "s"
          - join "{schema}"."product" as "p" using ("product_id")
          - join "{schema}"."time_by_day" as "t" using ("time_id")
          - join "{schema}"."product_class" as "pc"
          - on "p"."product_class_id" = "pc"."product_class_id"
        auto: true
        algorithm: true
        rowCountEstimate: 86837
        refresh: {{cron: "0 3 * * *"}}
        defaultMeasures:
          - agg: count
          - {{agg: sum, args: unit_sales}}
"""


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def fm_model(spark, foodmart: Path) -> Path:
    base = foodmart / "jobs" / SCHEMA
    for name in TABLES:
        frame = spark.read.format("delta").load(str(foodmart / "foodmart" / name))
        frame.write.format("delta").mode("overwrite").save(str(base / name))
    model = base / "model.yaml"
    model.write_text(textwrap.dedent(MODEL).format(schema=SCHEMA, location=base))
    return model


def test_materialize_tiles_append_refresh(fm_model: Path, foodmart: Path, spark, capsys) -> None:
    wh = ("--warehouse", str(foodmart))
    code, out, err = cli(capsys, "materialize", str(fm_model), "--max-tiles", "3", "--json", *wh)
    assert code == 0, err
    built = json.loads(out)["results"]
    assert built and {r["status"] for r in built} == {"built"}
    assert {r["built_from"] for r in built} <= {"star"} | {r["target"] for r in built}

    code, out, _ = cli(capsys, "tiles", str(fm_model), "--json", *wh)
    assert json.loads(out)["schema_version"] == 1
    tiles = json.loads(out)["tiles"]
    assert {t["status"] for t in tiles} == {"fresh"} and {t["origin"] for t in tiles} == {"planned"}
    assert {t["name"] for t in tiles} == {r["target"] for r in built}
    first = tiles[0]
    assert first["source_versions"] == first["current_versions"] and first["rows"] > 0

    fact = str(foodmart / "jobs" / SCHEMA / "sales_fact_1997")
    spark.read.format("delta").load(fact).limit(868).write.format("delta").mode("append").save(
        fact
    )  # 1 % more rows
    code, out, _ = cli(capsys, "tiles", str(fm_model), "--json", *wh)
    assert {t["status"] for t in json.loads(out)["tiles"]} == {"stale"}

    code, out, err = cli(capsys, "refresh", str(fm_model), "--json", *wh)
    assert code == 0, err
    results = json.loads(out)["results"]
    assert {r["path"] for r in results} == {"incremental"}
    code, out, _ = cli(capsys, "tiles", str(fm_model), *wh)
    lines = out.splitlines()  # the text table (header, rule, rows, "(N rows)"), then feed lines
    rows = lines[2 : next(i for i, line in enumerate(lines) if line.endswith(" rows)"))]
    assert code == 0 and [r.split()[1] for r in rows] == ["fresh"] * len(results)


def test_bad_input_is_one_line_with_exit_2(fm_model: Path, foodmart: Path, capsys) -> None:
    wh = ("--warehouse", str(foodmart))
    code, _, err = cli(capsys, "refresh", str(fm_model), "--tile", "nope", *wh)
    assert code == 2 and err.startswith("mvlattice: error: no tile or materialization 'nope'")
    assert len(err.strip().splitlines()) == 1
    code, _, err = cli(capsys, "materialize", str(fm_model), "--lattice", "stra", *wh)
    assert code == 2 and "no lattice 'stra'" in err
    code, _, err = cli(capsys, "gc", str(fm_model), "--unused-for", "soon", *wh)
    assert code == 2 and "'soon' is not a duration" in err

    code, out, _ = cli(capsys, "schedule", str(fm_model), "--list", "--json", *wh)
    (job,) = json.loads(out)["schedule"]
    assert code == 0 and (job["name"], job["cron"]) == (f"{SCHEMA}_star", "0 3 * * *")
    assert job["next_run"].split(" ")[1].startswith("03:00")

    code, out, _ = cli(capsys, "gc", str(fm_model), "--dry-run", "--json", *wh)
    assert code == 0 and json.loads(out)["would_remove"] == []


def test_a_bad_cron_is_a_model_error_with_its_path(
    tmp_path: Path,
    fm_model: Path,
    foodmart: Path,
    capsys,
) -> None:
    source = fm_model.read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(source.replace('cron: "0 3 * * *"', 'cron: "0 25 * * *"'))
    code, _, err = cli(capsys, "schedule", str(bad), "--warehouse", str(foodmart))
    assert code == 2
    assert "schemas[0].lattices[0].refresh.cron" in err and "bad hour field '25'" in err


QUARTERS = (
    "select t.the_year, t.quarter, sum(s.unit_sales) from jobs_fm.sales_fact_1997 as s"
    " join jobs_fm.time_by_day as t on s.time_id = t.time_id group by t.the_year, t.quarter"
)


QUARTER_CLOSURE = {"quarter", "the_year", "fiscal_period"}
MONTH_CLOSURE = {"the_month", "month_of_year", "quarter", "the_year", "fiscal_period"}


def test_plan_and_materialize_weigh_the_query_log_else_a_workload_file(
    fm_model: Path,
    tmp_path: Path,
    capsys,
) -> None:
    # Two CLI queries land in the query log; with no workload given, the one-tile plan is the
    # tile that answers them (uniform HRU weights would pick another, see the second half).
    logged = ("--warehouse", str(tmp_path / "logged"))
    for _ in range(2):
        code, out, err = cli(capsys, "query", str(fm_model), QUARTERS, "--json", *logged)
        assert code == 0 and json.loads(out)["rows"], err
    code, out, err = cli(capsys, "log", str(fm_model), "--json", *logged)
    records = json.loads(out)["entries"]
    assert code == 0 and [r["source"] for r in records] == ["cli", "cli"], err

    code, out, err = cli(capsys, "plan", str(fm_model), "--max-tiles", "1", "--json", *logged)
    assert code == 0 and "weighted by the query log" in err, err
    (planned,) = json.loads(out)["tiles"]
    # the planned tile also carries the columns its grouping determines (free: no more rows);
    # in FoodMart's 1997 calendar the year and quarter determine only the fiscal period
    assert {"quarter", "the_year"} <= set(planned["dimensions"]) <= QUARTER_CLOSURE
    code, out, err = cli(capsys, "materialize", str(fm_model), "--max-tiles", "1", *logged)
    assert code == 0 and "weighted by the query log" in err, err
    code, out, _ = cli(capsys, "tiles", str(fm_model), "--json", *logged)
    (tile,) = json.loads(out)["tiles"]
    assert {"quarter", "the_year"} <= set(tile["dimensions"]) <= QUARTER_CLOSURE

    code, out, _ = cli(capsys, "query", str(fm_model), QUARTERS, "--json", *logged)
    assert json.loads(out)["materializations"] == [tile["name"]]

    # --no-query-log: the same model plans the same tiles whatever the log holds, and a build
    # whose plan moved says so in one line (issue 36).
    code, out, err = cli(capsys, "plan", str(fm_model), "--max-tiles", "1", "--json",
                         "--no-query-log", *logged)  # fmt: skip
    assert code == 0 and "query log" not in err, err
    (plain,) = json.loads(out)["tiles"]
    assert set(plain["dimensions"]) != set(tile["dimensions"]), plain
    code, out, err = cli(capsys, "materialize", str(fm_model), "--max-tiles", "1",
                         "--no-query-log", *logged)  # fmt: skip
    assert code == 0 and "query log" not in err, err
    assert (
        f"lattice '{SCHEMA}_star': the plan changed since the last one: 1 tile added, "
        "1 tile dropped (`gc` removes dropped tiles)" in err
    ), err
    # the dropped tile still answers until `gc` removes it, and the catalog says so
    code, out, _ = cli(capsys, "tiles", str(fm_model), "--json", *logged)
    dropped = {t["name"]: t["dropped"] for t in json.loads(out)["tiles"]}
    assert dropped.pop(tile["name"]) == f"no longer in the plan of lattice '{SCHEMA}_star'"
    assert list(dropped.values()) == [None], dropped
    code, out, _ = cli(capsys, "tiles", str(fm_model), *logged)
    assert "no longer in the plan of lattice" in out and "`gc` removes it" in out, out

    # A workload file wins over the log; a missing file is bad input, exit 2.
    workload = tmp_path / "workload.yaml"
    workload.write_text("- {dimensions: [the_month], weight: 5}\n")
    filed = ("--warehouse", str(tmp_path / "filed"))
    code, _, err = cli(capsys, "materialize", str(fm_model), "--max-tiles", "1",
                       "--workload", str(workload), *filed)  # fmt: skip
    assert code == 0, err
    code, out, _ = cli(capsys, "tiles", str(fm_model), "--json", *filed)
    (tile,) = json.loads(out)["tiles"]  # with the columns the_month determines: free
    assert "the_month" in tile["dimensions"] and set(tile["dimensions"]) <= MONTH_CLOSURE
    code, _, err = cli(capsys, "materialize", str(fm_model), "--workload", "nope.yaml", *filed)
    assert code == 2 and err.strip() == "mvlattice: error: --workload: no such file: nope.yaml"
