"""Ctrl-C while a command waits on Spark: one line and exit code 130, no traceback. PySpark's
own handler cancelled jobs through py4j inside the signal handler, on the main thread that was
itself in a py4j call: py4j logged two tracebacks ("reentrant call"), the jobs ran on, and the
JVM outlived the command (holding its output open) (issue 36)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.test_service_spark_lost import java_children
from tests.integration.test_service_support import make_shop
from tests.support import wait_until

pytestmark = pytest.mark.spark

# A query with no end in sight: Spark is busy with it, and the CLI waits in one py4j call.
ENDLESS = "select sum(a.id + b.id) as s from range(1000000) a cross join range(1000000) b"


def test_ctrl_c_during_a_spark_query_is_one_line_and_exit_130(spark, tmp_path: Path) -> None:
    model = make_shop(spark, tmp_path)
    command = [
        sys.executable, "-m", "mvlattice.cli.main", "sql", str(model), ENDLESS,
        "--warehouse", str(tmp_path / "warehouse"), "--master", "local[2]",
        "--conf", "spark.driver.memory=1g",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: java_children(process.pid), 120, "the command's JVM to start")
        time.sleep(15)  # the session is up and the query is running (or about to)
        assert process.poll() is None, process.communicate()
        os.kill(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=120)  # the JVM, too, has let go of the pipes
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, (out, err)
    lines = err.strip().splitlines()
    assert lines[-1] == "mvlattice: interrupted", err
    assert "Traceback" not in err and "ERROR" not in err, err
    # before it, only the progress lines of Spark's start-up, said before the JVM was launched
    assert lines[0].endswith("] starting Spark (local[2]) …"), err
    assert all("Spark" in line for line in lines[:-1]), err
    assert out == ""
