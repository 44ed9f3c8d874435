"""`mvlattice demo`: the main job end to end on FoodMart, ending with base vs rewritten times;
a second run reuses the data and skips the fresh tiles."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mvlattice.cli.commands import DEMO_QUERIES
from mvlattice.cli.main import main

pytestmark = pytest.mark.spark


STEPS = (
    "starting Spark",
    "loading FoodMart",
    "checking the model's constraints on the data",
    "running the month query",
    "planning and building tiles",
    *(f"timing '{name}': base, on Spark, by default" for name, _ in DEMO_QUERIES),
    "demo",
)


def _demo(capsys: pytest.CaptureFixture[str], warehouse: Path) -> str:
    code = main(["demo", "--warehouse", str(warehouse)])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    # Every step's progress and wall time on stderr (issue 36), each line stamped.
    lines = err.splitlines()
    assert all(re.match(r"\[\s*\d+\.\ds\] ", line) for line in lines), err
    for step in STEPS:
        assert re.search(rf"^\[[^]]+\] {re.escape(step)}: done in \d+(\.\d)? s$", err, re.M), err
    assert re.search(r"^\[[^]]+\]   sales_fact_1997\s+86,837 rows\s+\d+\.\d s", err, re.M), err
    return out


def test_demo_builds_tiles_and_reports_each_query_rewritten(
    spark: object,  # the session's Spark: the demo reuses it
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    first = _demo(capsys, tmp_path / "warehouse")
    assert "December   8717" in first  # the documented month count, before any tile
    built = re.findall(r"^\s+built\s+(mvlattice\.star__[^\s,]+)", first, re.M)
    assert built, first
    report = first.split("5. The queries on the base tables")[1]
    for name, _ in DEMO_QUERIES:
        row = next(line for line in report.splitlines() if line.startswith(name))
        assert " yes " in row and "not rewritten" not in row, row
        assert any(tile in row for tile in built), row
    second = _demo(capsys, tmp_path / "warehouse")
    skipped = re.findall(r"^\s+skipped\s+(mvlattice\.star__[^\s,]+)", second, re.M)
    assert sorted(skipped) == sorted(built)
    assert not re.search(r"^\s+built\s", second, re.M)
