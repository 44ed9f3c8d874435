"""The vacuum retention: where the model declares it, the default, the floor (1 hour, or the
service's query timeout when longer), and the table property that carries it. No Spark."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from mvlattice.errors import ModelError
from mvlattice.jobs import vacuum
from mvlattice.jobs.targets import declared_targets
from mvlattice.lattice.lattice import DEFAULT_VACUUM_RETENTION, MIN_VACUUM_RETENTION
from mvlattice.model.loader import load_model
from tests.unit.test_jobs_support import MODEL


class FakeSpark:
    """Only what `vacuum.floor` reads: the session conf."""

    def __init__(self, conf: dict[str, str]) -> None:
        self.conf = conf


def model_with(tmp_path: Path, text: str):  # a Model
    path = tmp_path / "shop.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return load_model(path, str(tmp_path / "warehouse"))


def test_default_is_seven_days_and_never_below_the_floor(tmp_path: Path) -> None:
    model = model_with(tmp_path, MODEL)
    for target in declared_targets(model, model.warehouse):
        assert vacuum.declared_retention(model, target) == DEFAULT_VACUUM_RETENTION == 7 * 86400
        assert vacuum.retention(None, model, target) == DEFAULT_VACUUM_RETENTION
        assert vacuum.raised_note(None, model, target) is None


def test_root_lattice_and_materialization_levels(tmp_path: Path) -> None:
    text = (
        MODEL.replace('version: "1.0"', 'version: "1.0"\nvacuum: {retention: 2d}')
        .replace("maxStaleness: 10m", "maxStaleness: 10m\n        vacuum: {retention: 12h}")
        .replace('refresh: {cron: "30 2 1 * 0"}', "vacuum: {retention: 90m}")
    )
    model = model_with(tmp_path, text)
    assert model.vacuum_retention_seconds == 2 * 86400
    assert model.lattices[0].refresh.vacuum_retention_seconds == 12 * 3600
    assert model.materializations[0].vacuum_retention_seconds == 90 * 60
    seconds = {t.kind: vacuum.retention(None, model, t) for t in declared_targets(model, "w")}
    assert seconds == {"tile": 12 * 3600, "materialization": 90 * 60}

    only_root = model_with(
        tmp_path, MODEL.replace('version: "1.0"', 'version: "1.0"\nvacuum: {retention: 2d}')
    )
    assert {vacuum.retention(None, only_root, t) for t in declared_targets(only_root, "w")} == {
        2 * 86400
    }


def test_the_floor_raises_a_short_retention_and_says_so(tmp_path: Path, monkeypatch) -> None:
    text = MODEL.replace("maxStaleness: 10m", "maxStaleness: 10m\n        vacuum: {retention: 10m}")
    model = model_with(tmp_path, text)
    tile = next(t for t in declared_targets(model, "w") if t.spec is not None)
    assert vacuum.retention(None, model, tile) == MIN_VACUUM_RETENTION == 3600
    assert "600s raised to 3600s" in vacuum.raised_note(None, model, tile)
    # a service whose queries may run 2 hours: nothing younger than 2 hours goes
    spark = FakeSpark({vacuum.QUERY_TIMEOUT_CONF: "7200"})
    assert vacuum.retention(spark, model, tile) == 7200
    assert vacuum.retention(FakeSpark({vacuum.QUERY_TIMEOUT_CONF: "junk"}), model, tile) == 3600
    monkeypatch.setattr(vacuum, "MIN_RETENTION", 0.0)  # the tests' way to see files go at once
    assert vacuum.retention(None, model, tile) == 600
    assert vacuum.retention(spark, model, tile) == 7200  # never below the query timeout


def test_the_table_property_is_whole_seconds() -> None:
    assert vacuum.retention_property(0) == (
        "delta.deletedFileRetentionDuration",
        "interval 0 seconds",
    )
    assert vacuum.retention_property(90.2)[1] == "interval 91 seconds"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("{retention: soon}", "vacuum.retention: 'soon' is not a duration"),
        ("{retention: -5}", "vacuum.retention: a duration cannot be negative"),
        ("{keep: 7d}", "vacuum.keep: unknown key 'keep'"),
        ("{}", "vacuum: missing required key 'retention'"),
        ("7d", "vacuum: vacuum must be a mapping"),
    ],
)
def test_bad_values_are_reported(tmp_path: Path, value: str, problem: str) -> None:
    text = MODEL.replace("maxStaleness: 10m", f"maxStaleness: 10m\n        vacuum: {value}")
    with pytest.raises(ModelError) as caught:
        model_with(tmp_path, text)
    assert f"lattices[0].{problem}" in str(caught.value)


class FailingSpark(FakeSpark):
    """A session whose every statement fails, as VACUUM does on a table it cannot list."""

    def __init__(self) -> None:
        super().__init__({})
        self.statements: list[str] = []

    def sql(self, statement: str) -> None:
        self.statements.append(statement)
        raise RuntimeError(f"cannot run {statement.split()[0]}\nstack trace")


def test_a_failed_vacuum_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    model = model_with(tmp_path, MODEL)
    tile = next(t for t in declared_targets(model, "w") if t.spec is not None)
    spark = FailingSpark()
    warning = vacuum.after_build(spark, model, tile)  # type: ignore[arg-type]
    assert warning == (
        "vacuum failed; replaced versions' files stay until the next build: cannot run VACUUM"
    )
    lite, full = spark.statements  # LITE first; when it refuses, the listing
    assert (
        lite.endswith(" LITE") and lite.startswith("VACUUM delta.`") and not full.endswith("LITE")
    )


def test_a_vacuum_is_due_a_quarter_retention_after_the_last(tmp_path: Path) -> None:
    log = tmp_path / "tile" / "_delta_log"
    log.mkdir(parents=True)
    table = str(tmp_path / "tile")
    now = 1_000_000.0
    assert vacuum.due(None, table, 3600, now)  # never vacuumed, creation unknown
    first = log / "00000000000000000000.json"
    first.write_text(json.dumps({"commitInfo": {"timestamp": int((now - 100) * 1000)}}) + "\n")
    assert not vacuum.due(None, table, 3600, now)  # created 100 s ago: nothing to vacuum yet
    assert vacuum.due(None, table, 3600, now + 900)  # a quarter of an hour's retention later
    assert vacuum.due(None, table, 0, now)  # no retention: after every build
    info = log / vacuum.LAST_VACUUM_INFO
    info.write_text("{}")
    os.utime(info, (now - 10, now - 10))
    assert not vacuum.due(None, table, 3600, now)  # vacuumed 10 s ago
    assert vacuum.due(None, table, 3600, now + 890)
    week = 7 * 86400
    assert not vacuum.due(None, table, week, now + 86000)
    assert vacuum.due(None, table, week, now + 86400)  # at most a day apart
