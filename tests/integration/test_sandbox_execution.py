"""The bounded fetch of a checked query's answer (issue 31): a byte-capped answer is read in
one job, as `collect()` reads it, and stops early; it is not fetched a partition at a time
(a job per partition outside the query's SQL execution filled a long-running `serve`'s
driver heap with their metrics)."""

from __future__ import annotations

import json
import time

import pytest

from mvlattice.sandbox import execution

pytestmark = pytest.mark.spark


def _jobs_of_next_query(spark, run) -> tuple[object, list[int]]:
    number = next(execution._ids) + 1  # the group the next bounded query runs in
    out = run()
    return out, list(spark.sparkContext.statusTracker().getJobIdsForGroup(
        f"mvlattice-query-{number}"))  # fmt: skip


def test_a_byte_capped_answer_is_one_job_and_stops_early(spark) -> None:
    frame = spark.range(0, 4000, 1, 8).selectExpr("id", "repeat('x', 100) as pad")
    (columns, rows), jobs = _jobs_of_next_query(
        spark, lambda: execution.collect_bounded(frame, 4000, 60.0, max_bytes=5_000)
    )
    assert columns == ["id", "pad"]
    assert 0 < len(rows) < 4000
    assert len(json.dumps([list(r) for r in rows])) > 5_000  # the row that crossed the cap
    assert len(json.dumps([list(r) for r in rows[:-1]])) <= 5_000 + 200
    assert len(jobs) == 1, jobs


def test_an_uncapped_answer_and_a_capped_one_hold_the_same_rows(spark) -> None:
    frame = spark.range(0, 300, 1, 4).selectExpr("id", "id * 2 as twice")
    _, whole = execution.collect_bounded(frame, None, 60.0)
    _, capped = execution.collect_bounded(frame, None, 60.0, max_bytes=10**9)
    assert sorted(whole) == sorted(capped) and len(whole) == 300


def test_capped_answers_leave_no_metrics_behind_in_the_driver(spark) -> None:
    """Read a partition at a time, each capped answer left ~80 accumulators (SQL metrics) alive
    in the driver for good; read as one collect, ~10 (what Spark keeps of a finished query)."""
    sc = spark.sparkContext
    accumulators = sc._jvm.org.apache.spark.util.AccumulatorContext
    spark.range(0, 2000, 1, 4).selectExpr("id", "id % 7 as k").createOrReplaceTempView("leak_t")

    def run(n: int) -> None:
        for i in range(n):
            frame = spark.sql(f"select k, count(*) as c from leak_t where id > {i} group by k")
            execution.collect_bounded(frame, 1000, 60.0, max_bytes=100)

    def settled() -> int:
        for _ in range(3):  # the context cleaner drops an accumulator once it is collected
            sc._jvm.System.gc()
            time.sleep(0.5)
        return int(accumulators.numAccums())

    run(10)
    before = settled()
    run(60)
    assert (settled() - before) / 60 < 40
