"""Background jobs of the HTTP API: which jobs conflict, ids, statuses, stopping."""

from __future__ import annotations

import threading

import pytest

from mvlattice.errors import ConflictError, NotFoundError, SqlError
from mvlattice.http.jobs import JobRunner, Scope
from mvlattice.http.metrics import Histogram, Metrics
from tests.support import wait_until

MODEL = Scope("shop")
STAR = Scope("shop", "star")
TILE = Scope("shop", "star", "mvlattice.star_a")
OTHER_TILE = Scope("shop", "star", "mvlattice.star_b")
CUBE = Scope("shop", "cube")
VIEW = Scope("shop", None, "shop.by_year")
ELSEWHERE = Scope("other", "star")


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        (MODEL, VIEW, True),
        (MODEL, CUBE, True),
        (STAR, TILE, True),
        (STAR, STAR, True),
        (TILE, TILE, True),
        (TILE, OTHER_TILE, False),
        (STAR, CUBE, False),
        (STAR, VIEW, False),
        (TILE, CUBE, False),
        (STAR, ELSEWHERE, False),
        (MODEL, ELSEWHERE, False),
    ],
)
def test_overlaps(a: Scope, b: Scope, overlap: bool) -> None:
    assert a.overlaps(b) is overlap and b.overlaps(a) is overlap


def finished(runner: JobRunner, job_id: str):
    def done():
        job = runner.get(job_id)
        return None if job.active else job

    return wait_until(done, 10, f"job {job_id} to finish")


def running(runner: JobRunner, job_id: str) -> None:
    wait_until(lambda: runner.get(job_id).status == "running", 10, f"job {job_id} to start")


def test_jobs_run_and_report() -> None:
    seen = []
    runner = JobRunner(on_finish=seen.append)
    job = runner.submit("refresh", TILE, lambda: (True, {"n": 1}))
    assert job.status == "queued" and job.id.startswith("job-1-")
    done = finished(runner, job.id)
    assert (done.status, done.result, done.error) == ("succeeded", {"n": 1}, None)
    assert done.started_at is not None and done.finished_at >= done.started_at
    assert seen == [done]
    doc = done.to_json()
    assert doc["target"] == "mvlattice.star_a" and doc["finished_at"].endswith("Z")


def test_a_failing_job_is_failed_with_its_error() -> None:
    runner = JobRunner()

    def broken() -> tuple[bool, dict]:
        raise SqlError("bad column x")

    failed = finished(runner, runner.submit("refresh", TILE, broken).id)
    assert failed.status == "failed"
    assert failed.error == {"code": "bad_sql", "message": "bad column x"}
    partial = finished(runner, runner.submit("refresh", TILE, lambda: (False, {"x": 1})).id)
    assert partial.status == "failed" and partial.result == {"x": 1}
    later = finished(runner, runner.submit("refresh", TILE, lambda: (True, {})).id)
    assert later.status == "succeeded"  # the worker survived


def test_an_overlapping_job_is_refused_until_the_first_ends() -> None:
    gate = threading.Event()
    runner = JobRunner()
    first = runner.submit("materialize", STAR, lambda: (gate.wait(10), {}))
    with pytest.raises(ConflictError, match=f"conflicts with job {first.id}"):
        runner.submit("refresh", TILE, lambda: (True, {}))
    other = runner.submit("materialize", CUBE, lambda: (True, {}))  # queued behind
    gate.set()
    finished(runner, first.id)
    assert finished(runner, other.id).status == "succeeded"
    runner.submit("refresh", TILE, lambda: (True, {}))


def test_unknown_jobs_are_not_found() -> None:
    with pytest.raises(NotFoundError, match="no job 'job-7'"):
        JobRunner().get("job-7")


def test_stop_waits_for_the_running_job_and_drops_queued_ones() -> None:
    gate = threading.Event()
    runner = JobRunner()
    first = runner.submit("materialize", STAR, lambda: (gate.wait(10), {}))
    running(runner, first.id)
    queued = runner.submit("materialize", CUBE, lambda: (True, {}))

    def waiting() -> bool:  # asked while stop() waits for the running job: let it end then
        gate.set()
        return False  # and do not abandon it

    assert runner.stop(timeout=10, abandon=waiting) is True
    assert runner.get(first.id).status == "succeeded"
    assert runner.get(queued.id).error["code"] == "cancelled"


def test_stop_can_abandon_a_running_job() -> None:
    gate = threading.Event()
    runner = JobRunner()
    job = runner.submit("materialize", STAR, lambda: (gate.wait(10), {}))
    running(runner, job.id)
    assert runner.stop(abandon=lambda: True) is False
    gate.set()


def test_the_job_history_is_bounded() -> None:
    runner = JobRunner(history=3)
    ids = [finished(runner, runner.submit("refresh", TILE, lambda: (True, {})).id).id
           for _ in range(5)]  # fmt: skip
    runner.submit("refresh", TILE, lambda: (True, {}))
    with pytest.raises(NotFoundError):
        runner.get(ids[0])
    assert runner.get(ids[-1]).status == "succeeded"


# -- metrics ---------------------------------------------------------------------------------------
def test_histogram_buckets_are_cumulative() -> None:
    h = Histogram((0.01, 0.1))
    for value in (0.005, 0.01, 0.05, 2.0):
        h.observe(value)
    assert h.lines("x") == [
        'x_bucket{le="0.01"} 2', 'x_bucket{le="0.1"} 3', 'x_bucket{le="+Inf"} 4',
        "x_sum 2.065", "x_count 4",
    ]  # fmt: skip


def test_metrics_text_format() -> None:
    m = Metrics()
    m.request("GET", '/v1/"odd"', 200)
    m.rewrite("rewritten", 0.003)
    m.rewrite("not_rewritten", 0.02)
    m.rewrite("error")
    m.refresh("schedule", "failed")
    m.gauges["mvlattice_query_log_pending"] = lambda: 7
    text = m.render()
    assert text.endswith("\n")
    assert (
        'mvlattice_http_requests_total{method="GET",route="/v1/\\"odd\\"",status="200"} 1' in text
    )
    assert "mvlattice_rewrite_hit_ratio 0.5" in text
    assert "mvlattice_rewrite_latency_seconds_count 2" in text
    assert 'mvlattice_refreshes_total{trigger="schedule",outcome="failed"} 1' in text
    assert "# TYPE mvlattice_query_log_pending gauge\nmvlattice_query_log_pending 7" in text
    for line in text.splitlines():  # every sample: name{labels} value
        if not line.startswith("#"):
            float(line.rsplit(" ", 1)[1])
