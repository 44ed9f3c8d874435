"""A real `mvlattice serve` process on a loopback port for the service tests, its tiny shop
model and data, and a small HTTP client. No tests here."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support import move_next_run, wait_until

TOKEN = "service-test-token-0123456789"
MAX_BODY = 4096
MAX_ROWS = 50

MODEL = """
version: "1.0"
defaultSchema: shop
schemas:
  - name: shop
    type: delta
    location: {data}
    tables:
      - name: sales
        notNull: [product_id]
        foreignKeys:
          - {{columns: [product_id], references: product, referencedColumns: [product_id]}}
      - name: product
        primaryKey: [product_id]
    lattices:
      - name: star
        sql:
          - select 1 from shop.sales as s
          - join shop.product as p using (product_id)
        algorithm: false
        defaultMeasures:
          - agg: count
          - {{agg: sum, args: units}}
        tiles:
          - dimensions: [category, year]
    materializations:
      - view: units_by_year
        table: units_by_year
        sql: select year, sum(units) as units from shop.sales group by year
        refresh: {{cron: "{cron}"}}
"""
SCHEDULED = "shop.units_by_year"  # the model's one scheduled target, a materialization

PRODUCT_DDL = "product_id INT, category STRING, brand STRING"
SALES_DDL = "sale_id INT, product_id INT, year INT, units INT"


def products() -> list[tuple]:
    return [(i, f"c{i % 3}", f"b{i % 5}") for i in range(10)]


def sales(first: int, count: int) -> list[tuple]:
    return [(i, i % 10, 2020 + i % 2, i % 7) for i in range(first, first + count)]


def make_shop(spark: Any, root: Path, cron: str = "* * * * *") -> Path:
    """Delta tables under `root/data`, the model at `root/shop.yaml` (its materialization
    refreshed on `cron`); returns the model."""
    data = root / "data"
    spark.createDataFrame(products(), PRODUCT_DDL).write.format("delta").save(str(data / "product"))
    spark.createDataFrame(sales(0, 200), SALES_DDL).write.format("delta").save(str(data / "sales"))
    model = root / "shop.yaml"
    model.write_text(textwrap.dedent(MODEL.format(data=data, cron=cron)))
    (root / "token").write_text(TOKEN + "\n")
    return model


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    url: str
    process: subprocess.Popen
    log: Path
    warehouse: Path
    model: Path

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = TOKEN,
        raw: bytes | None = None,
        timeout: float = 300.0,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        """(status, JSON body — or text when not JSON)."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        if token is not None:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status, payload = response.status, response.read()
        except urllib.error.HTTPError as exc:
            status, payload = exc.code, exc.read()
        try:
            return status, json.loads(payload)
        except ValueError:
            return status, payload.decode()

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self, timeout: float = 180.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(30)
        return self.process.returncode


def start(
    model: Path,
    warehouse: Path,
    log: Path,
    *,
    wait: float = 600.0,
    extra: tuple[str, ...] = (),
    files: tuple[int, int] | None = None,
) -> Server:
    """`files`: the (soft, hard) limit on open files the server process starts with."""
    port = free_port()
    command = [
        sys.executable, "-m", "mvlattice.cli.main", "serve", str(model),
        "--port", str(port), "--warehouse", str(warehouse), "--master", "local[2]",
        "--conf", "spark.sql.shuffle.partitions=2", "--conf", "spark.driver.memory=1g",
        "--token-file", str(model.parent / "token"),
        "--max-body-bytes", str(MAX_BODY), "--max-rows", str(MAX_ROWS), *extra,
    ]  # fmt: skip
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    out = log.open("w")
    process = subprocess.Popen(
        command, stdout=out, stderr=subprocess.STDOUT, env=env, preexec_fn=_file_limit(files)
    )
    server = Server(f"http://127.0.0.1:{port}", process, log, warehouse, model)

    def healthy() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"the server exited ({process.returncode}):\n{server.output()}")
        try:
            return server.call("GET", "/healthz", token=None, timeout=5)[0] == 200
        except OSError:
            return False

    try:
        wait_until(healthy, wait, lambda: f"the server to start:\n{server.output()}", 0.2)
    except AssertionError:
        server.stop()
        raise
    return server


def _file_limit(files: tuple[int, int] | None) -> Any:
    if files is None:
        return None

    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_NOFILE, files)

    return limit


def metric(server: Server, name: str) -> float:
    status, text = server.call("GET", "/metrics")
    assert status == 200
    found = re.search(rf"^{name} (\S+)$", text, re.MULTILINE)
    assert found, f"no {name} in /metrics"
    return float(found.group(1))


def wait_for_job(server: Server, job_id: str, timeout: float = 600.0) -> dict:
    def finished() -> dict | None:
        status, job = server.call("GET", f"/v1/jobs/{job_id}")
        assert status == 200, job
        return job if job["status"] in ("succeeded", "failed") else None

    return wait_until(finished, timeout, f"job {job_id} to finish", interval=0.2)


def schedule_missed_run(model: Path, warehouse: Path, cron: str) -> None:
    """Leave the job store of the scheduler that `serve` will run as if the service had been
    down over a run of the materialization: the service makes that run as soon as it starts (a
    missed run, within the grace time) instead of at a cron time. `cron` is the model's."""
    from mvlattice.jobs.cron import ScheduledTarget
    from mvlattice.jobs.scheduler import Scheduler, scheduler_key
    from mvlattice.jobs.state import state_directory
    from mvlattice.settings import resolve_warehouse

    where = resolve_warehouse(warehouse)  # the job store and its key as `serve` finds them
    store = state_directory(where) / "scheduler.sqlite"
    target = ScheduledTarget("materialization", SCHEDULED, cron)

    def not_here(_kind: str, _name: str) -> tuple[bool, str]:
        return True, "not run"

    seeding = Scheduler(scheduler_key(str(model), where), (target,), not_here, store)
    seeding.start()  # stores the job as the service's scheduler will read it back
    seeding.shutdown()
    past = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=30)
    move_next_run(store, seeding.job_id(target), past)
