"""The HTTP layer without Spark: routes over an in-memory backend — auth, body limit, SQL
gate, error mapping, row cap, jobs and their conflicts, query-log entries and metrics."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from fastapi.testclient import TestClient

from mvlattice.errors import NotFoundError, SqlError
from mvlattice.http.app import create_app
from mvlattice.http.backend import Answer, Rewritten, SparkWork
from mvlattice.http.jobs import Scope
from mvlattice.http.service import Service, Settings
from mvlattice.querylog.log import Request
from tests.support import wait_until

TOKEN = "s3cret-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}", "X-Mvlattice-Request": "1"}
LOCAL = "http://localhost"  # the service answers to loopback names only


class FakeBackend:
    """One model 'shop' with lattice 'star' and tile 'shop.t1'; rewrites `... from sales ...`."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.release.set()
        self.rows = [(i,) for i in range(50)]
        self.engine, self.engine_reason = "spark", ""  # who answers queries, and why

    def models(self) -> tuple[str, ...]:
        return ("shop",)

    def ready(self) -> bool:
        return True

    def rewrite(self, sql: str, explain: bool, model: str | None) -> Rewritten:
        if "boom" in sql:
            raise RuntimeError("a bug with a secret path /etc/x")
        if "nosuch" in sql:
            raise SqlError("SQL is not valid for this model: table nosuch not found")
        hit = "sales" in sql
        views = ("shop.t1",) if hit else ()
        explanation = [{"view": "shop.t1", "outcome": "used" if hit else "rejected"}]
        doc = {
            "rewritten": hit,
            "sql": "select * from shop.t1" if hit else sql,
            "materializations": list(views),
            "explain": explanation if explain else None,
        }
        return Rewritten("shop", doc, hit, views, 0.002)

    def query(
        self, sql: str, rewrite: bool, limit: int, model: str | None, cancel: Any = None
    ) -> Answer:
        rows = tuple(self.rows[: limit + 1])
        return Answer(
            model="shop",
            columns=("n",),
            rows=rows[:limit],
            truncated=len(rows) > limit,
            rewritten=rewrite,
            materializations=(),
            sql=sql,
            rewrite_seconds=0.001,
            engine=self.engine,
            engine_reason=self.engine_reason,
        )

    def query_kept(self, sql: str, rewrite: bool, limit: int, model: str | None) -> Answer | None:
        return None  # nothing kept: every query is decided anew

    def query_local(
        self,
        sql: str,
        rewrite: bool,
        limit: int,
        model: str | None,
        cancel: Any = None,
        tree: Any = None,
        check: Any = None,
    ) -> Answer | SparkWork:
        if check is not None:
            check(sql)  # the service's SQL gate, as the real backend runs it
        return SparkWork(lambda: self.query(sql, rewrite, limit, model, cancel))

    def lattices(self, model: str | None) -> list[dict[str, Any]]:
        return [{"name": "star", "model": "shop"}]

    def lattice(self, name: str, model: str | None, plan: bool) -> dict[str, Any]:
        if name != "star":
            raise NotFoundError(f"no lattice '{name}'; lattices: star")
        return {"name": "star", "plan": {"tiles": []} if plan else None}

    def lattice_now(self, name: str, model: str | None) -> dict[str, Any]:
        return self.lattice(name, model, True)

    def tiles(self, model: str | None, lattice: str | None) -> list[dict[str, Any]]:
        return [{"name": "shop.t1", "status": "fresh"}]

    def advice(
        self, model: str | None, since: str | None, stop: Any = None
    ) -> list[dict[str, Any]]:
        return []

    def log_versions(self, model: str | None) -> tuple[int | None, ...]:
        return (None,)

    def refresh_scope(self, tile: str, model: str | None) -> Scope:
        if tile != "shop.t1":
            raise NotFoundError(f"no tile or materialization '{tile}'")
        return Scope("shop", "star", tile)

    def materialize_scope(self, lattice: str, model: str | None) -> Scope:
        self.lattice(lattice, model, False)
        return Scope("shop", lattice)

    def run(self, kind: str, scope: Scope) -> tuple[bool, dict[str, Any]]:
        self.release.wait(10)
        return True, {"results": [{"target": scope.target or scope.lattice, "status": "built"}]}


@pytest.fixture
def fake() -> FakeBackend:
    return FakeBackend()


@pytest.fixture
def logged() -> list[Request]:
    return []


@pytest.fixture
def service(fake: FakeBackend, logged: list[Request]) -> Service:
    settings = Settings(token=TOKEN, max_body_bytes=400, max_rows=20)
    return Service(fake, settings, record=logged.append)


