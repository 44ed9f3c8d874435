"""Catalog status, the rewriter's view state, and the table record — pure, no Spark."""

from __future__ import annotations

from dataclasses import replace

from mvlattice.jobs.freshness import (
    Attempt,
    Facts,
    assess,
    attempt_running,
    interrupted,
)
from mvlattice.jobs.record import TileRecord, from_properties, spec_from_json, spec_json
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
)
NOW = 1_700_000_100.0


def facts(**kw) -> Facts:
    base = dict(
        record=RECORD, current={"shop.sales": 2, "shop.product": 1}, definition="SELECT …", now=NOW
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
    assert attempt_running(attempt, "here", alive=True, now=NOW)
    assert not attempt_running(attempt, "here", alive=False, now=NOW)
    assert attempt_running(replace(attempt, host="there"), "here", alive=False, now=NOW)
    assert not attempt_running(replace(attempt, host="there"), "here", False, now=NOW + 1e6)
    assert not attempt_running(replace(attempt, status="ok"), "here", alive=True, now=NOW)
    dead = interrupted(attempt)
    assert dead.status == "failed" and dead.error == "interrupted: process 123 ended mid-build"


def test_record_round_trips_through_table_properties() -> None:
    properties = props(RECORD)
    assert properties["mvlattice.sourceVersions"] == '{"shop.product": 1, "shop.sales": 2}'
    assert properties["mvlattice.builtAt"] == "2023-11-14T22:13:20.000+00:00"
    assert from_properties({**properties, "delta.appendOnly": "false"}) == RECORD
    assert from_properties({"delta.appendOnly": "false"}) is None
    assert from_properties({**properties, "mvlattice.rows": "many"}) is None
    assert RECORD.spec == TileSpec("star", ("the_year",), RECORD.measures)
    assert spec_from_json(spec_json(RECORD.spec)) == RECORD.spec
