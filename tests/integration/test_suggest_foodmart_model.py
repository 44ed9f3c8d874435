"""From the FoodMart query log to answered queries, as a new user goes (issue 36): `suggest` (no
model: the tables' schema is the warehouse folder that holds them) → `validate` exits 0 →
`materialize` a suggested lattice → the log's queries its tiles answer are rewritten onto them,
with Spark's answer on the base tables.

The log is the FoodMart query set's queries over the tables `datasets foodmart` loads (the
others read Mondrian's test and aggregate tables, which have no data here). Lattices are
suggested one per join graph (`--no-merge`): merged per fact table, FoodMart's sales lattice
also takes the odd joins of a few test queries (sales.product_id = store.store_id …), and
tiles over that whole star answer none of the ordinary queries. The module's warehouse is its
own (FoodMart's data linked in), so its tiles never meet other tests' plans."""

from __future__ import annotations

import contextlib
import io
import json
from collections import Counter
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from mvlattice.cli.main import main
from mvlattice.datasets import foodmart as dataset
from mvlattice.datasets.foodmart_queries import ensure_queries
from mvlattice.workspace import Workspace

pytestmark = pytest.mark.spark

LATTICE = "sales_fact_1997_2"  # the suggested star of sales and time_by_day
LOADED = {t.name for t in dataset.TABLES}


def over_loaded_tables(sql: str) -> bool:
    tree = sqlglot.parse_one(sql, read="")  # the log's dialect: "double-quoted" names
    ctes = {cte.alias.lower() for cte in tree.find_all(exp.CTE)}
    names = {t.name.lower() for t in tree.find_all(exp.Table)} - ctes
    return bool(names) and names <= LOADED


@pytest.fixture(scope="module")
def root(foodmart: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse of the module's own holding FoodMart's data, and the log."""
    folder = tmp_path_factory.mktemp("suggest_foodmart")
    (folder / "warehouse").mkdir()
    (folder / "warehouse" / "foodmart").symlink_to(foodmart / "foodmart")
    queries = json.loads(ensure_queries().read_text(encoding="utf-8"))["queries"]
    kept = [{"id": q["id"], "sql": q["sql"]} for q in queries if over_loaded_tables(q["sql"])]
    (folder / "queries.json").write_text(json.dumps({"queries": kept}), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def suggested(root: Path) -> tuple[Path, dict]:
    """`suggest` as a user runs it: the model written, the report printed as JSON."""
    model, warehouse = root / "suggested.yaml", root / "warehouse"
    argv = ["suggest", "--log", str(root / "queries.json"), "--no-merge", "--json", "-o",
            str(model), "--warehouse", str(warehouse)]  # fmt: skip
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(argv) == 0
    return model, json.loads(printed.getvalue())


def test_the_suggested_model_validates(root: Path, suggested) -> None:
    model, _ = suggested
    text = model.read_text(encoding="utf-8")
    assert "Schema of unqualified tables: foodmart (the warehouse folder holding 7 of them" in text
    assert "columns: []" not in text and "defaultSchema: foodmart" in text
    assert main(["validate", str(model), "--warehouse", str(root / "warehouse")]) == 0


def test_its_queries_are_rewritten_onto_the_built_tiles(root: Path, suggested) -> None:
    model, report = suggested
    warehouse = str(root / "warehouse")
    assert main(["materialize", str(model), "--lattice", LATTICE, "--warehouse", warehouse]) == 0
    (lattice,) = [item for item in report["lattices"] if item["name"] == LATTICE]
    asked = sorted({q for tile in lattice["tiles"] for q in tile["query_ids"]}, key=int)
    logged = json.loads((root / "queries.json").read_text(encoding="utf-8"))["queries"]
    by_id = {str(q["id"]): q["sql"] for q in logged}
    ws = Workspace(model, warehouse=warehouse)
    rewritten = []
    for query in asked:
        sql = sqlglot.transpile(by_id[query], read="", write="spark")[0]  # as Spark reads it
        result = ws.rewrite(sql, explain=False)
        if result.rewritten:
            assert all(LATTICE in m for m in result.materializations), result.materializations
            rewritten.append(sql)
    # The others read VALUES lists or sum a CASE expression: Spark answers them.
    assert len(asked) >= 80 and len(rewritten) >= 0.85 * len(asked), (len(rewritten), len(asked))
    answers = 0
    for sql in rewritten[::4]:
        answered, base = ws.query(sql), ws.query(sql, rewrite=False)
        assert answered.rewrite.rewritten and answered.columns == base.columns, sql
        assert Counter(answered.rows) == Counter(base.rows), sql
        answers += bool(base.rows)  # some ask for 1998, when FoodMart's 1997 sales say nothing
    assert answers >= 15
