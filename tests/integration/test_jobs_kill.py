"""A refresh killed mid-write (its Spark job cancelled while data files are being written)
leaves the previous tile version readable, the catalog `failed` (never `fresh`), and the next
refresh succeeds. The merge runs on Spark here (a merge run in-process takes milliseconds and
has no Spark job to cancel)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from mvlattice.delta.log import latest_version
from mvlattice.jobs import local_merge
from mvlattice.jobs.tables import cancel
from mvlattice.workspace import Workspace
from tests.integration.test_jobs_support import (
    SALES_DDL,
    make_shop,
    rows_of,
    sales,
    tile_name,
    write,
)
from tests.support import wait_until

pytestmark = pytest.mark.spark

SCHEMA = "jobs_kill"
DIMS = ("brand", "category", "the_year", "the_month")


def test_killed_refresh_keeps_the_old_version(spark, warehouse: Path, monkeypatch) -> None:
    monkeypatch.setattr(local_merge, "MAX_ROWS", 0)
    model = make_shop(spark, warehouse, SCHEMA, f"- dimensions: [{', '.join(DIMS)}]\n")
    ws = Workspace(model, warehouse=str(warehouse))
    assert ws.materialize().ok
    tile = tile_name(ws, DIMS)
    location = Path(ws.warehouse) / "_mvlattice" / "tiles" / tile.split(".")[1]
    before, version = rows_of(spark, f"select * from {tile}"), latest_version(spark, str(location))
    write(spark, warehouse / "jobs" / SCHEMA / "sales", sales(500, 40), SALES_DDL, mode="append")

    old_files = set(location.glob("*.parquet"))
    outcome: dict = {}
    worker = threading.Thread(target=lambda: outcome.update(result=ws.refresh(tile=tile)))
    spark.conf.set("spark.sql.files.maxRecordsPerFile", "1")  # one file per row: a slow write
    try:
        worker.start()
        wait_until(
            lambda: set(location.glob("*.parquet")) - old_files,
            600,
            lambda: f"the refresh to write data files (its result: {outcome.get('result')})",
        )
        cancel(spark, tile)  # mid-write: data files exist, no commit yet
        worker.join(600)
    finally:
        spark.conf.unset("spark.sql.files.maxRecordsPerFile")
    (result,) = outcome["result"].results
    assert result.status == "failed" and "cancel" in result.error.lower()
    assert latest_version(spark, str(location)) == version  # nothing was committed
    assert rows_of(spark, f"select * from {tile}") == before  # the old version, readable
    entry = next(e for e in ws.tiles() if e.name == tile)
    assert entry.status == "failed" and "cancel" in entry.last_error.lower()  # never fresh
    assert entry.code == "STALE_ACCEPTED"  # the old version, within the lattice's maxStaleness

    again = ws.refresh(tile=tile)
    assert again.ok and again.results[0].path == "incremental"
    assert next(e for e in ws.tiles() if e.name == tile).status == "fresh"
    assert len(rows_of(spark, f"select * from {tile}")) >= len(before)
