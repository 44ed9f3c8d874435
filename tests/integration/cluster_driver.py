"""Driver program for the cluster test: runs mvlattice's API against a standalone master and
prints one JSON document with what it saw. Run as: python cluster_driver.py MASTER WAREHOUSE.

The main job, as a user would run it on a cluster: load FoodMart, plan and build tiles for the
documented month-count query, run it rewritten onto a tile, append rows to the fact table, see
the tiles go stale, refresh them, see them fresh, and run the query again."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

import mvlattice
from mvlattice.datasets import foodmart
from mvlattice.spark import build_session, spark_conf

MODEL = Path(__file__).resolve().parents[2] / "models" / "foodmart.yaml"
MONTHS = (
    "select the_month, count(*) as c from foodmart.sales_fact_1997 "
    "join foodmart.time_by_day using (time_id) where the_year = 1997 group by the_month"
)
# More sales in every month of 1997: the sales of each month's first day, again. (`select *`
# of the fact table alone: after a USING join, `s.*` need not keep the table's column order.)
APPEND = (
    "insert into foodmart.sales_fact_1997 select * from foodmart.sales_fact_1997 "
    "where time_id in (select time_id from foodmart.time_by_day "
    "where the_year = 1997 and day_of_month = 1)"
)


def main(master: str, warehouse: str) -> None:
    conf = {"spark.executor.memory": "1g", "spark.ui.enabled": "true", "spark.ui.port": "0"}
    spark = build_session(master, warehouse, spark_conf(master, warehouse, (conf,)))
    foodmart.load(spark, warehouse, progress=lambda _line: None)
    ws = mvlattice.open(MODEL, warehouse=warehouse, master=master, conf=conf)
    assert ws.spark is spark
    # The month query as the workload, and few tiles: the plan holds the tile it needs.
    built = ws.materialize(max_tiles=3, workload=[{"dimensions": ["the_month", "the_year"]}])
    before = ws.query(MONTHS)
    fresh = _statuses(ws)
    facts = _fact_rows(ws)
    ws.sql(APPEND)
    appended = _fact_rows(ws) - facts
    after_append = _statuses(ws)
    refreshed = ws.refresh()
    after_refresh = _statuses(ws)
    again = ws.query(MONTHS)
    base = ws.query(MONTHS, rewrite=False)
    report = {
        "master": spark.sparkContext.master,
        "app_id": spark.sparkContext.applicationId,
        "built": [[r.target, r.status, r.error] for r in built.results],
        "months": dict(before.rows),
        "rewritten": before.rewrite.rewritten,
        "tiles_used": list(before.rewrite.materializations),
        "appended": appended,
        "status_built": fresh,
        "status_appended": after_append,
        "refresh": [[r.target, r.status, r.path] for r in refreshed.results],
        "status_refreshed": after_refresh,
        "months_after": dict(again.rows),
        "rewritten_after": again.rewrite.rewritten,
        "months_base_after": dict(base.rows),
        "executors": _executors(spark),
    }
    ws.close()
    print(json.dumps(report))


def _fact_rows(ws: Any) -> int:
    return int(ws.collect(ws.sql("select count(*) from foodmart.sales_fact_1997"))[1][0][0])


def _statuses(ws: Any) -> dict[str, str]:
    return {e.name: e.status for e in ws.tiles() if e.kind == "tile" and e.status != "missing"}


def _executors(spark) -> list[dict]:
    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/executors"
    with urllib.request.urlopen(url, timeout=10) as r:
        return [{"id": e["id"], "tasks": e["totalTasks"]} for e in json.load(r)]


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
