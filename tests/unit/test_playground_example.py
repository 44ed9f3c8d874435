"""The playground's first query (`mvlattice.http.ui.example`), from the API's documents: no
Spark. That the rewriter puts it on the tile is checked against a live service in
tests/integration/test_status_page.py."""

from __future__ import annotations

from typing import Any

import sqlglot
from fastapi.testclient import TestClient

from mvlattice.http.app import create_app
from mvlattice.http.service import Service, Settings
from mvlattice.http.ui.example import MAX_CANDIDATES, candidates, fallback, tile_query
from tests.unit.test_service_http import AUTH, LOCAL, TOKEN, FakeBackend

LATTICE = {
    "name": "star",
    "model": "shop",
    "fact": "shop.sales",
    "tables": [
        {"alias": "s", "table": "shop.sales", "parent": None},
        {"alias": "p", "table": "shop.product", "parent": "s"},
    ],
    "dimensions": [
        {"label": "year", "expression": "`s`.`year`", "derived": False, "table": "s"},
        {"label": "units", "expression": "`s`.`units`", "derived": False, "table": "s"},
        {"label": "odd name", "expression": "`s`.`odd name`", "derived": False, "table": "s"},
        {"label": "category", "expression": "`p`.`category`", "derived": False, "table": "p"},
    ],
    "measures": [
        {"agg": "count", "name": "count"},
        {"agg": "sum", "args": ["units"], "name": "sum_units"},
        {"agg": "max", "args": ["category"], "name": "max_category"},
    ],
}


def tile(name: str, dims: list[str], status: str = "fresh", **more: object) -> dict:
    return {"name": name, "kind": "tile", "model": "shop", "lattice": "star", "status": status,
            "dimensions": dims, "measures": ["count(*)", "sum(units)"], **more}  # fmt: skip


def test_a_tile_query_groups_by_its_fact_table_dimensions_and_computes_its_measures() -> None:
    sql = tile_query(LATTICE, ["category", "year"], ["count(*)", "sum(units)"])
    assert sql == (
        "SELECT s.year, COUNT(*) AS count, SUM(s.units) AS sum_units\n"
        "FROM shop.sales AS s\nGROUP BY s.year\nORDER BY s.year"
    )
    sqlglot.parse_one(sql, read="spark")  # it parses


def test_names_that_need_quotes_keep_them_and_a_tile_without_fact_dimensions_is_a_total() -> None:
    assert "`odd name`" in tile_query(LATTICE, ["odd name"], ["count(*)"])
    total = tile_query(LATTICE, ["category"], ["max(category)"])
    assert total == "SELECT COUNT(*) AS row_count\nFROM shop.sales AS s"  # max(p.category) joins


def test_candidates_are_built_tiles_fresh_first_and_at_most_a_few() -> None:
    tiles = [
        tile("mvlattice.old", ["year"], "stale"),
        {"name": "shop.v", "kind": "materialization", "model": "shop", "status": "fresh"},
        tile("mvlattice.new", ["year", "units"]),
        tile("mvlattice.gone", ["year"], "missing", usable=False),
        tile("elsewhere", ["year"], lattice="other"),
    ]
    found = candidates([LATTICE], tiles)
    assert [e.tile for e in found] == ["mvlattice.new", "mvlattice.old"]
    assert found[0].model == "shop" and "GROUP BY s.year, s.units" in found[0].sql
    many = [tile(f"t{i}", ["year"]) for i in range(MAX_CANDIDATES + 3)]
    assert len(candidates([LATTICE], many)) == MAX_CANDIDATES


def test_without_a_built_tile_the_fallback_counts_the_fact_table() -> None:
    assert candidates([LATTICE], []) == []
    spare = fallback([LATTICE])
    assert spare is not None and spare.tile is None and spare.model == "shop"
    assert spare.sql == "SELECT COUNT(*) AS row_count\nFROM shop.sales"
    assert fallback([]) is None


class Backend(FakeBackend):
    """Serves LATTICE (with another fact table when `fact` is given) and one built tile; the
    fake rewrites any SQL reading `sales` onto shop.t1."""

    def __init__(self, fact: str = "shop.sales") -> None:
        super().__init__()
        self.fact = fact

    def lattices(self, model: str | None) -> list[dict[str, Any]]:
        return [{**LATTICE, "fact": self.fact}]

    def tiles(self, model: str | None, lattice: str | None) -> list[dict[str, Any]]:
        return [tile("shop.t1", ["year"])]


def example(backend: FakeBackend, headers: dict[str, str] | None = AUTH) -> Any:
    service = Service(backend, Settings(token=TOKEN))
    return TestClient(create_app(service), base_url=LOCAL).get("/ui/part/example", headers=headers)


def test_the_example_route_needs_the_token_and_offers_the_query_the_tile_answers() -> None:
    assert example(Backend(), headers=None).status_code == 401
    doc = example(Backend()).json()
    sql = tile_query(LATTICE, ["year"], ["count(*)", "sum(units)"])
    assert doc == {"sql": sql, "model": "shop", "tiles": ["shop.t1"]}


def test_a_candidate_the_rewriter_leaves_alone_gives_way_to_the_fallback() -> None:
    doc = example(Backend("shop.orders")).json()  # the fake rewrites only `sales`
    assert doc == {"sql": "SELECT COUNT(*) AS row_count\nFROM shop.orders", "model": "shop",
                   "tiles": []}  # fmt: skip
