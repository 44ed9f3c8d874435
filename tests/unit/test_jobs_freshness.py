"""Catalog status, the rewriter's view state, and the table record — pure, no Spark."""

from __future__ import annotations

from dataclasses import replace

from mvlattice.delta.commits import parse_commit
from mvlattice.jobs.freshness import (
    Attempt,
    Facts,
    assess,
    attempt_running,
    interrupted,
)
from mvlattice.jobs.identity import RECREATED, UNKNOWN, identity_changes, tile_change
from mvlattice.jobs.record import (
    Snapshot,
    TileRecord,
    commit_tag,
    from_properties,
    record_from_tag,
    spec_from_json,
    spec_json,
)
from mvlattice.jobs.record import to_properties as props
from mvlattice.lattice.lattice import Measure, TileSpec

RECORD = TileRecord(
    "tile",
    "mvlattice.star__the_year__abc123",
    "SELECT …",
    (("shop.product", 1), ("shop.sales", 2)),
    rows=3,
    built_at=1_700_000_000.0,
    build_seconds=1.5,
    built_from="star",
    lattice="star",
    dimensions=("the_year",),
    measures=(Measure("count"), Measure("count", ("brand",), True)),
    source_ids=(("shop.product", "id-p"), ("shop.sales", "id-s")),
)
NOW = 1_700_000_100.0
IDS = {"shop.sales": "id-s", "shop.product": "id-p"}


def facts(**kw) -> Facts:
    current = kw.pop("current", {"shop.sales": 2, "shop.product": 1})
    ids = kw.pop("ids", IDS)
    base = dict(
        record=RECORD,
        current=Snapshot(current, ids),
        definition="SELECT …",
        tile_change=None,
        now=NOW,
    )
    base.update(kw)
    return Facts(**base)


def state(**kw) -> tuple[str, str, bool]:
    found = assess(facts(**kw))
    return found.status, found.view.code, found.view.usable


def test_fresh_when_every_recorded_version_is_current() -> None:
    assert state() == ("fresh", "FRESH", True)
    assert state(building=True) == ("building", "FRESH", True)  # old data is still exact


def test_stale_when_a_source_moved_unless_within_max_staleness() -> None:
    moved = {"shop.sales": 3, "shop.product": 1}
    assert state(current=moved) == ("stale", "STALE", False)
    found = assess(facts(current=moved, max_staleness=600, stale_since=NOW - 60))
    assert (found.status, found.view.code, found.view.usable) == ("stale", "STALE_ACCEPTED", True)
    assert found.changed == ("shop.sales",) and found.staleness_seconds == 60
    assert state(current=moved, max_staleness=30, stale_since=NOW - 60)[1] == "STALE"
    # when the change happened cannot be told: never accepted
    assert state(current=moved, max_staleness=600, stale_since=None)[1] == "STALE"
    unknown = {"shop.sales": 2, "shop.product": None}
    assert state(current=unknown)[:2] == ("stale", "STALE")


def test_a_recreated_source_is_stale_and_never_accepted() -> None:
    recreated = {**IDS, "shop.sales": "id-s2"}  # same versions, another table
    found = assess(facts(ids=recreated, max_staleness=1e9, stale_since=NOW))
    assert (found.status, found.view.code, found.view.usable) == ("stale", "STALE", False)
    assert found.changed == ("shop.sales",)
    assert found.view.message == (
        "shop.sales was recreated (table id changed); refresh rebuilds it"
    )
    older = assess(facts(record=replace(RECORD, source_ids=None), max_staleness=1e9))
    assert (older.status, older.view.code) == ("stale", "STALE")
    assert "unknown (not recorded: built by an older mvlattice)" in older.view.message
    assert state(ids={**IDS, "shop.product": None})[:2] == ("stale", "STALE")


def test_someone_elses_commit_to_the_tile_makes_it_stale() -> None:
    change = "version 4 of the table (DELETE) was not written by mvlattice"
    found = assess(facts(tile_change=change, max_staleness=1e9, stale_since=NOW))
    assert (found.status, found.view.code, found.view.usable) == ("stale", "STALE", False)
    assert found.view.message == f"{change}; refresh rebuilds it"


def test_identity_decision_from_recorded_and_current_ids() -> None:
    versions = {"a": 3, "b": 3, "c": "files=1;bytes=2;mtime=3", "d": None}
    recorded = {"a": "x", "b": "y", "c": None, "d": None}
    assert identity_changes(recorded, {"a": "x", "b": "y"}, versions) == ()
    (moved,) = identity_changes(recorded, {"a": "x", "b": "z"}, versions)
    assert (moved.source, moved.kind) == ("b", RECREATED)
    kinds = [(c.source, c.kind) for c in identity_changes({}, {"a": "x", "b": None}, versions)]
    assert kinds == [("a", UNKNOWN), ("b", UNKNOWN)]  # only Delta (int) versions carry ids