@pytest.fixture
def client(service: Service) -> TestClient:
    return TestClient(create_app(service), raise_server_exceptions=False, base_url=LOCAL)


def error(response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


# -- auth ----------------------------------------------------------------------------------------
def test_healthz_needs_no_token(client: TestClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    doc = response.json()
    assert (doc["status"], doc["models"]) == ("ok", ["shop"])
    assert doc["queries"] == {"running": 0, "waiting": 0, "max_running": 4, "max_waiting": 64,
                              "saturated": False, "overrunning": 0}  # fmt: skip


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN},
     {"Authorization": f"Basic {TOKEN}"}, {"Authorization": f"Bearer {TOKEN}x"}],
)  # fmt: skip
def test_every_other_path_needs_the_bearer_token(client: TestClient, headers: dict) -> None:
    for response in (
        client.get("/v1/tiles", headers=headers),
        client.post("/v1/rewrite", json={"sql": "select 1"}, headers=headers),
        client.get("/openapi.json", headers=headers),
        client.get("/no/such/path", headers=headers),
    ):
        assert error(response) == (401, "unauthorized")
        assert response.headers["www-authenticate"].startswith("Bearer")


def test_the_right_token_passes_whatever_the_scheme_case(client: TestClient) -> None:
    assert client.get("/v1/tiles", headers=AUTH).status_code == 200
    lower = {"Authorization": f"bearer {TOKEN}"}
    assert client.get("/v1/tiles", headers=lower).status_code == 200


def test_without_a_token_nothing_is_asked(fake: FakeBackend) -> None:
    client = TestClient(create_app(Service(fake)), base_url=LOCAL)
    assert client.get("/v1/tiles").status_code == 200


# -- body limit ------------------------------------------------------------------------------------
def test_a_body_over_the_limit_is_refused_by_its_length(client: TestClient) -> None:
    response = client.post("/v1/rewrite", json={"sql": "select " + "1," * 300 + "1"},
                           headers=AUTH)  # fmt: skip
    assert error(response) == (413, "too_large")
    assert "400 bytes" in response.json()["error"]["message"]


def test_a_streamed_body_over_the_limit_is_refused_while_reading(client: TestClient) -> None:
    def chunks():  # no Content-Length: chunked transfer
        yield b'{"sql": "select '
        for _ in range(200):  # 600 bytes > 400
            yield b"1, "
        yield b'1"}'

    headers = {**AUTH, "Content-Type": "application/json"}
    response = client.post("/v1/rewrite", content=chunks(), headers=headers)
    assert error(response) == (413, "too_large")


def test_a_body_under_the_limit_passes(client: TestClient) -> None:
    response = client.post("/v1/rewrite", json={"sql": "select 1"}, headers=AUTH)
    assert response.status_code == 200


# -- SQL gate and errors -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("sql", "fragment"),
    [
        ("insert into sales select * from sales", "not INSERT"),
        ("drop table sales", "not DROP"),
        ("with x as (select 1) insert into t select * from x", "not INSERT"),
        ("select 1; drop table sales", "one SQL statement, got 2"),
        ("select 1 from", "does not parse"),
        ("cache table sales", "not CACHE"),
    ],
)
def test_only_queries_are_accepted(client: TestClient, logged: list, sql: str, fragment: str):
    for path in ("/v1/rewrite", "/v1/query"):
        response = client.post(path, json={"sql": sql}, headers=AUTH)
        assert error(response) == (400, "bad_sql")
        assert fragment in response.json()["error"]["message"]
    assert [r.outcome for r in logged] == ["bad_sql", "bad_sql"]


@pytest.mark.parametrize(
    "sql", ["select 1", "WITH c AS (select 1 as a) select a from c", "(select 1) union (select 2)"]
)
def test_select_and_with_are_accepted(client: TestClient, sql: str) -> None:
    assert client.post("/v1/rewrite", json={"sql": sql}, headers=AUTH).status_code == 200


@pytest.mark.parametrize(
    "body",
    [{}, {"sql": ""}, {"sql": 5}, {"sql": "select 1", "explain": "maybe"}, {"sql": "select 1",
     "extra": 1}, [1, 2], "select 1"],
)  # fmt: skip
def test_malformed_bodies_are_400_with_a_message(client: TestClient, body: Any) -> None:
    response = client.post("/v1/rewrite", json=body, headers=AUTH)
    assert error(response) == (400, "bad_request")
    assert response.json()["error"]["message"]


