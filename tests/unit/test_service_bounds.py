"""Bounded queries in the HTTP layer, without Spark: the query gate's 503 with Retry-After and
`/healthz` saturation, cancellation handed to the backend, answers cut by bytes, and HTTPS."""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from mvlattice.errors import QueryTimeoutError
from mvlattice.http.app import create_app
from mvlattice.http.backend import Answer, SparkWork
from mvlattice.http.service import Service, Settings
from tests.support import wait_until
from tests.unit.test_service_http import LOCAL, FakeBackend


class SlowBackend(FakeBackend):
    """Queries wait until released — or cancelled, as the sandbox's Spark jobs would be."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.started = threading.Semaphore(0)
        self.cancelled: list[str] = []

    def query(self, sql: str, rewrite: bool, limit: int, model: str | None,
              cancel: Any = None) -> Answer:  # fmt: skip
        self.started.release()
        while not self.gate.wait(0.05):
            if cancel is not None and cancel.is_set():
                self.cancelled.append(sql)
                raise QueryTimeoutError("query cancelled: the client went away")
        return super().query(sql, rewrite, limit, model)


def test_beyond_running_and_waiting_a_query_gets_503_with_retry_after() -> None:
    backend = SlowBackend()
    service = Service(backend, Settings(max_queries=1, max_waiting=1))
    with TestClient(create_app(service), base_url=LOCAL) as client:  # one event loop, as served
        _overload(backend, service, client)


def _overload(backend: SlowBackend, service: Service, client: TestClient) -> None:
    answers: list[int] = []

    def ask() -> None:
        answers.append(client.post("/v1/query", json={"sql": "select 1"}).status_code)

    first, second = threading.Thread(target=ask), threading.Thread(target=ask)
    first.start()
    assert backend.started.acquire(timeout=10)  # one runs
    second.start()
    wait_until(lambda: service.gate.queued >= 1, 10, "the second query to wait")  # one waits
    health = client.get("/healthz").json()
    assert health["status"] == "saturated" and health["queries"]["saturated"] is True
    refused = client.post("/v1/query", json={"sql": "select 1"})
    assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
    assert refused.json()["error"]["code"] == "overloaded"
    backend.gate.set()
    first.join(10)
    second.join(10)
    assert answers == [200, 200]
    assert client.get("/healthz").json()["status"] == "ok"


def test_a_stopping_service_cancels_its_running_queries() -> None:
    backend = SlowBackend()
    service = Service(backend, Settings())
    client = TestClient(create_app(service), base_url=LOCAL)
    answers: list[Any] = []
    thread = threading.Thread(target=lambda: answers.append(
        client.post("/v1/query", json={"sql": "select 42"})))  # fmt: skip
    thread.start()
    assert backend.started.acquire(timeout=10)
    service.cancel_queries()
    thread.join(10)
    wait_until(lambda: backend.cancelled == ["select 42"], 10, "the backend to see the cancel")
    assert answers[0].status_code == 408 and answers[0].json()["error"]["code"] == "timeout"
    assert service.running == set()


def test_an_answer_is_cut_at_the_byte_limit_and_a_lone_huge_row_refused() -> None:
    backend = FakeBackend()
    backend.rows = [("x" * 100,) for _ in range(40)]
    service = Service(backend, Settings(max_response_bytes=1000, max_rows=100))
    client = TestClient(create_app(service), base_url=LOCAL)
    doc = client.post("/v1/query", json={"sql": "select 1"}).json()
    assert doc["truncated"] is True and doc["row_count"] == len(doc["rows"]) == 9
    backend.rows = [("x" * 2000,)]
    response = client.post("/v1/query", json={"sql": "select 1"})
    assert response.status_code == 413 and "larger than" in response.json()["error"]["message"]


def test_nan_and_infinity_answer_as_null() -> None:
    backend = FakeBackend()
    backend.rows = [(float("nan"), float("inf"), -float("inf"), 1.5)]
    client = TestClient(create_app(Service(backend)), base_url=LOCAL)
    response = client.post("/v1/query", json={"sql": "select 1"})
    assert json.loads(response.text)["rows"] == [[None, None, None, 1.5]]


def _certificate(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def test_https_with_the_given_certificate(tmp_path: Path) -> None:
    import uvicorn

    cert, key = _certificate(tmp_path)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(
        create_app(Service(FakeBackend())),
        host="127.0.0.1",
        port=port,
        ssl_certfile=str(cert),
        ssl_keyfile=str(key),
        log_level="error",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    try:
        context = ssl.create_default_context(cafile=str(cert))
        url = f"https://localhost:{port}/healthz"
        wait_until(lambda: server.started, 20, "the HTTPS server to start", interval=0.05)
        with urllib.request.urlopen(url, context=context, timeout=10) as response:
            assert json.loads(response.read())["status"] == "ok"
        with pytest.raises(OSError):  # plain HTTP is not spoken there
            urllib.request.urlopen(f"http://localhost:{port}/healthz", timeout=10).read()
    finally:
        server.should_exit = True
        thread.join(10)


class TileLaneBackend(SlowBackend):
    """Spark queries wait until released; queries naming `tile_answerable` are answered by
    the tile engine (`query_local`), every other one is left to Spark."""

    def query_local(self, sql: str, rewrite: bool, limit: int, model: str | None,
                    cancel: Any = None, tree: Any = None,
                    check: Any = None) -> Answer | SparkWork:  # fmt: skip
        if "tile_answerable" not in sql:
            return super().query_local(sql, rewrite, limit, model, cancel, check=check)
        if check is not None:
            check(sql)
        answer = FakeBackend.query(self, sql, rewrite, limit, model)
        return Answer(model=answer.model, columns=answer.columns, rows=answer.rows,
                      truncated=answer.truncated, rewritten=True, materializations=("t",),
                      sql=sql, engine="local")  # fmt: skip


def test_answers_from_tiles_do_not_wait_behind_spark_queries() -> None:
    backend = TileLaneBackend()
    service = Service(backend, Settings(max_queries=1, max_waiting=1))
    with TestClient(create_app(service), base_url=LOCAL) as client:
        answers: list[int] = []

        def ask() -> None:
            answers.append(client.post("/v1/query", json={"sql": "select 1"}).status_code)

        spark_query = threading.Thread(target=ask)
        spark_query.start()
        assert backend.started.acquire(timeout=10)  # it holds the only Spark slot
        for _ in range(3):
            fast = client.post("/v1/query", json={"sql": "select 1 as tile_answerable"})
            assert fast.status_code == 200 and fast.json()["engine"] == "local"
        assert answers == []  # the Spark query is still running
        backend.gate.set()
        spark_query.join(10)
        assert answers == [200]


class StubbornBackend(FakeBackend):
    """Work that no cancel stops (the JVM's optimizer folding a constant on the request's
    thread): it ends only when released."""

    def __init__(self) -> None:
        super().__init__()
        self.release_work = threading.Event()
        self.started = threading.Semaphore(0)

    def query(self, sql: str, rewrite: bool, limit: int, model: str | None,
              cancel: Any = None) -> Answer:  # fmt: skip
        self.started.release()
        self.release_work.wait(30)
        return super().query(sql, rewrite, limit, model)


def test_work_past_the_deadline_answers_408_on_time_and_keeps_its_slot() -> None:
    import time

    backend = StubbornBackend()
    service = Service(backend, Settings(query_timeout=1.0, max_queries=1, max_waiting=4))
    with TestClient(create_app(service), base_url=LOCAL) as client:
        started = time.monotonic()
        first = client.post("/v1/query", json={"sql": "select 1"})
        took = time.monotonic() - started
        assert first.status_code == 408 and "--query-timeout" in first.json()["error"]["message"]
        assert 1.0 <= took < 2.5, took
        load = client.get("/healthz").json()["queries"]
        assert (load["running"], load["overrunning"]) == (1, 1)  # still on its thread
        # the slot is still taken: the next query waits, and its wait has the same deadline
        started = time.monotonic()
        second = client.post("/v1/query", json={"sql": "select 2"})
        assert second.status_code == 408 and "waiting for a query slot" in second.text
        assert 1.0 <= time.monotonic() - started < 2.5
        backend.release_work.set()  # the stubborn work ends: its slot is free again
        wait_until(lambda: client.get("/healthz").json()["queries"]["running"] == 0, 10,
                   "the slot to be free")  # fmt: skip
        assert client.get("/healthz").json()["queries"]["overrunning"] == 0
        answered = client.post("/v1/query", json={"sql": "select 3"})
        assert answered.status_code == 200, answered.text


def test_a_lost_spark_answers_503_on_healthz_and_spark_queries() -> None:
    state = {"now": "ok"}
    service = Service(FakeBackend(), Settings(), spark_state=lambda: state["now"])
    with TestClient(create_app(service), base_url=LOCAL) as client:
        assert client.post("/v1/query", json={"sql": "select 1"}).status_code == 200
        state["now"] = "down"
        health = client.get("/healthz")
        assert health.status_code == 503 and health.json()["status"] == "spark_down"
        refused = client.post("/v1/query", json={"sql": "select 1"})
        assert refused.status_code == 503 and "Spark is down" in refused.json()["error"]["message"]


def test_the_spark_watch_reports_a_dead_jvm_and_gives_up_after_a_while() -> None:
    from mvlattice.http import spark_watch

    alive = {"now": True}
    lost = threading.Event()
    watch = spark_watch.SparkWatch(lambda: alive["now"], lambda _why: lost.set(), 0.5)
    original, spark_watch.PROBE_SECONDS = spark_watch.PROBE_SECONDS, 0.05
    try:
        watch.start()
        assert watch.state() == "ok" and not lost.wait(0.3)
        alive["now"] = False
        wait_until(lambda: watch.state() == "down", 5, "the watch to see the JVM down")
        assert lost.wait(5)  # after give_up_after seconds down: the service exits
    finally:
        spark_watch.PROBE_SECONDS = original
        watch.stop()


def test_one_failed_probe_is_not_a_dead_jvm() -> None:
    from mvlattice.http import spark_watch

    answers = iter([False] + [True] * 1000)  # one failed call, then a JVM that answers
    lost = threading.Event()
    watch = spark_watch.SparkWatch(lambda: next(answers), lambda _why: lost.set(), 0.5)
    original, spark_watch.PROBE_SECONDS = spark_watch.PROBE_SECONDS, 0.05
    try:
        watch.start()
        seen = set()
        for _ in range(40):
            seen.add(watch.state())
            time.sleep(0.02)
        assert seen == {"ok"} and not lost.is_set()
    finally:
        spark_watch.PROBE_SECONDS = original
        watch.stop()


def _guarded_server(guard: Any) -> tuple[Any, int, threading.Thread]:
    import uvicorn

    from mvlattice.http.connections import guarded_protocol

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(create_app(Service(FakeBackend())), host="127.0.0.1", port=port,
                            http=guarded_protocol(guard), log_level="error")  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    wait_until(lambda: server.started, 20, "the server to start", interval=0.05)
    return server, port, thread


def _closed(sock: socket.socket, within: float) -> bytes:
    """What the server sent before closing `sock`; fails when it is still open after `within`."""
    sock.settimeout(within)
    chunks = []
    while chunk := sock.recv(4096):
        chunks.append(chunk)
    return b"".join(chunks)


def test_connections_are_capped_below_the_file_limit() -> None:
    from mvlattice.http.connections import ConnectionLimits, connection_guard

    limits = ConnectionLimits(max_connections=1024)
    assert connection_guard(limits, 1024).cap == 512
    assert connection_guard(limits, 1 << 20).cap == 1024
    assert connection_guard(limits, None).cap == 1024


def test_at_the_cap_the_oldest_half_sent_connection_makes_room() -> None:
    from mvlattice.http.connections import ConnectionLimits, connection_guard

    guard = connection_guard(ConnectionLimits(header_timeout=30, max_connections=3), None)
    server, port, thread = _guarded_server(guard)
    half = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n"
    try:
        slow = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
        for sock in slow:
            sock.sendall(half)
        wait_until(lambda: guard.open == 3, 10, "three open connections", interval=0.01)
        with urllib.request.urlopen(f"http://localhost:{port}/healthz", timeout=10) as answer:
            assert answer.status == 200  # it closed the oldest half-sent one to get in
        assert _closed(slow[0], 10) == b"" and guard.shed == 1
        for sock in slow[1:]:
            sock.setblocking(False)
            with pytest.raises(BlockingIOError):  # still open: nothing to read, no EOF
                sock.recv(1)
            sock.close()
        slow[0].close()
    finally:
        server.should_exit = True
        thread.join(10)


def test_headers_and_bodies_have_deadlines() -> None:
    from mvlattice.http.connections import ConnectionLimits, connection_guard

    guard = connection_guard(ConnectionLimits(header_timeout=0.5, body_timeout=0.5), None)
    server, port, thread = _guarded_server(guard)
    body_head = (b"POST /v1/rewrite HTTP/1.1\r\nHost: localhost\r\nContent-Type: "
                 b"application/json\r\nContent-Length: 50\r\n\r\n{")  # fmt: skip
    try:
        with socket.create_connection(("127.0.0.1", port)) as silent:
            assert _closed(silent, 10).startswith(b"HTTP/1.1 408 ")
        with socket.create_connection(("127.0.0.1", port)) as slow_body:
            slow_body.sendall(body_head)
            assert _closed(slow_body, 10) == b""
        assert (guard.header_timeouts, guard.body_timeouts) == (1, 1)
        with socket.create_connection(("127.0.0.1", port)) as kept_alive:
            kept_alive.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            assert _closed(kept_alive, 10).startswith(b"HTTP/1.1 200 ")  # then idle: 408
        assert guard.header_timeouts == 2 and guard.open == 0
    finally:
        server.should_exit = True
        thread.join(10)
