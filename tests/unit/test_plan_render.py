"""`mvlattice plan` output (JSON, text, DOT) and its argument errors, without Spark."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from mvlattice.cli.main import main
from mvlattice.plan.planner import LatticePlan, plan_lattice
from mvlattice.plan.render import number, plan_document, plan_dot, plan_text
from mvlattice.plan.workload import workload_from_entries
from tests.unit.plan_support import ASKED, shop_lattice, shop_stats, write_model

STAR_TILES = [  # fiscal_period: a constant, which every column determines (plan.hierarchy)
    ["brand", "the_year", "the_month", "quarter", "fiscal_period", "family"],
    ["the_year", "the_month", "quarter", "fiscal_period", "family"],
    ["s.product_id", "fiscal_period"],
]


@pytest.fixture
def plan(tmp_path: Path) -> LatticePlan:
    lattice = shop_lattice(
        tmp_path, tiles="[{dimensions: [store_id], measures: [{agg: min, args: price}]}]"
    )
    work = workload_from_entries(ASKED, lattice)
    return plan_lattice(lattice, shop_stats(), workload=work, max_tiles=3)


def test_json_document(plan: LatticePlan) -> None:
    doc = json.loads(json.dumps(plan_document(plan)))
    assert doc["lattice"] == "sales" and doc["algorithm"] is True
    assert doc["rows"] == 10_000 and doc["candidates"] == plan.candidates
    assert [t["dimensions"] for t in doc["tiles"]] == [["store_id"], *STAR_TILES]
    declared, first = doc["tiles"][0], doc["tiles"][1]
    assert declared == {
        "dimensions": ["store_id"],
        "measures": [{"agg": "min", "args": ["price"]}],
        "rows": 20,
        "benefit": 0,
        "cost_after": 190_000,
        "declared": True,
        "counted": False,  # a dict provider only estimates
        "bytes": 20 * 2 * 8,  # rows × (store_id, min_price) × the default 8 bytes per value
    }
    assert first["measures"] == [
        {"agg": "count"},
        {"agg": "sum", "args": ["units"]},
        {"agg": "min", "args": ["price"]},
    ]
    assert first["rows"] == number(plan.tiles[1].rows) and isinstance(first["benefit"], float)
    assert doc["workload"] == {
        "statements": 4,
        "queries": 4,
        "ignored": 0,
        "unparsed": 0,
        "unmapped": 0,
        "unmapped_statements": [],
    }
    assert [r["chosen"] for r in doc["rounds"]] == [["store_id"], *STAR_TILES]
    assert all(len(r["candidates"]) == 10 for r in doc["rounds"])
    assert doc["rounds"][1]["candidates"][0]["dimensions"] == STAR_TILES[0]
    assert (doc["cost_before"], doc["timed_out"]) == (190_000, False)


def test_numbers_drop_float_noise() -> None:
    assert number(2639.9999999998186) == 2640 and isinstance(number(2639.9999999998186), int)
    assert number(12.3456) == 12.346


def test_text_lists_tiles_in_order_with_rows_benefit_and_cost(plan: LatticePlan) -> None:
    text = plan_text(plan)
    lines = text.splitlines()
    assert lines[0].startswith("Lattice sales: 10,000 rows at full detail, ")
    assert "workload: 4 statements, 4 group-bys (0 ignored, 0 unparsed, 0 unmapped)" in lines[0]
    one = plan_text(replace(plan, workload=replace(plan.workload, statements=1)))
    assert "workload: 1 statement, 4 group-bys" in one.splitlines()[0]
    body = "\n".join(lines[1:])
    positions = [body.index(", ".join(d) + " ") for d in STAR_TILES]
    assert positions == sorted(positions)
    assert lines[1].split() == ["#", "dimensions", "rows", "bytes", "benefit", "cost", "after"]
    assert lines[2].split() == ["1", "store_id", "~20", "320", "B", "0", "190,000", "declared"]
    cost = f"{plan.cost_after:,.0f}"
    assert lines[-1] == "(~: rows estimated from the statistics, not counted)"
    saved = f"({1 - plan.cost_after / 190_000:.1%} less)"
    total = f"Total cost: the planned-for group-bys read 190,000 -> {cost} rows {saved}"
    assert total in lines
    assert any(line.startswith("Coverage (predicted by the plan): 100.0% ") for line in lines)
    # The measures show before anything is built: declared #1 lists its own (no defaults);
    # the planned tiles hold the defaults and every measure a declared tile asks for.
    assert "Measures of #1: min(price)" in lines
    assert "Measures of #2: count(*), sum(units), min(price)" in lines


def test_dot_draws_chosen_tiles_with_computable_from_edges(plan: LatticePlan) -> None:
    dot = plan_dot(plan)
    assert dot.startswith('digraph "sales" {') and dot.endswith("}")
    assert 'star [label="sales (full detail)\\n10,000 rows", style="rounded,bold"];' in dot
    assert (
        '  t2 [label="#2\\nbrand\\nthe_year\\nthe_month\\nquarter\\nfiscal_period\\nfamily' in dot
    )
    assert '  t1 [label="#1 (declared)\\nstore_id\\n20 rows, benefit 0"];' in dot
    edges = {line.strip() for line in dot.splitlines() if "->" in line}
    # covering edges only: t3 ⊂ t2, so no star -> t3
    assert edges == {"star -> t1;", "star -> t2;", "t2 -> t3;", "star -> t4;"}


def test_dot_escapes_quotes_in_names(plan: LatticePlan) -> None:
    import dataclasses

    odd = dataclasses.replace(plan, lattice=dataclasses.replace(plan.lattice, name='my "star"'))
    assert plan_dot(odd).startswith('digraph "my \\"star\\"" {')


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-tiles", "-1"], "--max-tiles: must be zero or more"),
        (["--max-tiles", "two"], "'two' is not a whole number"),
        (["--max-rows", "lots"], "'lots' is not a number"),
        (["--format", "png"], "invalid choice: 'png'"),
        (["--provider", "guess"], "invalid choice: 'guess'"),
        (["--max-bytes", "5 parsecs"], "'5 parsecs' is not a size"),
        (["--max-share", "0%"], "a share must be more than 0"),
    ],
)
def test_bad_arguments_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    model = write_model(tmp_path)
    assert main(["plan", str(model), *args]) == 2
    assert message in capsys.readouterr().err


def test_a_bad_workload_fails_before_spark_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = write_model(tmp_path)
    missing = tmp_path / "nope.sql"
    code = main(["plan", str(model), "--workload", str(missing), "--warehouse", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert err == f"mvlattice: error: workload file not found: {missing}\n"


def test_text_says_when_only_declared_tiles_are_planned(tmp_path: Path) -> None:
    lattice = shop_lattice(tmp_path, algorithm=False, tiles="[{dimensions: [brand]}]")
    text = plan_text(plan_lattice(lattice, shop_stats()))
    assert (
        text.splitlines()[-1] == "(the lattice says algorithm: false, so only its declared tiles)"
    )
    empty = plan_text(plan_lattice(shop_lattice(tmp_path / "e", algorithm=False), shop_stats()))
    assert "(no tiles)" in empty.splitlines()