def test_not_json_at_all_is_400(client: TestClient) -> None:
    response = client.post("/v1/rewrite", content=b"{not json", headers=AUTH)
    assert error(response) == (400, "bad_request")


def test_bad_sql_from_the_backend_is_400(client: TestClient) -> None:
    response = client.post("/v1/rewrite", json={"sql": "select * from nosuch"}, headers=AUTH)
    assert error(response) == (400, "bad_sql")
    assert "nosuch" in response.json()["error"]["message"]


def test_unknown_names_are_404(client: TestClient) -> None:
    assert error(client.get("/v1/lattices/nope", headers=AUTH)) == (404, "not_found")
    assert error(client.post("/v1/tiles/nope/refresh", headers=AUTH)) == (404, "not_found")
    assert error(client.post("/v1/lattices/nope/materialize", headers=AUTH)) == (404, "not_found")
    assert error(client.get("/v1/jobs/job-9-ffff", headers=AUTH)) == (404, "not_found")
    assert error(client.get("/v1/nothing", headers=AUTH)) == (404, "not_found")


def test_a_wrong_method_is_405(client: TestClient) -> None:
    assert error(client.delete("/v1/tiles", headers=AUTH)) == (405, "method_not_allowed")


def test_a_bug_is_500_without_details(client: TestClient, logged: list) -> None:
    response = client.post("/v1/rewrite", json={"sql": "select boom from sales"}, headers=AUTH)
    assert error(response) == (500, "internal")
    assert "secret" not in response.text and "Traceback" not in response.text
    assert logged[-1].outcome == "internal"


# -- rewrite, query, catalog ---------------------------------------------------------------------
def test_rewrite_returns_the_cli_document(client: TestClient, logged: list) -> None:
    body = {"sql": "select count(*) from sales", "explain": True}
    doc = client.post("/v1/rewrite", json=body, headers=AUTH).json()
    assert doc["rewritten"] is True and doc["materializations"] == ["shop.t1"]
    assert doc["sql"] == "select * from shop.t1" and doc["explain"][0]["outcome"] == "used"
    assert doc["model"] == "shop" and doc["elapsed_ms"] >= 0
    entry = logged[-1]
    assert (entry.kind, entry.rewritten, entry.views, entry.outcome, entry.source) == (
        "rewrite",
        True,
        ("shop.t1",),
        "ok",
        "http",
    )
    assert entry.sql == body["sql"] and entry.model == "shop" and entry.latency_ms > 0


def test_query_rows_are_capped_by_the_server_limit(client: TestClient) -> None:
    doc = client.post("/v1/query", json={"sql": "select n from t", "limit": 10**12},
                      headers=AUTH).json()  # fmt: skip
    assert (doc["limit"], doc["row_count"], doc["truncated"]) == (20, 20, True)
    doc = client.post("/v1/query", json={"sql": "select n from t", "limit": 3}, headers=AUTH).json()
    assert (doc["rows"], doc["truncated"]) == ([[0], [1], [2]], True)
    doc = client.post("/v1/query", json={"sql": "select n from t", "limit": 50, "rewrite": False},
                      headers=AUTH).json()  # fmt: skip
    assert doc["row_count"] == 20 and doc["rewritten"] is False


def test_a_query_answer_says_which_engine_answered(
    client: TestClient, fake: FakeBackend, logged: list
) -> None:
    fake.engine = "local"  # as the tile engine would answer
    doc = client.post("/v1/query", json={"sql": "select n from t", "limit": 2}, headers=AUTH).json()
    assert (doc["engine"], doc["engine_reason"], doc["rows"]) == ("local", "", [[0], [1]])
    fake.engine, fake.engine_reason = "spark", "reads more than the tile engine's row limit"
    doc = client.post("/v1/query", json={"sql": "select n from t", "limit": 2}, headers=AUTH).json()
    assert doc["engine"] == "spark" and doc["engine_reason"] == fake.engine_reason
    client.post("/v1/rewrite", json={"sql": "select count(*) from sales"}, headers=AUTH)
    client.post("/v1/query", json={"sql": "drop table x"}, headers=AUTH)  # refused
    assert [(r.kind, r.engine) for r in logged] == [
        ("query", "local"), ("query", "spark"), ("rewrite", ""), ("query", "")
    ]  # fmt: skip
    entries = client.get("/v1/querylog", headers=AUTH).json()["entries"]
    assert [e["engine"] for e in entries] == ["", "", "spark", "local"]  # newest first
    text = client.get("/metrics", headers=AUTH).text
    assert 'mvlattice_queries_total{engine="local"} 1' in text
    assert 'mvlattice_queries_total{engine="spark"} 1' in text


