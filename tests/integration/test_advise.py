"""`mvlattice advise` on a query log with seeded misses: it names the column and the measure the
tile lacks — in one element, as one tile answers both — and the element it advises, once added
to the model and materialized, answers those queries — rewritten, with the rows Spark gives on
the base tables."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import yaml

from mvlattice.cli.main import main
from mvlattice.workspace import Workspace
from tests.integration.test_jobs_support import make_shop, tile_name

pytestmark = pytest.mark.spark

S = "advise_shop"
JOINS = (
    f"from {S}.sales s join {S}.product p on s.product_id = p.product_id "
    f"join {S}.time t on s.time_id = t.time_id"
)
COLOUR = (
    f"select p.brand, p.colour, t.the_year, sum(s.units) as units {JOINS} "
    "group by p.brand, p.colour, t.the_year"
)
TOP = (
    f"select t.the_year, max(s.amount) as top from {S}.sales s "
    f"join {S}.time t on s.time_id = t.time_id group by t.the_year"
)
ANSWERED = (
    f"select t.the_year, sum(s.units) as units from {S}.sales s "
    f"join {S}.time t on s.time_id = t.time_id group by t.the_year"
)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def rows(ws: Workspace, sql: str, rewrite: bool) -> Counter:
    return Counter(tuple(r) for r in ws.query(sql, rewrite=rewrite, engine="spark").rows)


def test_advice_names_what_tiles_lack_and_applying_it_answers_the_misses(
    spark, warehouse: Path, capsys
) -> None:
    where = warehouse / "advise"  # a warehouse of its own: its query log holds only these
    model = make_shop(spark, where, S, "- dimensions: [brand, the_year]\n")
    wh = ("--warehouse", str(where))
    code, _, err = cli(capsys, "materialize", str(model), *wh)
    assert code == 0, err
    for sql, times in ((COLOUR, 3), (TOP, 2), (ANSWERED, 1)):
        for _ in range(times):
            code, _, err = cli(capsys, "query", str(model), sql, *wh)
            assert code == 0, err

    code, out, err = cli(capsys, "advise", str(model), "--json", *wh)
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["requests"], doc["misses"], doc["answered_now"]) == (6, 5, 0)
    assert dict((r["reason"], r["queries"]) for r in doc["reasons"]) == {
        "MISSING_COLUMN": 3,
        "CANNOT_ROLL_UP": 2,
    }
    ws = Workspace(model, warehouse=str(where))
    tile = tile_name(ws, ("brand", "the_year"))
    # Both misses are answered by one tile: one element, not one per thing the tile lacks.
    (group,) = doc["groups"]
    assert (group["queries"], group["distinct"], group["change"]["tile"]) == (5, 2, tile)
    assert [(m["kind"], m["name"]) for m in group["change"]["missing"]] == [
        ("dimension", "colour"),
        ("measure", "max(amount)"),
    ]
    element = group["change"]["element"]
    assert element["dimensions"] == ["brand", "the_year", "colour"]
    assert {"agg": "max", "args": ["amount"]} in element["measures"]
    assert [(p["queries"], p["missing"]) for p in group["parts"]] == [
        (3, [{"kind": "dimension", "name": "colour"}]),
        (2, [{"kind": "measure", "name": "max(amount)"}]),
    ]
    assert doc["unadvised"] == 0

    code, out, _ = cli(capsys, "advise", str(model), "--since", "1h", *wh)
    assert code == 0
    assert (
        f"5 queries missed tile {tile} because it lacks column colour, measure max(amount)" in out
    )
    assert f"  3 queries missed tile {tile} because it lacks column colour" in out
    assert f"  2 queries missed tile {tile} because it lacks measure max(amount)" in out
    assert out.count("- dimensions: [brand, the_year, colour]") == 1

    # Apply the advice: paste the advised elements under the lattice's tiles, materialize.
    data = yaml.safe_load(model.read_text())
    lattice = data["schemas"][0]["lattices"][0]
    lattice["tiles"] += [g["change"]["element"] for g in doc["groups"]]
    model.write_text(yaml.safe_dump(data, sort_keys=False))
    code, _, err = cli(capsys, "materialize", str(model), *wh)
    assert code == 0, err
    ws = Workspace(model, warehouse=str(where))
    for sql in (COLOUR, TOP):
        assert ws.rewrite(sql).rewritten, sql
        assert rows(ws, sql, rewrite=True) == rows(ws, sql, rewrite=False)
    code, out, _ = cli(capsys, "advise", str(model), "--json", *wh)
    after = json.loads(out)
    assert (after["answered_now"], after["groups"], after["unadvised"]) == (5, [], 0)


def test_bad_since_is_one_line(tmp_path: Path, capsys) -> None:
    model = tmp_path / "m.yaml"
    model.write_text("version: '1.0'\n")
    code, _, err = cli(capsys, "advise", str(model), "--since", "soon")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "--since 'soon'" in err
