"""Driver program for the cluster test: runs mvlattice's API against a standalone master and
prints one JSON document with what it saw. Run as: python cluster_driver.py MASTER WAREHOUSE."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

import mvlattice
from mvlattice.datasets import foodmart
from mvlattice.spark import build_session, spark_conf

MODEL = Path(__file__).resolve().parents[2] / "models" / "foodmart.yaml"
MONTHS = (
    "select the_month, count(*) as c from foodmart.sales_fact_1997 "
    "join foodmart.time_by_day using (time_id) group by the_month"
)


def main(master: str, warehouse: str) -> None:
    conf = {"spark.executor.memory": "1g", "spark.ui.enabled": "true", "spark.ui.port": "0"}
    spark = build_session(master, warehouse, spark_conf(master, warehouse, (conf,)))
    foodmart.load(spark, warehouse, progress=lambda _line: None)
    ws = mvlattice.open(MODEL, warehouse=warehouse, master=master, conf=conf)
    assert ws.spark is spark
    _, rows = ws.collect(ws.sql(MONTHS))
    report = {
        "master": spark.sparkContext.master,
        "app_id": spark.sparkContext.applicationId,
        "months": {m: c for m, c in rows},
        "executors": _executors(spark),
    }
    ws.close()
    print(json.dumps(report))


def _executors(spark) -> list[dict]:  # noqa: ANN001
    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/executors"
    with urllib.request.urlopen(url, timeout=10) as r:
        return [{"id": e["id"], "tasks": e["totalTasks"]} for e in json.load(r)]


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