def test_the_openapi_document_describes_the_engine(client: TestClient) -> None:
    schemas = client.get("/openapi.json", headers=AUTH).json()["components"]["schemas"]
    assert {"engine", "engine_reason"} <= set(schemas["QueryResponse"]["required"])
    assert "engine" in schemas["LoggedQuery"]["properties"]


def test_negative_limits_are_refused(client: TestClient) -> None:
    response = client.post("/v1/query", json={"sql": "select 1", "limit": -1}, headers=AUTH)
    assert error(response) == (400, "bad_request")


def test_lattices_and_tiles(client: TestClient) -> None:
    assert client.get("/v1/lattices", headers=AUTH).json() == {
        "lattices": [{"name": "star", "model": "shop"}]
    }
    assert client.get("/v1/lattices/star", headers=AUTH).json()["plan"] == {"tiles": []}
    assert client.get("/v1/lattices/star?plan=false", headers=AUTH).json()["plan"] is None
    assert client.get("/v1/tiles", headers=AUTH).json()["tiles"][0]["name"] == "shop.t1"


# -- jobs ------------------------------------------------------------------------------------------
def wait_for(client: TestClient, job_id: str) -> dict:
    def done() -> dict | None:
        doc = client.get(f"/v1/jobs/{job_id}", headers=AUTH).json()
        return doc if doc["status"] in ("succeeded", "failed") else None

    return wait_until(done, 10, f"job {job_id} to finish", interval=0.02)


def test_a_job_runs_in_the_background(client: TestClient, service: Service) -> None:
    response = client.post("/v1/lattices/star/materialize", headers=AUTH)
    assert response.status_code == 202
    job = response.json()
    assert (job["kind"], job["lattice"], job["status"]) == ("materialize", "star", "queued")
    done = wait_for(client, job["id"])
    assert done["status"] == "succeeded" and done["result"]["results"][0]["status"] == "built"
    assert 'mvlattice_refreshes_total{trigger="http",outcome="ok"} 1' in service.metrics.render()


def test_overlapping_jobs_conflict(client: TestClient, fake: FakeBackend) -> None:
    fake.release.clear()
    first = client.post("/v1/lattices/star/materialize", headers=AUTH).json()
    second = client.post("/v1/tiles/shop.t1/refresh", headers=AUTH)  # a tile of that lattice
    assert error(second) == (409, "conflict")
    assert first["id"] in second.json()["error"]["message"]
    fake.release.set()
    wait_for(client, first["id"])
    assert client.post("/v1/tiles/shop.t1/refresh", headers=AUTH).status_code == 202


# -- metrics and the OpenAPI document ------------------------------------------------------------
def test_metrics_count_requests_rewrites_and_latency(client: TestClient) -> None:
    client.post("/v1/rewrite", json={"sql": "select count(*) from sales"}, headers=AUTH)
    client.post("/v1/rewrite", json={"sql": "select 1"}, headers=AUTH)
    client.post("/v1/rewrite", json={"sql": "drop table x"}, headers=AUTH)
    client.get("/v1/tiles")  # 401
    text = client.get("/metrics", headers=AUTH).text
    assert 'mvlattice_rewrites_total{outcome="rewritten"} 1' in text
    assert 'mvlattice_rewrites_total{outcome="not_rewritten"} 1' in text
    assert 'mvlattice_rewrites_total{outcome="error"} 1' in text
    assert "mvlattice_rewrite_hit_ratio 0.5" in text
    assert 'mvlattice_rewrite_latency_seconds_bucket{le="0.0025"} 2' in text
    assert 'mvlattice_http_requests_total{method="POST",route="/v1/rewrite",status="200"} 2' in text
    assert 'mvlattice_http_requests_total{method="GET",route="/v1/tiles",status="401"} 1' in text


def test_the_openapi_document_lists_every_endpoint(client: TestClient) -> None:
    paths = client.get("/openapi.json", headers=AUTH).json()["paths"]
    assert set(paths) == {
        "/v1/rewrite", "/v1/query", "/v1/lattices", "/v1/lattices/{name}", "/v1/tiles",
        "/v1/tiles/{name}/refresh", "/v1/lattices/{name}/materialize", "/v1/jobs/{job_id}",
        "/v1/querylog", "/v1/schedule", "/healthz", "/metrics", "/v1/advice",
    }  # fmt: skip
    assert "400" in paths["/v1/rewrite"]["post"]["responses"]
    assert "409" in paths["/v1/tiles/{name}/refresh"]["post"]["responses"]
