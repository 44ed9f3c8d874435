"""The same mvlattice code on a real Spark standalone cluster (master + worker on loopback)."""

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


def test_foodmart_on_a_standalone_cluster(tmp_path: Path) -> None:
    warehouse = tmp_path / "warehouse"
    with StandaloneCluster(tmp_path / "cluster", workers=1, cores=2, memory="2g") as cluster:
        done = subprocess.run(
            [sys.executable, str(DRIVER), cluster.master_url, str(warehouse)],
            capture_output=True,
            text=True,
            timeout=900,
            cwd=REPO,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        report = json.loads(done.stdout.strip().splitlines()[-1])
        status = cluster.status()
    assert report["master"] == cluster.master_url
    assert report["months"] == MONTHS_1997
    executors = [e for e in report["executors"] if e["id"] != "driver"]
    assert executors and sum(e["tasks"] for e in executors) > 0, report["executors"]
    apps = status["activeapps"] + status["completedapps"]
    assert report["app_id"] in [a["id"] for a in apps]
