"""`GET /v1/advice` against ONE real `mvlattice serve` (issue 30): advice over many distinct
misses is computed once per query-log version, one computation at a time (a request with other
arguments meanwhile gets 503 with Retry-After, one with the same arguments shares the result),
and a computation whose client went away stops and is not kept."""

from __future__ import annotations

import threading
import time

import pytest

from tests.integration.test_service_support import Server, make_shop, metric, start
from tests.support import wait_until

pytestmark = pytest.mark.spark

MISSES = 20  # distinct missed queries in the log: each is explained again by the advisor
MISS = ("select p.brand, sum(s.units) as units from shop.sales s join shop.product p "
        "on s.product_id = p.product_id where s.sale_id > {i} group by p.brand")  # fmt: skip


@pytest.fixture(scope="module")
def server(spark, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("service_advice_http")
    model = make_shop(spark, root)
    running = start(model, root / "warehouse", root / "server.log", extra=("--no-scheduler",))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def logged(server: Server) -> float:
    """MISSES distinct misses in the query log, written; the seconds a first advice took."""
    started = time.monotonic()
    for i in range(MISSES):
        status, doc = server.call("POST", "/v1/rewrite", {"sql": MISS.format(i=i)})
        assert status == 200 and doc["rewritten"] is False, doc
    print(f"{MISSES} rewrites: {time.monotonic() - started:.2f} s")

    def written() -> bool:
        return metric(server, "mvlattice_query_log_written_total") >= MISSES

    wait_until(written, 60, "the misses to be in the query log", interval=0.1)
    started = time.monotonic()
    status, doc = server.call("GET", "/v1/advice")
    assert status == 200 and doc["models"][0]["misses"] == MISSES, doc
    return time.monotonic() - started


def in_background(server: Server, path: str, timeout: float = 300) -> dict:
    """GET `path` on a thread; the dict gets its (status, body) under "answer"."""
    out: dict = {}

    def call() -> None:
        try:
            out["answer"] = server.call("GET", path, timeout=timeout)
        except OSError as exc:  # the client gave up (a test's short timeout)
            out["answer"] = (None, str(exc))

    out["thread"] = threading.Thread(target=call)
    out["thread"].start()
    return out


def running(server: Server) -> bool:
    return metric(server, "mvlattice_advice_running") == 1


def test_advice_is_kept_until_the_log_changes(server: Server, logged: float) -> None:
    computed = metric(server, "mvlattice_advice_computations_total")
    started = time.monotonic()
    status, doc = server.call("GET", "/v1/advice")
    again = time.monotonic() - started
    assert status == 200 and doc["models"][0]["misses"] == MISSES
    assert metric(server, "mvlattice_advice_computations_total") == computed
    print(f"advice over {MISSES} misses: {logged:.2f} s computed, {again:.3f} s kept")
    assert again < logged / 2


def test_one_computation_at_a_time(server: Server, logged: float) -> None:
    computed = metric(server, "mvlattice_advice_computations_total")
    first = in_background(server, "/v1/advice?since=1d")
    wait_until(lambda: running(server), 30, "the advice to start", interval=0.05)
    same = in_background(server, "/v1/advice?since=1d")
    status, doc = server.call("GET", "/v1/advice?since=2d")
    assert status == 503 and doc["error"]["code"] == "overloaded", doc
    assert running(server), "the computation ended before the test could overlap it"
    first["thread"].join(300)
    same["thread"].join(300)
    assert first["answer"][0] == 200 and first["answer"] == same["answer"]
    assert metric(server, "mvlattice_advice_computations_total") == computed + 1
    assert server.call("GET", "/v1/advice?since=2d")[0] == 200  # free again


def test_a_computation_nobody_waits_for_stops(server: Server, logged: float) -> None:
    computed = metric(server, "mvlattice_advice_computations_total")
    gone = in_background(server, "/v1/advice?since=3d", timeout=1.0)
    gone["thread"].join(30)
    assert gone["answer"][0] is None  # the client gave up after a second
    wait_until(lambda: not running(server), logged / 2, "the computation to stop", 0.05)
    status, _ = server.call("GET", "/v1/advice?since=3d")
    assert status == 200  # computed anew: the stopped one was not kept
    assert metric(server, "mvlattice_advice_computations_total") == computed + 2
    status, health = server.call("GET", "/healthz", token=None)
    assert (status, health["status"]) == (200, "ok")
