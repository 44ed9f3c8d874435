"""The same mvlattice code on a real Spark standalone cluster (master + worker on loopback):
load, plan and build tiles, a query rewritten onto a tile, an append, a refresh."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.standalone import StandaloneCluster
from tests.integration.test_foundation import MONTHS_1997

pytestmark = pytest.mark.cluster

DRIVER = Path(__file__).with_name("cluster_driver.py")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict, str]:
    """The driver's report, the master's JSON status and the master URL; the cluster is
    stopped on the way out, whatever the driver did."""
    tmp = tmp_path_factory.mktemp("cluster")
    with StandaloneCluster(tmp / "cluster", workers=1, cores=2, memory="2g") as cluster:
        done = subprocess.run(
            [sys.executable, str(DRIVER), cluster.master_url, str(tmp / "warehouse")],
            capture_output=True,
            text=True,
            timeout=900,
            cwd=REPO,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        report = json.loads(done.stdout.strip().splitlines()[-1])
        return report, cluster.status(), cluster.master_url


def test_the_work_ran_on_the_cluster(run: tuple[dict, dict, str]) -> None:
    report, status, master_url = run
    assert report["master"] == master_url
    executors = [e for e in report["executors"] if e["id"] != "driver"]
    assert executors and sum(e["tasks"] for e in executors) > 0, report["executors"]
    apps = status["activeapps"] + status["completedapps"]
    assert report["app_id"] in [a["id"] for a in apps]


def test_the_month_query_reads_a_tile_built_on_the_cluster(run: tuple[dict, dict, str]) -> None:
    report, _, _ = run
    assert [status for _, status, _ in report["built"]] == ["built"] * len(report["built"])
    assert report["rewritten"]
    assert len(report["tiles_used"]) == 1
    assert report["tiles_used"][0] in report["status_built"]
    assert report["months"] == MONTHS_1997


def test_an_append_makes_tiles_stale_and_a_refresh_fresh(run: tuple[dict, dict, str]) -> None:
    report, _, _ = run
    tiles = set(report["status_built"])
    assert tiles and set(report["status_built"].values()) == {"fresh"}
    assert report["appended"] > 0
    assert report["status_appended"] == dict.fromkeys(tiles, "stale")
    assert {t for t, status, _ in report["refresh"] if status == "refreshed"} == tiles
    assert report["status_refreshed"] == dict.fromkeys(tiles, "fresh")
    # Rewritten again after the refresh: the base tables' new counts, read from the tile.
    assert report["rewritten_after"]
    assert report["months_after"] == report["months_base_after"]
    assert sum(report["months_after"].values()) == sum(MONTHS_1997.values()) + report["appended"]
