"""Progress lines for the long CLI steps (issue 36), on real Spark and Delta with tiny data:
each step says what it does and its wall time on stderr, stamped with the seconds since the
command began; stdout keeps the result, one JSON document with --json."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from mvlattice.cli.main import main
from mvlattice.datasets.foodmart import TABLES

pytestmark = pytest.mark.spark

STAMP = re.compile(r"^\[\s*\d+\.\ds\] ")


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def progress(err: str) -> list[str]:
    """stderr's lines, each checked to be a stamped progress line (no stray output there)."""
    lines = err.splitlines()
    assert lines and all(STAMP.match(line) for line in lines), err
    return [STAMP.sub("", line) for line in lines]


def done(lines: list[str], step: str) -> bool:
    return any(re.fullmatch(rf"{re.escape(step)}: done in \d+(\.\d)? s", x) for x in lines)


@pytest.fixture(scope="module")
def tiny(spark, warehouse: Path) -> Path:
    """A two-table star of a few rows: its dimension key is duplicated, one fact row orphaned."""
    base = warehouse / "progress"
    fact = spark.createDataFrame([(1, 10), (2, 10), (3, 99)], "id INT, dim_id INT")
    fact.write.format("delta").mode("overwrite").save(str(base / "fact"))
    dim = spark.createDataFrame([(10, "a"), (10, "b")], "dim_id INT, label STRING")
    dim.write.format("delta").mode("overwrite").save(str(base / "dim"))
    model = base / "model.yaml"
    model.write_text(
        textwrap.dedent(f"""
        version: "1.0"
        defaultSchema: p
        schemas:
          - name: p
            type: delta
            location: {base}
            tables: [{{name: fact}}, {{name: dim}}]
        lattices:
          - name: l
            sql: select 1 from p.fact f join p.dim d using (dim_id)
    """)
    )
    return model


def test_validate_data_says_each_check_as_it_runs(tiny: Path, capsys) -> None:
    wh = ("--warehouse", str(tiny.parent / "wh"))
    code, out, err = cli(capsys, "validate", str(tiny), "--data", "--json", *wh)
    assert code == 1  # the violations: stdout is still the one JSON document
    assert len(json.loads(out)["violations"]) == 2
    lines = progress(err.removesuffix("mvlattice: error: the data violates 2 constraint(s)\n"))
    assert "checking the model's constraints on the data …" in lines
    assert "  2 constraint(s) to check: 1 unique key(s), 1 foreign key(s), 0 not-null" in lines
    checks = [x for x in lines if re.match(r"  [12]/2 ", x)]
    assert [re.sub(r", \d+\.\d s$", "", x) for x in checks] == [
        "  1/2 unique p.dim(dim_id): VIOLATED (1)",
        "  2/2 foreign key p.fact(dim_id) -> p.dim: VIOLATED (1)",
    ]
    for step in ("checking the model's constraints on the data", "validate --data"):
        assert done(lines, step), lines
    assert lines[-1].startswith("validate --data: done in")


def test_validate_without_data_says_nothing_on_stderr(tiny: Path, capsys) -> None:
    code, out, err = cli(capsys, "validate", str(tiny), "--warehouse", str(tiny.parent / "wh"))
    assert code == 0 and out.startswith(str(tiny)) and err == ""  # no long step: no progress


def test_datasets_foodmart_says_each_table_rows_and_seconds(foodmart: Path, capsys) -> None:
    code, out, err = cli(capsys, "datasets", "foodmart", "--warehouse", str(foodmart))
    assert code == 0, err
    total = sum(t.rows for t in TABLES)
    where = f"{foodmart}/foodmart"
    assert out == f"FoodMart in {where}: 7 tables, {total:,} rows (0 loaded, 7 already there)\n"
    lines = progress(err)
    for table in TABLES:
        line = f"  {table.name:<16} {table.rows:>8,} rows"
        assert any(re.fullmatch(rf"{line}\s+\d+\.\d s \(already loaded\)", x) for x in lines)
    for step in ("starting Spark", f"loading FoodMart into {where}", "datasets foodmart"):
        assert done(lines, step), lines


def test_log_says_its_phases_and_keeps_json_stdout(tiny: Path, capsys) -> None:
    wh = ("--warehouse", str(tiny.parent / "wh"))
    code, out, err = cli(capsys, "log", str(tiny), "--json", *wh)
    assert code == 0, err
    assert json.loads(out)["entries"] == []
    lines = progress(err)
    assert "  0 entries" in lines
    assert done(lines, "reading the query log"), lines
    assert any(x.startswith("starting Spark (") and ": done in" in x for x in lines), lines

    code, out, err = cli(capsys, "log", str(tiny), "--prune", "30d", *wh)
    assert code == 0 and out.startswith("query log: "), err
    assert done(progress(err), "pruning and compacting the query log (30d)"), err
