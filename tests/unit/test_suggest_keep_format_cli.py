"""`suggest --model M -o OUT` through the CLI: the file's text kept, or one stderr line saying
why not; a JSON model stays JSON (issue 36)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from mvlattice.cli.main import main
from mvlattice.model.loader import load_model
from tests.unit.test_suggest_calcite import foodmart_yaml
from tests.unit.test_suggest_keep_format import LOG, STAR_COMMENTED, changed

MAX_BY_BRAND = """
select "p"."brand_name", max("s"."store_sales") from "foodmart"."sales_fact_1997" as "s"
join "foodmart"."product" as "p" on "s"."product_id" = "p"."product_id" group by "p"."brand_name";
"""


@pytest.mark.parametrize("flow", [False, True])
def test_suggest_model_o_keeps_the_file_or_says_why_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flow: bool
) -> None:
    log = tmp_path / "log.sql"
    log.write_text(LOG + MAX_BY_BRAND, encoding="utf-8")
    text = STAR_COMMENTED
    if flow:
        text = foodmart_yaml("lattices: [{name: store, sql: 'select 1 from foodmart.store'}]\n")
    model, out, wh = tmp_path / "model.yaml", tmp_path / "out.yaml", str(tmp_path / "wh")
    model.write_text(text, encoding="utf-8")
    args = ["suggest", "--log", str(log), "--model", str(model), "--dialect", "ansi"]
    assert main([*args, "--no-data", "-o", str(out), "--warehouse", wh]) == 0
    printed = capsys.readouterr()
    assert f"Wrote {out}" in printed.out
    written = out.read_text(encoding="utf-8")
    if flow:
        assert printed.err == (
            "note: formatting of model.yaml could not be kept ('lattices:' is a flow-style "
            "list ([...]) and would change): written re-serialized\n"
        )
        assert written.startswith("# Suggested by")
    else:
        assert printed.err == ""
        (((old,), (new,)),), added = changed(text, written)  # one measure more, tiles pinned
        measures = "[{agg: count}, {agg: sum, args: unit_sales}]"
        assert (old, new) == (
            f"    defaultMeasures: {measures}\n",
            f"    defaultMeasures: {measures[:-1]}, {{agg: max, args: store_sales}}]\n",
        )
        assert added == [f"        measures: {measures}\n"] * 2
    assert main(["validate", str(out), "--warehouse", wh]) == 0


def test_suggest_model_json_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "log.sql"
    log.write_text(LOG, encoding="utf-8")
    model, out, wh = tmp_path / "model.json", tmp_path / "out.json", str(tmp_path / "wh")
    model.write_text(json.dumps(yaml.safe_load(foodmart_yaml())), encoding="utf-8")
    args = ["suggest", "--log", str(log), "--model", str(model), "--dialect", "ansi"]
    assert main([*args, "--no-data", "-o", str(out), "--warehouse", wh]) == 0
    assert [lat.name for lat in load_model(out, warehouse=wh).lattices] == ["sales_fact_1997"]
    capsys.readouterr()
    assert main([*args, "--no-data", "--warehouse", wh]) == 0  # no -o: JSON, like the model
    printed = capsys.readouterr()
    assert json.loads(printed.out)["lattices"][0]["name"] == "sales_fact_1997"
    assert "Suggested by `mvlattice suggest`" in printed.err  # the summary, beside the model
