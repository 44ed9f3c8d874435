"""The status page without Spark: SVG layout of stars and tile lattices, fragment rendering
(escaping, empty states), nearest-view explanations, and the routes' auth rules."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from fastapi.testclient import TestClient

from mvlattice.http.app import create_app
from mvlattice.http.render import lattice_document, plan_summary
from mvlattice.http.service import Service, Settings
from mvlattice.http.ui.html import PAGES, shell, size, when
from mvlattice.http.ui.lattices_view import graph_of, lattices_html, star_tables
from mvlattice.http.ui.queries_view import nearest, queries_html
from mvlattice.http.ui.svg import (
    MAX_R,
    MIN_R,
    STAR_RADIUS,
    StarTable,
    radius,
    star_layout,
    star_svg,
    tile_layout,
    tile_svg,
)
from mvlattice.http.ui.tiles_view import next_run, tiles_html
from mvlattice.plan.planner import LatticePlan, plan_lattice
from mvlattice.plan.render import GraphNode, TileGraph, plan_dot, tile_graph
from mvlattice.plan.workload import workload_from_entries
from tests.unit.plan_support import ASKED, shop_lattice, shop_stats
from tests.unit.test_service_http import FakeBackend

TOKEN = "status-page-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}", "X-Mvlattice-Request": "1"}
LOCAL = "http://localhost"  # the service answers to loopback names only
EVIL = "<script>alert('x')</script>&\""


@pytest.fixture
def plan(tmp_path: Path) -> LatticePlan:
    lattice = shop_lattice(
        tmp_path,
        tiles="[{dimensions: [store_id, fiscal_period], measures: [{agg: min, args: price}]}]",
    )
    return plan_lattice(lattice, shop_stats(), workload=workload_from_entries(ASKED, lattice),
                        max_tiles=3)  # fmt: skip


def parse(svg: str) -> ElementTree.Element:
    """Well-formed XML or an exception: escaping mistakes break parsing."""
    return ElementTree.fromstring(svg)


NS = "{http://www.w3.org/2000/svg}"


# -- star layout -----------------------------------------------------------------------------------
SNOWFLAKE = (
    StarTable("s", "shop.sales", None, ()),
    StarTable("p", "shop.product", "s", ("brand", "category")),
    StarTable("c", "shop.product_class", "p", ("family",)),
    StarTable("t", "shop.time", "s", ("the_year",)),
    StarTable("st", "shop.store", "s", ("store_id",)),
)


def test_the_fact_sits_in_the_middle_and_its_tables_around_it_at_one_distance() -> None:
    where = star_layout(SNOWFLAKE)
    assert where["s"] == (0.0, 0.0)
    for alias in ("p", "t", "st"):
        assert math.hypot(*where[alias]) == pytest.approx(STAR_RADIUS)
    angles = sorted(math.atan2(y, x) for a, (x, y) in where.items() if a in ("p", "t", "st"))
    gaps = [b - a for a, b in zip(angles, angles[1:], strict=False)]
    assert gaps == pytest.approx([2 * math.pi / 3] * 2)  # evenly spread arms


def test_a_snowflaked_table_is_further_out_on_its_parents_arm() -> None:
    where = star_layout(SNOWFLAKE)
    (px, py), (cx, cy) = where["p"], where["c"]
    assert math.hypot(cx, cy) == pytest.approx(2 * STAR_RADIUS)
    assert math.atan2(cy, cx) == pytest.approx(math.atan2(py, px))  # the only child: same angle


def test_star_svg_is_well_formed_with_one_line_per_join_and_escaped_names() -> None:
    tables = (*SNOWFLAKE, StarTable("x", EVIL, "s", (EVIL,)))
    svg = star_svg(tables)
    root = parse(svg)
    assert len(root.findall(f"{NS}line")) == len(tables) - 1
    assert len(root.findall(f"{NS}g")) == len(tables)
    assert "<script>" not in svg and "&lt;script&gt;" in svg
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert f"{EVIL} (x)" in texts  # escaped in markup, the same text once parsed


def test_star_svg_lists_a_few_columns_and_counts_the_rest() -> None:
    many = (StarTable("s", "f", None), StarTable("d", "dim", "s", tuple(f"c{i}" for i in range(9))))
    texts = [t.text for t in parse(star_svg(many)).iter(f"{NS}text")]
    assert texts[-6:] == ["c0", "c1", "c2", "c3", "c4", "+4 more"]
    assert star_svg(()) == '<p class="empty">no tables</p>'


# -- tile lattice ----------------------------------------------------------------------------------
def test_tile_graph_is_what_dot_draws(plan: LatticePlan) -> None:
    graph = tile_graph(plan)
    dot = plan_dot(plan)
    drawn = {tuple(line.strip(" ;").split(" -> ")) for line in dot.splitlines() if "->" in line}
    assert set(graph.edges) == drawn and graph.edges
    assert [n.id for n in graph.nodes] == ["star", "t1", "t2", "t3", "t4"]
    assert graph.nodes[0].rows == plan.top_rows
    assert [n.dimensions for n in graph.nodes[1:]] == [t.dimensions for t in plan.tiles]


def test_tile_layout_puts_the_star_on_top_and_wider_views_higher(plan: LatticePlan) -> None:
    graph = tile_graph(plan)
    where = tile_layout(graph)
    assert where["star"] == (0.0, 0.0)
    for parent, child in graph.edges:
        assert where[parent][1] < where[child][1]  # "computable from" always points down
    by_dims = {n.id: len(n.dimensions) for n in graph.nodes if n.id != "star"}
    # store_id and s.product_id (each with fiscal_period, a constant) share a level
    same = [i for i in by_dims if by_dims[i] == 2]
    assert len({where[i][1] for i in same}) == 1 and len({where[i][0] for i in same}) == 2


def test_circles_grow_with_rows_on_a_log_scale() -> None:
    assert radius(1, 10_000) == MIN_R and radius(10_000, 10_000) == MAX_R
    assert radius(100, 10_000) == pytest.approx((MIN_R + MAX_R) / 2)
    assert radius(5, 1) == MIN_R  # a one-row star draws no division by zero


def test_tile_svg_draws_every_view_and_edge_with_its_label(plan: LatticePlan) -> None:
    graph = tile_graph(plan)
    root = parse(tile_svg(graph))
    circles = {g.get("data-view"): g for g in root.iter(f"{NS}g")}
    assert set(circles) == {n.id for n in graph.nodes}
    assert len(root.findall(f"{NS}line")) == len(graph.edges)
    labels = [t.text for t in circles["t1"].iter(f"{NS}text")]
    assert labels[0].startswith("#1 store_id, fiscal_peri") and labels[1:] == ["20 rows, benefit 0"]
    radii = {k: float(g.find(f"{NS}circle").get("r")) for k, g in circles.items()}
    assert radii["star"] == max(radii.values()) and radii["t1"] < radii["t2"]


def test_tile_svg_escapes_names_and_handles_an_empty_graph() -> None:
    graph = TileGraph(EVIL, (GraphNode("star", 0, (), 10, 0), GraphNode("t1", 1, (EVIL,), 2, 8)),
                      (("star", "t1"),))  # fmt: skip
    svg = tile_svg(graph)
    assert "<script>" not in svg
    parse(svg)
    assert tile_svg(TileGraph("x", (), ())) == '<p class="empty">no plan</p>'


# -- lattices fragment -----------------------------------------------------------------------------
def test_the_lattice_fragment_comes_from_the_api_document(plan: LatticePlan) -> None:
    doc = json.loads(json.dumps(lattice_document(plan.lattice, "shop")))
    doc["plan"] = json.loads(json.dumps(plan_summary(plan)))  # as the JSON API sends it
    got, want = graph_of(doc), tile_graph(plan)
    assert got is not None and got.edges == want.edges
    assert [(n.id, n.dimensions, n.declared) for n in got.nodes] == [
        (n.id, n.dimensions, n.declared) for n in want.nodes
    ]
    assert [n.rows for n in got.nodes] == pytest.approx([n.rows for n in want.nodes], rel=1e-6)
    tables = {t.alias: t for t in star_tables(doc)}
    assert tables["s"].parent is None and all(t.parent for a, t in tables.items() if a != "s")
    assert sum(len(t.columns) for t in tables.values()) == len(
        [d for d in doc["dimensions"] if d["table"]]
    )
    html = lattices_html([doc])
    assert html.count("<svg") == 2 and 'data-lattice="sales"' in html
    assert "benefit" in html and "#1 (declared)" in html
    share = f"{plan.coverage.share:.1%}" if plan.coverage else "?"
    assert f"coverage of the workload: {share} of its weight" in html
    assert "as tiles are added: 1: " in html


def test_a_lattice_without_a_plan_says_why_and_no_lattice_says_so() -> None:
    doc = {"name": "star", "model": "m", "tables": [], "dimensions": [], "measures": [],
           "plan_error": f"statistics failed: {EVIL}"}  # fmt: skip
    html = lattices_html([doc])
    assert "no plan: statistics failed: &lt;script&gt;" in html and "<script>" not in html
    assert "no lattices" in lattices_html([])


# -- tiles fragment --------------------------------------------------------------------------------
def tile(**changes: Any) -> dict[str, Any]:
    base = {
        "name": "mvlattice.star_1", "kind": "tile", "lattice": "star", "model": "shop",
        "dimensions": ["category", "year"], "status": "stale", "message": "sources changed",
        "rows": 6, "size_bytes": 2048, "source_versions": {"shop.sales": 0, "shop.product": 0},
        "current_versions": {"shop.sales": 1, "shop.product": 0},
        "last_refresh": "2026-11-02T03:00:00.000+00:00", "refresh_path": "full",
        "build_seconds": 2.5, "last_error": None, "hits": 3, "last_used": None,
    }  # fmt: skip
    return base | changes


RUNS = [
    {"model": "shop", "kind": "lattice", "name": "star", "cron": "0 * * * *",
     "next_run": "2026-11-02T05:00:00Z"},
    {"model": "shop", "kind": "materialization", "name": "shop.v", "cron": "* * * * *",
     "next_run": "2026-11-02T04:01:00Z"},
]  # fmt: skip


def row_of(html: str, name: str) -> str:
    match = re.search(rf'<tr data-tile="{re.escape(name)}".*?</tr>', html)
    assert match, html
    return match.group(0)


def test_the_tile_table_shows_status_versions_sizes_and_a_refresh_button() -> None:
    html = tiles_html([tile()], RUNS)
    row = row_of(html, "mvlattice.star_1")
    assert 'data-status="stale"' in row and 'class="badge status-stale"' in row
    assert '<li class="moved"><code>shop.sales</code> 0 → 1</li>' in row
    assert "<li><code>shop.product</code> 0 → 0</li>" in row
    assert "2.0 KiB" in row and "took 2.5 s · full" in row and "2026-11-02 03:00:00 UTC" in row
    assert "2026-11-02 05:00:00 UTC" in row  # its lattice's next scheduled run
    assert '<button type="button" class="refresh" data-tile="mvlattice.star_1" ' in row
    assert "<code>shop.v</code>" in html.split("<h2>Schedule</h2>")[1]


def test_the_tile_table_escapes_every_text() -> None:
    html = tiles_html([tile(name=EVIL, message=EVIL, last_error=EVIL, dimensions=[EVIL],
                            source_versions={EVIL: 1}, status=EVIL)], [])  # fmt: skip
    assert "<script>" not in html
    assert html.count("&lt;script&gt;") >= 6
    assert 'class="badge status-other"' in html  # an unknown status gets no made-up class


def test_the_tile_table_when_empty_and_when_never_built() -> None:
    html = tiles_html([], [])
    assert "no tiles or materializations" in html and "no scheduled refreshes" in html
    never = row_of(tiles_html([tile(last_refresh=None, rows=None, size_bytes=None,
                                    source_versions={}, current_versions={})], []),
                   "mvlattice.star_1")  # fmt: skip
    assert "never" in never and "<td>—</td>" in never


def test_next_run_of_a_tile_is_its_lattices_and_of_a_view_its_own() -> None:
    assert next_run(tile(), RUNS) == "2026-11-02T05:00:00Z"
    view = tile(kind="materialization", name="shop.v", lattice=None)
    assert next_run(view, RUNS) == "2026-11-02T04:01:00Z"
    assert next_run(tile(model="other"), RUNS) is None
    assert next_run(tile(lattice="elsewhere"), RUNS) is None


def test_formats() -> None:
    assert size(0) == "0 B" and size(1536) == "1.5 KiB" and size(3 * 1024**3) == "3.0 GiB"
    assert size(None) == "—" and when(None) == "—" and when("garbage<") == "garbage&lt;"


# -- queries fragment ------------------------------------------------------------------------------
def explained(view: str | None, outcome: str, reason: str, message: str = "") -> dict[str, Any]:
    return {"view": view, "outcome": outcome, "reason": reason, "message": message}


def test_the_nearest_view_is_the_one_that_got_furthest() -> None:
    far = explained("a", "rejected", "TABLES_NOT_CONTAINED", "reads other tables")
    near = explained("b", "rejected", "MISSING_COLUMN", "add dimension 'brand'")
    nearer = explained("c", "rejected", "STALE", "sources changed")
    block = explained(None, "not_rewritable", "UNSAFE", "outer join")
    assert nearest([far, near]) == near
    assert nearest([near, far, nearer]) == nearer
    assert nearest([block]) is None and nearest([]) is None
    assert nearest([explained("d", "matched", ""), nearer])["view"] == "d"
    assert nearest([explained("e", "rejected", "SOMETHING_NEW"), far]) == far


def entry(**changes: Any) -> dict[str, Any]:
    base = {"id": 7, "time": "2026-11-02T04:00:00Z", "kind": "query", "sql": "select 1",
            "model": "shop", "rewritten": False, "views": [], "latency_ms": 12.25, "outcome": "ok",
            "message": None, "explain": None, "explained_later": False}  # fmt: skip
    return base | changes


def test_a_miss_shows_the_nearest_view_and_what_would_make_it_match() -> None:
    why = [explained("mvlattice.t1", "rejected", "MISSING_COLUMN", "add dimension 'brand'"),
           explained("shop.v", "rejected", "TABLES_NOT_CONTAINED", "other tables")]  # fmt: skip
    html = queries_html([entry(explain=why, explained_later=True)])
    assert (
        "nearest: <code>mvlattice.t1</code>" in html and "add dimension &#x27;brand&#x27;" in html
    )
    assert "explained after the request" in html and html.count("<li>") == 2
    assert 'data-rewritten="no"' in html and "12.2 ms" in html


def test_hits_errors_and_unexplained_misses() -> None:
    hit = entry(id=1, rewritten=True, views=["mvlattice.t1"])
    bad = entry(id=2, outcome="bad_sql", message="does not parse")
    todo = entry(id=3)
    html = queries_html([hit, bad, todo])
    assert 'data-rewritten="yes"' in html and "<code>mvlattice.t1</code>" in html
    assert "status-failed" in html and "does not parse" in html
    assert "not explained yet" in html
    assert "no rewrite or query requests" in queries_html([])


def test_each_query_shows_the_engine_that_answered() -> None:
    local = entry(id=1, rewritten=True, views=["mvlattice.t1"], engine="local")
    spark = entry(id=2, engine="spark")
    rewrite = entry(id=3, kind="rewrite", engine="")
    html = queries_html([local, spark, rewrite])
    assert "<th>engine</th>" in html
    rows = re.findall(r'<tr data-entry="(\d)"[^>]* data-engine="(\w*)">(.*?)</tr>', html)
    assert [(n, engine) for n, engine, _ in rows] == [("1", "local"), ("2", "spark"), ("3", "")]
    cells = [re.findall(r"<td>(.*?)</td>", tds)[5] for _, _, tds in rows]
    assert cells == ['<span class="engine">tile engine</span>',
                     '<span class="engine">Spark</span>', "—"]  # fmt: skip
    assert "—" in queries_html([entry()])  # an entry without the field


def test_sql_is_escaped_in_the_query_log() -> None:
    html = queries_html([entry(sql=f"select '{EVIL}' </pre>", message=EVIL)])
    assert "<script>" not in html and "</pre>'" not in html.replace("&lt;/pre&gt;", "")


# -- the pages and their auth ----------------------------------------------------------------------
class Backend(FakeBackend):
    def tiles(self, model: str | None, lattice: str | None) -> list[dict[str, Any]]:
        return [tile(name="shop.t1")]


@pytest.fixture
def logged() -> list:
    return []


@pytest.fixture
def service(logged: list) -> Service:
    runs = lambda: RUNS  # noqa: E731
    return Service(Backend(), Settings(token=TOKEN), record=logged.append, schedule=runs)


@pytest.fixture
def client(service: Service) -> TestClient:
    return TestClient(create_app(service), raise_server_exceptions=False, base_url=LOCAL)


def test_shells_and_static_files_need_no_token_and_hold_no_data(client: TestClient) -> None:
    assert client.get("/", follow_redirects=False).headers["location"] == "/ui/"
    for page in PAGES:
        response = client.get(f"/ui/{page.slug}")
        assert response.status_code == 200 and "shop.t1" not in response.text
        assert 'data-auth="bearer"' in response.text
        assert "script-src 'self'" in response.headers["content-security-policy"]
    landing = client.get("/ui/")
    assert landing.status_code == 200 and 'data-part="/ui/part/tiles"' in landing.text
    for name, kind in (("app.js", "text/javascript"), ("style.css", "text/css"),
                       ("favicon.svg", "image/svg+xml")):  # fmt: skip
        response = client.get(f"/ui/static/{name}")
        assert response.status_code == 200 and response.headers["content-type"].startswith(kind)


def test_fragments_and_new_json_routes_need_the_token(client: TestClient) -> None:
    for path in ("/ui/part/tiles", "/ui/part/lattices", "/ui/part/queries", "/v1/querylog",
                 "/v1/schedule", "/ui/static/nope/../../v1/tiles", "/ui/other"):  # fmt: skip
        assert client.get(path).status_code == 401, path
    assert client.get("/ui/static/nope").status_code == 404
    response = client.get("/ui/part/tiles", headers=AUTH)
    assert response.status_code == 200 and 'data-tile="shop.t1"' in response.text
    assert "2026-11-02 05:00:00 UTC" in response.text
    assert client.get("/v1/schedule", headers=AUTH).json() == {"runs": RUNS}


def test_without_a_token_the_shell_does_not_ask_for_one() -> None:
    client = TestClient(create_app(Service(Backend())), base_url=LOCAL)
    assert 'data-auth="none"' in client.get("/ui/tiles").text
    assert client.get("/ui/part/tiles").status_code == 200


def test_the_query_log_keeps_requested_explanations_and_explains_misses_later(
    client: TestClient, logged: list
) -> None:
    client.post("/v1/rewrite", json={"sql": "select 1 from sales", "explain": True}, headers=AUTH)
    client.post("/v1/rewrite", json={"sql": "select 2"}, headers=AUTH)
    client.post("/v1/rewrite", json={"sql": "select (1"}, headers=AUTH)
    entries = client.get("/v1/querylog", headers=AUTH).json()["entries"]
    assert [e["sql"] for e in entries] == ["select (1", "select 2", "select 1 from sales"]
    assert entries[2]["rewritten"] and entries[2]["explain"][0]["outcome"] == "used"
    assert entries[1]["explain"] is None and entries[0]["outcome"] == "bad_sql"
    assert client.get("/v1/querylog?limit=1", headers=AUTH).json()["entries"][0]["id"] == 3
    assert client.get("/v1/querylog?limit=-1", headers=AUTH).status_code == 400

    html = client.get("/ui/part/queries", headers=AUTH).text
    assert "nearest: <code>shop.t1</code>" in html  # explained for the page, not logged
    assert len(logged) == 3
    again = client.get("/v1/querylog", headers=AUTH).json()["entries"][1]
    assert again["explained_later"] is True and again["explain"][0]["view"] == "shop.t1"


def test_the_lattices_fragment_survives_a_lattice_without_plan_graph(client: TestClient) -> None:
    html = client.get("/ui/part/lattices", headers=AUTH).text
    assert 'data-lattice="star"' in html and "no plan" in html


def test_the_shell_escapes_and_marks_the_current_page() -> None:
    html = shell(PAGES[1], needs_token=False)
    assert '<a href="/ui/lattices" aria-current="page">Lattices</a>' in html
    assert html.count("aria-current") == 1 and 'data-poll-ms="10000"' in html


def test_a_tile_dropped_from_its_plan_says_gc_removes_it() -> None:
    reason = "no longer in the plan of lattice 'star'"
    row = row_of(tiles_html([tile(dropped=reason)], []), "mvlattice.star_1")
    assert f"<small>{reason.replace(chr(39), '&#x27;')}: gc removes it</small>" in row
    assert "gc removes it" not in row_of(tiles_html([tile()], []), "mvlattice.star_1")
