"""FoodMart end to end: the documentation's month-count query reads a (the_year, the_month)
tile built by `materialize`, through `Workspace.rewrite` / `Workspace.query` and the CLI, and
still returns the 12 documented counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mvlattice.cli.main import main
from mvlattice.jobs.naming import tile_qualified_name
from mvlattice.lattice.lattice import Measure, TileSpec
from mvlattice.workspace import Workspace
from tests.conftest import FOODMART_MODEL

pytestmark = pytest.mark.spark

LATTICE = "rw_star"  # its own lattice name: tiles of other tests never compete with it
TILE = TileSpec(LATTICE, ("the_year", "the_month"), (Measure("count"),))
QUERY = (
    "select the_year, the_month, count(*) as c from foodmart.sales_fact_1997 "
    "join foodmart.time_by_day using (time_id) group by the_year, the_month"
)
COUNTS = {
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


@pytest.fixture(scope="module")
def model_file(foodmart: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """FoodMart's model with the lattice renamed, no tile planning, and one declared tile."""
    text = FOODMART_MODEL.read_text()
    text = text.replace("- name: star", f"- name: {LATTICE}").replace(
        "algorithm: true",
        "algorithm: false\n        tiles:\n          - dimensions: [the_year, the_month]\n"
        "            measures: [{agg: count}]",
    )
    path = tmp_path_factory.mktemp("rewrite_foodmart") / "foodmart.yaml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def ws(model_file: Path, foodmart: Path) -> Workspace:
    workspace = Workspace(model_file, warehouse=str(foodmart))
    built = workspace.materialize(lattice=LATTICE)
    assert all(r.status != "failed" for r in built.results), built.results
    return workspace


def test_the_month_query_reads_the_tile(ws: Workspace) -> None:
    result = ws.rewrite(QUERY)
    assert result.rewritten, result.explain
    assert result.materializations == (tile_qualified_name(TILE),)
    assert f"FROM {tile_qualified_name(TILE)} AS mv" in result.sql
    assert "sales_fact_1997" not in result.sql


def test_the_documented_counts_with_and_without_the_tile(ws: Workspace) -> None:
    rewritten = ws.query(QUERY)
    assert rewritten.rewrite.rewritten
    assert rewritten.columns == ("the_year", "the_month", "c")
    assert {month: c for year, month, c in rewritten.rows if year == 1997} == COUNTS
    assert len(rewritten.rows) == 12
    base = ws.query(QUERY, rewrite=False)
    assert not base.rewrite.rewritten
    assert sorted(base.rows) == sorted(rewritten.rows)
    entry = next(e for e in ws.tiles(LATTICE) if e.name == tile_qualified_name(TILE))
    assert entry.hits >= 1


def test_cli_rewrite_and_query(ws: Workspace, model_file: Path, foodmart: Path, capsys) -> None:
    common = [str(model_file), QUERY, "--warehouse", str(foodmart), "--json"]
    assert main(["rewrite", *common]) == 0
    document = json.loads(capsys.readouterr().out)
    assert list(document) == ["schema_version", "rewritten", "sql", "materializations", "explain"]
    assert document["rewritten"] is True
    assert document["materializations"] == [tile_qualified_name(TILE)]
    assert {"view", "outcome", "reason", "message"} == set(document["explain"][0])
    assert main(["query", *common, "--limit", "3"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["columns"] == ["the_year", "the_month", "c"]
    assert len(document["rows"]) == 3 and document["rewritten"] is True
    assert document["elapsed_ms"] > 0
    assert document["engine"] in ("local", "spark") and "engine_reason" in document
    assert main(["query", str(model_file), "UPDATE x SET a = 1", "--warehouse", str(foodmart)]) == 2


def test_cli_query_says_which_engine_answered_and_logs_it(
    ws: Workspace, model_file: Path, foodmart: Path, capsys
) -> None:
    sql = QUERY.replace(" as c ", " as engine_c ")  # its own text, to find its log entries
    auto = [str(model_file), sql, "--warehouse", str(foodmart)]
    # a query that reads only the small tile: the tile engine answers, in the driver
    assert main(["query", *auto, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["engine"], document["engine_reason"]) == ("local", "")
    assert {month: c for year, month, c in document["rows"] if year == 1997} == COUNTS
    assert main(["query", *auto]) == 0
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert last.startswith(f"-- read {tile_qualified_name(TILE)} on the tile engine; ")

    common = [*auto, "--engine", "spark"]
    assert main(["query", *common, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["rewritten"] is True and document["engine"] == "spark"
    assert document["engine_reason"]  # why Spark answered a query the tile engine could
    assert len(document["rows"]) == 12
    assert main(["query", *common]) == 0
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert last.startswith(f"-- read {tile_qualified_name(TILE)} on Spark (the engine")
    assert last.endswith(" ms")
    assert main(["query", *common, "--no-rewrite", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["engine"] == "spark"

    assert main(["log", str(model_file), "--warehouse", str(foodmart), "--json"]) == 0
    entries = [e for e in json.loads(capsys.readouterr().out)["entries"] if "engine_c" in e["sql"]]
    assert [(e["source"], e["rewritten"], e["engine"]) for e in entries] == [
        ("cli", True, "local"), ("cli", True, "local"),
        ("cli", True, "spark"), ("cli", True, "spark"), ("cli", False, "spark"),
    ]  # fmt: skip
    assert main(["log", str(model_file), "--warehouse", str(foodmart), "--limit", "1"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split()
    assert header[header.index("views") + 1] == "engine"
