"""A `serve` whose Spark JVM dies (killed here; an OutOfMemoryError that stops the context is
the same to it) says so: `/healthz` answers 503 `spark_down`, a query that needs Spark gets
503 with one line instead of a 500 for every later request, and the process exits with
EXIT_SPARK_LOST for its supervisor to restart it (issue 30)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from mvlattice.http.spark_watch import EXIT_SPARK_LOST
from tests.integration.test_service_support import make_shop, start
from tests.support import wait_until

pytestmark = pytest.mark.spark

SPARK_QUERY = "select year, count(*) as n from shop.sales group by year"


def java_children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        name, fields = stat.split("(", 1)[1].rsplit(")", 1)
        if int(fields.split()[1]) == pid and name == "java":
            found.append(int(entry))
    return found


def test_a_dead_jvm_is_reported_and_the_service_exits_for_its_supervisor(
    spark, tmp_path: Path
) -> None:
    model = make_shop(spark, tmp_path)
    server = start(model, tmp_path / "warehouse", tmp_path / "server.log",
                   extra=("--no-scheduler", "--query-timeout", "300"))  # fmt: skip
    # (a loaded machine once took over 60 s for the new JVM's first query: a 408, not this test)
    try:
        assert f"status pages at {server.url}/ui/" in server.output()  # where to look
        status, doc = server.call("POST", "/v1/query", {"sql": SPARK_QUERY})
        assert status == 200, (doc, server.output())
        jvms = java_children(server.process.pid)
        assert len(jvms) == 1, jvms
        os.kill(jvms[0], signal.SIGKILL)

        def down() -> dict | None:
            status, doc = server.call("GET", "/healthz", token=None, timeout=5)
            return doc if status == 503 else None

        health = wait_until(down, 15, "/healthz to say Spark is down", interval=0.2)
        assert health["status"] == "spark_down" and health["spark"] == "down"
        status, doc = server.call("POST", "/v1/query", {"sql": SPARK_QUERY}, timeout=30)
        assert status == 503 and "Spark is down" in doc["error"]["message"], doc
        assert server.process.wait(60) == EXIT_SPARK_LOST
        assert f"exiting with code {EXIT_SPARK_LOST}" in server.output()
        # No request failed as a bug (500). A thread of py4j's may still print the lost
        # gateway's traceback as the JVM goes (seen once in four runs): not asserted here.
        assert "internal error" not in server.output()
    finally:
        server.stop()
