"""Issue 31: one serving pipeline on every edge — a request's text is parsed once and
rewritten once, whichever engine answers (the tile engine or Spark), over HTTP and through
the Python API. Counted with a spy on sqlglot's parser and the pipeline's rewrite count."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import sqlglot
from fastapi.testclient import TestClient

from mvlattice.errors import SqlError
from mvlattice.http.app import create_app
from mvlattice.http.service import Service, Settings
from mvlattice.http.workspaces import WorkspaceBackend
from mvlattice.workspace import Workspace
from tests.integration.test_jobs_support import make_shop

pytestmark = pytest.mark.spark

SCHEMA = "serving_pipeline"
TILES = "- dimensions: [category, the_year]\n"
JOIN = (
    f"from {SCHEMA}.sales s join {SCHEMA}.product p on s.product_id = p.product_id "
    f"join {SCHEMA}.time t on s.time_id = t.time_id"
)
BY_CATEGORY = f"select p.category, sum(s.units) as units {JOIN} group by p.category"
# A tile is read, but soundex is not proven identical on the tile engine: Spark answers.
BY_CODE = f"select soundex(p.category) as code, sum(s.units) as units {JOIN} group by p.category"
DETAIL = f"select s.units from {SCHEMA}.sales s where s.units > 3"  # base tables


@pytest.fixture(scope="module")
def shop(spark, warehouse: Path) -> Workspace:
    model = make_shop(spark, warehouse, SCHEMA, TILES)
    ws = Workspace(model, warehouse=str(warehouse))
    assert ws.materialize().ok
    return ws


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Counter:
    """How often sqlglot parsed each text."""
    seen: Counter = Counter()
    real = sqlglot.parse

    def counted(sql: str, *args, **kwargs):
        seen[sql] += 1
        return real(sql, *args, **kwargs)

    monkeypatch.setattr(sqlglot, "parse", counted)
    return seen


def answer_of(spark, sql: str) -> Counter:
    return Counter(tuple(r) for r in spark.sql(sql).collect())


@pytest.mark.parametrize(
    "sql, rewritten, engine",
    [(BY_CATEGORY, True, "local"), (BY_CODE, True, "spark"), (DETAIL, False, "spark")],
)
def test_an_http_request_is_parsed_once_and_rewritten_once(
    spark, shop: Workspace, parses: Counter, sql: str, rewritten: bool, engine: str
) -> None:
    backend = WorkspaceBackend({"shop": shop}, query_timeout=60)
    backend.start()
    text = f"{sql} /* http {engine} {rewritten} */"  # a text never seen: nothing kept
    before = shop.serving.rewrite_count.value
    with TestClient(create_app(Service(backend, Settings())), base_url="http://localhost") as c:
        reply = c.post("/v1/query", json={"sql": text})
    doc = reply.json()
    assert reply.status_code == 200 and (doc["rewritten"], doc["engine"]) == (rewritten, engine)
    assert Counter(tuple(r) for r in doc["rows"]) == answer_of(spark, sql)
    assert shop.serving.rewrite_count.value - before == 1
    assert parses[text] == 1, parses


@pytest.mark.parametrize("sql, engine", [(BY_CATEGORY, "local"), (BY_CODE, "spark")])
def test_a_python_api_query_is_parsed_once_and_rewritten_once(
    spark, shop: Workspace, parses: Counter, sql: str, engine: str
) -> None:
    text = f"{sql} /* api {engine} */"
    before = shop.serving.rewrite_count.value
    result = shop.query(text)
    assert result.rewrite.rewritten and result.engine == engine, result.engine_reason
    assert Counter(result.rows) == answer_of(spark, sql)
    assert shop.serving.rewrite_count.value - before == 1
    assert parses[text] == 1, parses


def test_a_new_binding_of_an_accepted_shape_needs_no_analysis_of_its_own(
    spark, shop: Workspace
) -> None:
    """Spark's acceptance is kept per literal-free shape: a dashboard's next date or filter
    value is not analyzed again; a text of another shape still is, and what Spark rejects
    is still rejected."""
    shaped = (
        f"select p.category, sum(s.units) as units {JOIN} where t.the_year = {{}} "
        "group by p.category"
    )
    acceptance, templates = shop.serving.acceptance, shop.serving.templates
    first = shop.query(shaped.format(2020))
    analyses, hits, bound = acceptance.analyses, acceptance.shape_hits, templates.hits
    for year in (2021, 2022, 1999):
        sql = shaped.format(year)
        answer = shop.query(sql)
        assert Counter(answer.rows) == answer_of(spark, sql)
    # each accepted for its shape, or answered from its template (accepted with its shape)
    assert acceptance.analyses == analyses
    assert (acceptance.shape_hits - hits) + (templates.hits - bound) == 3
    assert first.rewrite.rewritten
    other_shape = shaped.format("2020 + 1")
    assert Counter(shop.query(other_shape).rows) == answer_of(spark, other_shape)
    assert acceptance.analyses == analyses + 1
    # Calcite-style quoted names: sqlglot reads them as a table, Spark does not parse them
    rejected = shaped.replace(f"{SCHEMA}.sales s", f'"{SCHEMA}"."sales" s').format(2021)
    assert rejected != shaped.format(2021)
    with pytest.raises(SqlError):
        shop.query(rejected)


TEMPLATE = (
    f"select p.category, t.the_year, sum(s.units) as units {JOIN} "
    "where t.the_year in ({}) and p.category <> {} group by p.category, t.the_year "
    "order by p.category, t.the_year, units limit {}"
)


def test_a_new_binding_of_a_template_is_neither_parsed_nor_rewritten(
    spark, shop: Workspace, parses: Counter
) -> None:
    """Over HTTP: the first text of a template is parsed and rewritten once; later texts of
    the template (other years, in another order or repeated, another category, another LIMIT)
    are answered by binding their literals — no parse, no rewrite — with Spark's rows over
    the base tables; a literal of another shape (a digit in the category) is decided afresh."""
    backend = WorkspaceBackend({"shop": shop}, query_timeout=60)
    backend.start()
    templates = shop.serving.templates
    bindings = [("2020, 2021", "'Books'", 10, False), ("2021, 2020, 2021", "'Toys'", 3, True),
                ("2019, 2022", "'Games'", 1, True), ("2022, 2019", "'Books'", 50, True),
                ("2020, 2021", "'Books 2'", 10, False)]  # fmt: skip
    with TestClient(create_app(Service(backend, Settings())), base_url="http://localhost") as c:
        for years, category, limit, bound in bindings:
            text = TEMPLATE.format(years, category, limit)
            rewrites, hits = shop.serving.rewrite_count.value, templates.hits
            reply = c.post("/v1/query", json={"sql": text})
            doc = reply.json()
            assert reply.status_code == 200, doc
            assert (doc["rewritten"], doc["engine"]) == (True, "local")
            assert [tuple(r) for r in doc["rows"]] == [tuple(r) for r in spark.sql(text).collect()]
            assert templates.hits - hits == int(bound), text
            assert shop.serving.rewrite_count.value - rewrites == int(not bound), text
            assert parses[text] == int(not bound), text
