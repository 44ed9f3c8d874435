"""`mvlattice suggest` and `mvlattice datasets foodmart-queries`, without Spark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mvlattice.cli.main import main
from mvlattice.datasets import foodmart_queries
from mvlattice.model.loader import load_model
from tests.unit.test_suggest_calcite import foodmart_yaml

LOG = """
select "t"."the_year", sum("s"."unit_sales") from "foodmart"."sales_fact_1997" as "s"
join "foodmart"."time_by_day" as "t" on "s"."time_id" = "t"."time_id" group by "t"."the_year";
select "t"."quarter", count(*)
from "foodmart"."sales_fact_1997" as "s", "foodmart"."time_by_day" as "t"
where "s"."time_id" = "t"."time_id" group by "t"."quarter";
select from where;
"""


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "log.sql"
    path.write_text(LOG, encoding="utf-8")
    return path


def test_suggest_writes_a_model_that_loads(
    tmp_path: Path, log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.yaml"
    assert main(["suggest", "--log", str(log), "--dialect", "ansi", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Queries: 3 read, 2 parsed, 2 used" in printed
    assert "skipped, does not parse: 1 (e.g. log.sql:3:" in printed
    assert f"Wrote {out}" in printed
    model = load_model(out, warehouse=str(tmp_path / "wh"))
    (lattice,) = model.lattices
    assert [n.table for n in lattice.nodes] == ["sales_fact_1997", "time_by_day"]
    assert {t.dimensions for t in lattice.tiles} == {("the_year",), ("quarter",)}


def test_suggest_prints_the_model_without_output_and_json_with(
    tmp_path: Path, log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["suggest", "--log", str(log), "--dialect", "ansi", "--no-tiles"]) == 0
    assert 'version: "1.0"' in capsys.readouterr().out
    assert main(["suggest", "--log", str(log), "--dialect", "ansi", "--json", "--no-merge"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["schema_version"] == 1  # --json shapes are versioned (issue 36)
    assert document["summary"]["queries_read"] == 3
    assert document["summary"]["skipped"][0]["reason"] == "does not parse"
    (lattice,) = document["lattices"]
    assert lattice["graph"] == (
        "sales_fact_1997 (time_by_day:time_id):[sum(sales_fact_1997.unit_sales), count()]"
    )
    assert lattice["joins"] == [
        {"from": "sales_fact_1997", "to": "time_by_day", "decided_by": "naming"}
    ]
    assert document["model"].startswith("# Suggested by")


def test_suggest_evolves_a_model_without_reading_data(
    tmp_path: Path, log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "model.yaml"
    model.write_text(foodmart_yaml(), encoding="utf-8")
    out = tmp_path / "out.yaml"
    args = ["suggest", "--log", str(log), "--model", str(model), "--dialect", "ansi"]
    assert main([*args, "--no-data", "-o", str(out), "--warehouse", str(tmp_path / "wh")]) == 0
    assert "Join directions: 1 by declared." in capsys.readouterr().out
    evolved = load_model(out, warehouse=str(tmp_path / "wh"))
    assert len(evolved.tables) == 7
    assert [lat.name for lat in evolved.lattices] == ["sales_fact_1997"]


def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["suggest", "--log", str(log), "--dialect", "klingon"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("mvlattice: error: unknown SQL dialect 'klingon'")
    assert len(err.splitlines()) == 1
    assert main(["suggest", "--log", str(tmp_path / "nope.sql")]) == 2
    assert "log file not found" in capsys.readouterr().err
    assert main(["suggest"]) == 2  # --log is required


def test_datasets_foodmart_queries_prints_the_local_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MVLATTICE_CACHE", str(tmp_path))
    cached = foodmart_queries.cache_dir() / "queries.json"
    cached.parent.mkdir(parents=True)
    cached.write_text('{"queries": []}', encoding="utf-8")
    assert main(["datasets", "foodmart-queries"]) == 0
    assert capsys.readouterr().out.strip() == str(cached)
    assert cached.is_relative_to(tmp_path)


UNQUALIFIED = """
select t.the_year, sum(s.unit_sales) from sales_fact_1997 s
join time_by_day t on s.time_id = t.time_id group by t.the_year;
select count(*) from agg_c_special_sales_fact_1997;
"""


def suggested(tmp_path: Path, log_text: str, *options: str) -> tuple[Path, str]:
    log = tmp_path / "log.sql"
    log.write_text(log_text, encoding="utf-8")
    out = tmp_path / "out.yaml"
    argv = ["suggest", "--log", str(log), "-o", str(out), "--warehouse", str(tmp_path / "wh")]
    assert main([*argv, *options]) == 0
    return out, out.read_text(encoding="utf-8")


def test_a_model_suggested_without_a_model_validates(tmp_path: Path, capsys) -> None:
    """No `columns: []` (a table the log names no column of leaves its lattice out, saying
    why), and the location the tables are read at is written and explained (issue 36)."""
    out, text = suggested(tmp_path, UNQUALIFIED)
    printed = capsys.readouterr().out
    assert "Schema of unqualified tables: default (the log does not say; --schema names it)" \
        in printed  # fmt: skip
    assert "Not emitted: lattice agg_c_special_sales_fact_1997: the log names no column of " \
        "default.agg_c_special_sales_fact_1997" in printed  # fmt: skip
    assert "columns: []" not in text and "agg_c_special" not in text.split("version:")[1]
    assert "tables are read as Delta at <warehouse>/default/<table>" in text
    model = load_model(out, warehouse=str(tmp_path / "wh"))  # no Spark: validation alone
    assert model.schemas[0].location == str(tmp_path / "wh" / "default")
    assert [lat.name for lat in model.lattices] == ["sales_fact_1997"]
    assert main(["validate", str(out), "--warehouse", str(tmp_path / "wh")]) == 0


def test_unqualified_tables_go_to_the_one_schema_the_log_names(tmp_path: Path) -> None:
    log = UNQUALIFIED + "select p.brand_name, count(*) from foodmart.product p group by 1;"
    out, text = suggested(tmp_path, log)
    model = load_model(out, warehouse=str(tmp_path / "wh"))
    assert {t.schema for t in model.tables} == {"foodmart"} and model.default_schema == "foodmart"
    assert "the one schema the log qualifies tables with" in text


def test_unqualified_tables_go_where_the_warehouse_holds_them(tmp_path: Path) -> None:
    for table in ("sales_fact_1997", "time_by_day"):  # what `datasets foodmart` leaves
        (tmp_path / "wh" / "foodmart" / table / "_delta_log").mkdir(parents=True)
    (tmp_path / "wh" / "other" / "time_by_day" / "_delta_log").mkdir(parents=True)
    out, text = suggested(tmp_path, UNQUALIFIED)
    assert "foodmart (the warehouse folder holding 2 of them as Delta tables)" in text
    model = load_model(out, warehouse=str(tmp_path / "wh"))
    assert model.table("foodmart", "time_by_day").location == str(
        tmp_path / "wh" / "foodmart" / "time_by_day"
    )
    _, named = suggested(tmp_path, UNQUALIFIED, "--schema", "shop")
    assert "defaultSchema: shop" in named and "shop (--schema)" in named
