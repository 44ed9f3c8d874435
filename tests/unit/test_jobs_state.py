"""The state store, garbage choice, file fingerprints and local Delta log reading — no Spark."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mvlattice.delta import log as deltalog
from mvlattice.delta.sources import fingerprint
from mvlattice.jobs.garbage import BuiltTile, choose_garbage
from mvlattice.jobs.state import Outcome, StateStore, state_directory

DAY = 86400.0


def test_attempts_outcomes_hits_and_plans(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "s" / "catalog.sqlite")
    store.begin("mvlattice.t", 10.0)
    attempt = store.attempt("mvlattice.t")
    assert attempt is not None and attempt.status == "building"
    assert attempt.pid == os.getpid() and attempt.host == store.host
    store.finish(Outcome("mvlattice.t", "failed", "full", "not built yet", None, 10.0, 12.0, "x"))
    again = StateStore(tmp_path / "s" / "catalog.sqlite")  # persisted
    assert again.attempt("mvlattice.t").status == "failed"
    assert again.attempt("mvlattice.t").error == "x"
    store.finish(Outcome("mvlattice.t", "built", "full", "r", 5, 13.0, 14.0, trigger="cli"))
    assert store.attempt("mvlattice.t").status == "ok"
    assert [o.status for o in store.outcomes("mvlattice.t")] == ["built", "failed"]
    store.record_hit("mvlattice.t", 20.0)
    store.record_hit("mvlattice.t", 15.0)
    usage = store.usage("mvlattice.t")
    assert (usage.hits, usage.last_used) == (2, 20.0)
    assert store.plan("star") is None
    store.save_plan("star", [{"lattice": "star", "dimensions": [], "measures": []}], 1.0)
    assert store.plan("star") == [{"lattice": "star", "dimensions": [], "measures": []}]
    store.forget("mvlattice.t")
    assert store.attempt("mvlattice.t") is None and store.usage("mvlattice.t") is None


def test_state_lives_in_the_warehouse_or_a_local_cache_for_uris(tmp_path: Path) -> None:
    assert state_directory(str(tmp_path)) == tmp_path / "_mvlattice"
    remote = state_directory("s3a://bucket/wh")
    assert remote.parts[-3:-1] == ("mvlattice", "state") and len(remote.name) == 12


def test_garbage_is_what_left_the_plan_or_the_model_or_went_unused() -> None:
    now = 100 * DAY
    tiles = [
        BuiltTile("mvlattice.kept", "/k", "star", "planned", now - 50 * DAY),
        BuiltTile("mvlattice.dropped", "/d", "star", "planned", now),
        BuiltTile("mvlattice.undeclared", "/u", "star", "declared", now),
        BuiltTile("mvlattice.declared", "/x", "star", "declared", now - 90 * DAY),
        BuiltTile("mvlattice.read_by_mv", "/r", "star", "auto", now - 90 * DAY),
        BuiltTile("mvlattice.idle", "/i", "star", "auto", now - 90 * DAY, now - 40 * DAY),
        BuiltTile("mvlattice.busy", "/b", "star", "auto", now - 90 * DAY, now - DAY),
        BuiltTile("mvlattice.unplanned", "/n", "other", "planned", now - 90 * DAY),
    ]
    keep = frozenset({"mvlattice.declared", "mvlattice.read_by_mv"})
    plans = {"star": frozenset({"mvlattice.kept"}), "other": None}
    chosen = choose_garbage(tiles, keep=keep, plans=plans, unused_seconds=None, now=now)
    assert {g.name: g.reason for g in chosen} == {
        "mvlattice.dropped": "no longer in the plan of lattice 'star'",
        "mvlattice.undeclared": "no longer declared in the model",
    }
    idle = choose_garbage(tiles, keep=keep, plans=plans, unused_seconds=30 * DAY, now=now)
    reasons = {g.name: g.reason for g in idle}
    assert reasons["mvlattice.idle"] == "last used 40.0 days ago (limit 30.0 days)"
    assert reasons["mvlattice.kept"] == "built, never used, 50.0 days ago (limit 30.0 days)"
    assert reasons["mvlattice.unplanned"].startswith("built, never used, 90.0 days")
    assert "mvlattice.busy" not in reasons and "mvlattice.read_by_mv" not in reasons


def test_fingerprint_of_a_non_delta_table_changes_with_its_files(tmp_path: Path) -> None:
    table = tmp_path / "t"
    table.mkdir()
    (table / "part-0.parquet").write_bytes(b"abc")
    (table / "_SUCCESS").write_bytes(b"")
    (table / ".part-0.parquet.crc").write_bytes(b"zz")
    first = fingerprint(None, str(table))
    assert first.startswith("files=1;bytes=3;mtime=")
    (table / "part-1.parquet").write_bytes(b"de")
    assert fingerprint(None, str(table)).startswith("files=2;bytes=5;")
    assert fingerprint(None, str(tmp_path / "none")) == "files=0;bytes=0;mtime=0.000"


def write_commit(log: Path, version: int, actions: list[dict]) -> None:
    (log / f"{version:020d}.json").write_text("\n".join(json.dumps(a) for a in actions))


def test_local_delta_log_versions_commits_and_checksums(tmp_path: Path) -> None:
    table = tmp_path / "t"
    log = table / "_delta_log"
    log.mkdir(parents=True)
    assert deltalog.latest_version(None, str(tmp_path / "nothing")) is None
    write_commit(
        log,
        0,
        [
            {"commitInfo": {"operation": "WRITE", "timestamp": 1_000}},
            {"add": {"path": "a.parquet", "dataChange": True}},
        ],
    )
    write_commit(
        log,
        1,
        [
            {"commitInfo": {"operation": "WRITE", "timestamp": 2_500}},
            {"add": {"path": "b.parquet", "dataChange": True}},
        ],
    )
    (log / "00000000000000000001.crc").write_text(
        json.dumps({"tableSizeBytes": 7, "numFiles": 2, "metadata": {"configuration": {}}})
    )
    (log / "_staged_commits").mkdir()
    assert deltalog.latest_version(None, str(table)) == 1
    assert deltalog.latest_version(None, f"file://{table}") == 1
    commits = deltalog.commits(None, str(table), 0, 1)
    assert [c.added_files for c in commits] == [("a.parquet",), ("b.parquet",)]
    assert deltalog.commits(None, str(table), 1, 2) is None  # version 2 does not exist
    assert deltalog.commit_time(None, str(table), 1) == pytest.approx(2.5)
    assert deltalog.checksum(None, str(table), 1)["numFiles"] == 2
    assert deltalog.checksum(None, str(table), 0) is None


def test_table_id_and_last_data_commit_from_a_local_log(tmp_path: Path) -> None:
    table = tmp_path / "t"
    log = table / "_delta_log"
    log.mkdir(parents=True)
    write_commit(log, 0, [{"commitInfo": {"operation": "CREATE"}}, {"metaData": {"id": "first"}}])
    write_commit(
        log,
        1,
        [
            {"commitInfo": {"operation": "WRITE", "userMetadata": "ours"}},
            {"add": {"path": "a", "dataChange": True}},
        ],
    )
    write_commit(
        log,
        2,
        [
            {"commitInfo": {"operation": "OPTIMIZE"}},
            {"add": {"path": "big", "dataChange": False}},
            {"remove": {"path": "a", "dataChange": False}},
        ],
    )
    write_commit(log, 3, [{"commitInfo": {"operation": "VACUUM END"}}])
    # no checksum files: the newest commit carrying metaData answers
    assert deltalog.table_id(None, str(table), 3) == "first"
    (log / "00000000000000000003.crc").write_text(json.dumps({"metadata": {"id": "from-crc"}}))
    assert deltalog.table_id(None, str(table), 3) == "from-crc"  # the checksum, one read
    # OPTIMIZE and VACUUM change no rows: the last data change is still version 1's
    last = deltalog.last_data_commit(None, str(table), 3)
    assert last is not None and (last.version, last.user_metadata) == (1, "ours")
    write_commit(log, 4, [{"commitInfo": {"operation": "DELETE"}}, {"remove": {"path": "big"}}])
    assert deltalog.last_data_commit(None, str(table), 4).operation == "DELETE"
    # commits cleaned up behind a checkpoint: without Spark neither is known
    (log / "00000000000000000000.json").unlink()
    (log / "00000000000000000001.json").unlink()
    assert deltalog.table_id(None, str(table), 2) is None
    assert deltalog.last_data_commit(None, str(table), 3) is None