def test_tile_change_compares_the_last_writer_with_the_records_tag() -> None:
    tag = commit_tag(RECORD)
    assert tag.startswith("mvlattice record {") and record_from_tag(tag) == RECORD
    legacy = f"mvlattice build {RECORD.name} at 2023-11-14T22:13:20.000+00:00"
    by_name = [{"commitInfo": {"userMetadata": legacy}}, {"add": {"path": "a"}}]
    tagged_by_name = parse_commit(4, by_name)
    assert tile_change(RECORD, tagged_by_name) is None  # a tile an older mvlattice wrote
    written = {"commitInfo": {"operation": "CREATE OR REPLACE", "userMetadata": tag}}
    ours = parse_commit(5, [written, {"add": {"path": "a"}}])
    assert tile_change(RECORD, ours) is None
    theirs = parse_commit(6, [{"commitInfo": {"operation": "DELETE"}}, {"remove": {"path": "a"}}])
    assert tile_change(RECORD, theirs) == (
        "version 6 of the table (DELETE) was not written by mvlattice"
    )
    other_build = parse_commit(7, [{"commitInfo": {"operation": "WRITE", "userMetadata": "x"}}])
    assert tile_change(RECORD, other_build) is not None
    assert tile_change(RECORD, None) == (
        "its newest data change can no longer be read from its Delta log"
    )
    older = replace(RECORD, source_ids=None)  # written before commits were tagged
    assert tile_change(older, ours) == (
        "it was built by an older mvlattice (no source table ids, no commit tag)"
    )


def test_a_tag_that_is_not_a_record_carries_none() -> None:
    tag = commit_tag(RECORD)
    for text in (None, "", "x", "mvlattice record ", "mvlattice record [1]", tag[:-1],
                 "mvlattice record {\"mvlattice.rows\": 1}",
                 tag.replace('"mvlattice.rows":"', '"mvlattice.rows":"x')):  # fmt: skip
        assert record_from_tag(text) is None, text


def test_failed_and_building_attempts() -> None:
    failed = Attempt("failed", NOW - 5, NOW - 1, "boom")
    moved = {"shop.sales": 3, "shop.product": 1}
    found = assess(facts(current=moved, attempt=failed))
    assert (found.status, found.view.code) == ("failed", "FAILED")
    assert "last refresh failed: boom" in found.view.message
    assert state(attempt=failed) == ("fresh", "FRESH", True)  # the data is still exact
    assert state(current=moved, building=True)[:2] == ("building", "BUILDING")
    assert state(record=None) == ("missing", "MISSING", False)
    assert state(record=None, attempt=failed) == ("failed", "FAILED", False)
    assert state(record=None, building=True) == ("building", "BUILDING", False)


def test_a_changed_definition_is_never_usable() -> None:
    found = assess(facts(definition="SELECT other", max_staleness=1e9, stale_since=NOW))
    assert (found.status, found.view.code, found.view.usable) == ("stale", "STALE", False)


def test_an_attempt_left_by_a_dead_process_is_interrupted() -> None:
    attempt = Attempt("building", NOW - 10, pid=123, host="here")
    assert attempt_running(attempt, leased=True)  # its builder renews the target's lease
    assert not attempt_running(attempt, leased=False)  # whatever process has pid 123 now
    assert not attempt_running(replace(attempt, status="ok"), leased=True)
    dead = interrupted(attempt)
    assert dead.status == "failed" and dead.error == "interrupted: process 123 ended mid-build"


def test_record_round_trips_through_table_properties() -> None:
    properties = props(RECORD)
    assert properties["mvlattice.sourceVersions"] == '{"shop.product": 1, "shop.sales": 2}'
    assert properties["mvlattice.builtAt"] == "2023-11-14T22:13:20.000+00:00"
    assert from_properties({**properties, "delta.appendOnly": "false"}) == RECORD
    assert from_properties({"delta.appendOnly": "false"}) is None
    assert from_properties({**properties, "mvlattice.rows": "many"}) is None
    assert properties["mvlattice.sourceIds"] == '{"shop.product": "id-p", "shop.sales": "id-s"}'
    assert RECORD.snapshot == Snapshot(RECORD.versions, IDS)
    # a tile recorded before ids were kept stays readable; its identity is unknown
    older = {k: v for k, v in properties.items() if k != "mvlattice.sourceIds"}
    assert from_properties(older) == replace(RECORD, source_ids=None)
    assert from_properties(older).snapshot.ids == {}
    assert from_properties({**properties, "mvlattice.sourceIds": "[1]"}) is None
    assert RECORD.spec == TileSpec("star", ("the_year",), RECORD.measures)
    assert spec_from_json(spec_json(RECORD.spec)) == RECORD.spec
