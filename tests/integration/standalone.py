"""A Spark standalone cluster (one master, N workers) on loopback, from the installed PySpark."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pyspark

from tests.support import wait_until

SPARK_CLASS = Path(pyspark.__file__).parent / "bin" / "spark-class"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class StandaloneCluster:
    workdir: Path
    workers: int = 1
    cores: int = 1
    memory: str = "1g"
    port: int = field(default_factory=free_port)
    ui_port: int = field(default_factory=free_port)
    processes: list[subprocess.Popen] = field(default_factory=list)

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def status(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=5) as r:
            return json.load(r)

    def __enter__(self) -> StandaloneCluster:
        try:
            self._start(
                "master",
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--webui-port",
                str(self.ui_port),
            )
            self._wait(lambda s: True, "the master to answer")
            for i in range(self.workers):
                self._start(
                    f"worker{i}",
                    "org.apache.spark.deploy.worker.Worker",
                    self.master_url,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    str(self.cores),
                    "--memory",
                    self.memory,
                    "--webui-port",
                    str(free_port()),
                    "--work-dir",
                    str(self.workdir / f"work{i}"),
                )
            self._wait(lambda s: s.get("aliveworkers") == self.workers, "the workers to register")
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _start(self, name: str, cls: str, *args: str) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        log = (self.workdir / f"{name}.log").open("wb")
        env = dict(os.environ, SPARK_LOG_DIR=str(self.workdir), SPARK_NO_DAEMONIZE="1")
        self.processes.append(
            subprocess.Popen(
                [str(SPARK_CLASS), cls, *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        )

    def _wait(self, ready, what: str, timeout: float = 120.0) -> None:
        def done() -> bool:
            try:
                if ready(self.status()):
                    return True
            # ValueError: a master still starting answers /json/ with its HTML page.
            except (OSError, ValueError):
                pass
            if any(p.poll() is not None for p in self.processes):
                raise RuntimeError(f"a Spark process ended before {what}; logs in {self.workdir}")
            return False

        wait_until(done, timeout, f"{what}; logs in {self.workdir}", interval=0.5)

    def stop(self) -> None:
        """Stop every process group, politely then firmly; safe to call twice."""
        for proc in reversed(self.processes):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.processes:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        self.processes.clear()
