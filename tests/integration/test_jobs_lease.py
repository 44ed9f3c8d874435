"""Builds across processes (issue 18): two processes refreshing one tile build it once (the
other reports it busy); a dead builder's attempt is never "building", whatever process has its
PID now; a tile built by the CLI is read by a running `serve` without a restart; a workspace on
a second warehouse whose table names coincide with the first's is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

from mvlattice.jobs.lease import Leases
from mvlattice.jobs.state import StateStore
from mvlattice.workspace import Workspace
from tests.integration import test_service_support as service
from tests.integration.test_jobs_support import make_shop, tile_name

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[2]
DIMS = ("brand", "the_year")
CHILD_SPARK = ("--master", "local[1]", "--conf", "spark.sql.shuffle.partitions=1",
               "--conf", "spark.driver.memory=512m")  # fmt: skip

# A second process: starts Spark, says it is ready, waits for the other, then refreshes.
REFRESHER = textwrap.dedent("""
    import json, sys, time
    from pathlib import Path
    from mvlattice.workspace import Workspace

    model, warehouse, me, other, tile = sys.argv[1:]
    conf = {"spark.sql.shuffle.partitions": "1", "spark.driver.memory": "512m"}
    ws = Workspace(model, warehouse=warehouse, master="local[1]", conf=conf)
    ws.spark
    Path(me).touch()
    deadline = time.monotonic() + 600
    while not Path(other).exists():  # a barrier: both refresh at once
        if time.monotonic() > deadline:
            sys.exit("the other refresher was not ready after 600 s")
        time.sleep(0.005)  # the polling interval (this child cannot import tests.support)
    print(json.dumps(ws.refresh(tile=tile).to_json()), flush=True)
""")


def run_child(args: list[str], **kw) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, *args], cwd=REPO, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, **kw,
    )  # fmt: skip


def tile_location(warehouse: Path, tile: str) -> Path:
    return warehouse / "_mvlattice" / "tiles" / tile.split(".", 1)[1]


def builds(spark, location: Path) -> int:
    """How many commits of the tile wrote its data (a build's commit carries its tag; VACUUM's
    bookkeeping commits do not)."""
    history = spark.sql(f"DESCRIBE HISTORY delta.`{location}`").collect()
    return sum(bool(row["userMetadata"]) for row in history)


def test_two_processes_refreshing_one_tile_build_it_once(spark, tmp_path: Path) -> None:
    warehouse = tmp_path / "wh"
    model = make_shop(spark, warehouse, "lease_two", f"- dimensions: [{', '.join(DIMS)}]\n")
    tile = tile_name(Workspace(model, warehouse=str(warehouse)), DIMS)  # (Spark not started)
    script = tmp_path / "refresher.py"
    script.write_text(REFRESHER)
    ready = [tmp_path / "ready-a", tmp_path / "ready-b"]
    children = [
        run_child([str(script), str(model), str(warehouse), str(me), str(other), tile])
        for me, other in (ready, ready[::-1])
    ]
    results = []
    for child in children:
        out, err = child.communicate(timeout=900)
        assert child.returncode == 0, err
        (result,) = json.loads(out.strip().splitlines()[-1])["results"]
        results.append(result)
    statuses = sorted(r["status"] for r in results)
    assert statuses == ["built", "busy"], results
    busy = next(r for r in results if r["status"] == "busy")
    assert busy["reason"].startswith("skipped: being built by ") and " pid " in busy["reason"]
    assert busy["path"] == "none" and busy["error"] is None
    assert builds(spark, tile_location(warehouse, tile)) == 1
    assert Leases.for_warehouse(str(warehouse)).holder(tile) is None  # released
    store = StateStore.for_warehouse(str(warehouse))
    assert sorted(o.status for o in store.outcomes(tile)) == ["built", "busy"]
    assert store.attempt(tile).status == "ok"  # the busy one left the builder's attempt alone


def test_a_dead_builder_is_not_building_even_when_its_pid_lives(spark, warehouse: Path) -> None:
    model = make_shop(spark, warehouse, "lease_pid", f"- dimensions: [{', '.join(DIMS)}]\n")
    ws = Workspace(model, warehouse=str(warehouse))
    tile = tile_name(ws, DIMS)
    store = StateStore.for_warehouse(ws.warehouse)
    leases = Leases.for_warehouse(ws.warehouse)
    # A build that died mid-way, its PID now this live process's (a restarted container), and
    # its lease long expired.
    store.begin(tile, time.time() - 3600)
    dead = {"name": tile, "host": store.host, "pid": os.getpid(), "token": "dead",
            "acquired_at": time.time() - 3600, "expires_at": time.time() - 3540}  # fmt: skip
    leases.directory.mkdir(parents=True, exist_ok=True)
    leases._path(tile, ".json").write_text(json.dumps(dead))
    entry = next(e for e in ws.tiles() if e.name == tile)
    assert entry.status == "failed" and entry.last_error.startswith("interrupted")
    # Another builder holding a live lease is "building": refresh skips it, saying who.
    with leases.acquire(tile, "cli build") as other:
        store.begin(tile, time.time())
        assert next(e for e in ws.tiles() if e.name == tile).status == "building"
        (busy,) = ws.refresh(tile=tile).results
        assert busy.status == "busy" and busy.reason == (
            f"skipped: being built by {other.holder.describe()}"
        )
    store.begin(tile, time.time() - 60)  # that builder died too (its lease is gone)
    (built,) = ws.refresh(tile=tile).results  # the refresh proceeds
    assert built.status == "built", built
    assert next(e for e in ws.tiles() if e.name == tile).status == "fresh"


BY_CATEGORY = (
    "select category, sum(units) as units, count(*) as n from shop.sales s "
    "join shop.product p using (product_id) group by category"
)


def test_a_tile_built_by_the_cli_is_used_by_a_running_serve(spark, tmp_path: Path) -> None:
    model = service.make_shop(spark, tmp_path)
    warehouse = tmp_path / "warehouse"
    server = service.start(model, warehouse, tmp_path / "server.log", extra=("--no-scheduler",))
    try:
        status, before = server.call("POST", "/v1/query", {"sql": BY_CATEGORY})
        assert status == 200 and before["rewritten"] is False, before  # nothing built yet
        cli = run_child(["-m", "mvlattice.cli.main", "materialize", str(model),
                         "--warehouse", str(warehouse), "--json", *CHILD_SPARK])  # fmt: skip
        out, err = cli.communicate(timeout=900)
        assert cli.returncode == 0, err
        built = {r["kind"]: r for r in json.loads(out[out.find("{") :])["results"]}
        assert built["tile"]["status"] == "built"
        status, after = server.call("POST", "/v1/query", {"sql": BY_CATEGORY})
        assert status == 200, after
        assert after["rewritten"] is True and after["materializations"] == [built["tile"]["target"]]
        assert Counter(map(tuple, after["rows"])) == Counter(map(tuple, before["rows"]))
    finally:
        server.stop()
