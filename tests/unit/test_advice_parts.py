"""advise's pure parts: reading the rewriter's hints into fixes, the tile element a change
writes, the report's lines, and the status page's Advice fragment and JSON route."""

from __future__ import annotations

from typing import Any

import yaml
from fastapi.testclient import TestClient

from mvlattice.advise.advice import Advice, Change, Fix, Group
from mvlattice.advise.search import fix_of
from mvlattice.http.app import create_app
from mvlattice.http.service import Service, Settings
from mvlattice.http.ui.advice_view import advice_html
from mvlattice.lattice.lattice import Measure, TileSpec
from tests.unit.test_service_http import FakeBackend

DEFAULTS = (Measure("count"), Measure("sum", ("units",)))
BASE = TileSpec("star", ("brand", "the_year"), DEFAULTS)


def test_hints_become_fixes() -> None:
    dim = fix_of(
        "the query groups by p.colour, which the view does not output as a grouping column "
        "(add dimension 'colour' to a tile of lattice 'star')"
    )
    assert dim == Fix(kind="dimension", label="colour")
    agg = fix_of(
        "MAX(s.amount) cannot be computed: the view has no MAX(s.amount) "
        "(add measure MAX(amount) to a tile of lattice 'star')"
    )
    assert agg == Fix(kind="measure", label="max(amount)", measure=Measure("max", ("amount",)))
    star = fix_of("COUNT(*) cannot be computed (add measure COUNT(*) to a tile of lattice 'x')")
    assert star is not None and star.measure == Measure("count")
    assert fix_of("the view reads a, b; the query reads c") is None


def test_fixes_extend_a_tile_and_the_element_keeps_default_measures_implicit() -> None:
    colour = Fix(kind="dimension", label="colour")
    spec = colour.apply(BASE)
    change = Change(spec=spec, base="mvlattice.t", fixes=(colour,), defaults=DEFAULTS)
    assert change.element() == {"dimensions": ["brand", "the_year", "colour"]}
    assert change.yaml() == "- dimensions: [brand, the_year, colour]"
    top = Fix(kind="measure", label="max(amount)", measure=Measure("max", ("amount",)))
    bigger = Change(spec=top.apply(BASE), base="mvlattice.t", fixes=(top,), defaults=DEFAULTS)
    assert yaml.safe_load(bigger.yaml()) == [{
        "dimensions": ["brand", "the_year"],
        "measures": [{"agg": "count"}, {"agg": "sum", "args": ["units"]},
                     {"agg": "max", "args": ["amount"]}],
    }]  # fmt: skip
    assert (change.action, bigger.action) == ("extend tile mvlattice.t", "extend tile mvlattice.t")
    new = Change(spec=spec, base=None, fixes=(colour,), defaults=DEFAULTS)
    assert new.action == "add a tile"


def advice() -> Advice:
    colour = Fix(kind="dimension", label="colour")
    change = Change(spec=colour.apply(BASE), base="mvlattice.t", fixes=(colour,), defaults=DEFAULTS)
    group = Group(change=change, queries=212, distinct=2, examples=("select '<b>'",))
    return Advice(since=None, requests=300, misses=230, answered_now=10,
                  reasons=(("MISSING_COLUMN", 212), ("UNSUPPORTED", 8)), groups=(group,),
                  unadvised=8)  # fmt: skip


def test_the_report_says_how_many_missed_which_tile_and_why() -> None:
    lines = advice().lines()
    assert lines[0] == (
        "230 of 300 logged requests were not rewritten; 10 of them are answered by the tiles now"
    )
    assert "212 queries missed tile mvlattice.t because it lacks column colour" in lines
    assert "    - dimensions: [brand, the_year, colour]" in lines
    assert lines[-1] == "8 misses no tile would answer (see rewrite --explain)"
    doc = advice().to_json()
    assert doc["groups"][0]["change"]["missing"] == [{"kind": "dimension", "name": "colour"}]


def test_the_fragment_escapes_and_shows_the_element() -> None:
    html = advice_html([{"model": "shop", **advice().to_json()}])
    assert "212 queries missed tile mvlattice.t because it lacks column colour" in html
    assert "- dimensions: [brand, the_year, colour]" in html
    assert "<b>" not in html and "&lt;b&gt;" in html
    assert "no models served" in advice_html([])


class Backend(FakeBackend):
    def advice(
        self, model: str | None, since: str | None, stop: Any = None
    ) -> list[dict[str, Any]]:
        return [{"model": "shop", **advice().to_json(), "since": since}]


def test_json_route_and_fragment_need_the_token() -> None:
    service = Service(Backend(), Settings(token="t" * 32))
    client = TestClient(create_app(service), raise_server_exceptions=False,
                        base_url="http://127.0.0.1")  # fmt: skip
    assert client.get("/v1/advice").status_code == 401
    assert client.get("/ui/part/advice").status_code == 401
    auth = {"Authorization": "Bearer " + "t" * 32}
    doc = client.get("/v1/advice", params={"since": "2h"}, headers=auth).json()
    assert doc["models"][0]["groups"][0]["queries"] == 212 and doc["models"][0]["since"] == "2h"
    page = client.get("/ui/part/advice", headers=auth)
    assert page.status_code == 200 and "lacks column colour" in page.text


def test_a_matched_tile_is_called_stale_or_not_built_as_it_is() -> None:
    def headline(reason: str) -> tuple[str, str]:
        change = Change(spec=BASE, base="mvlattice.t", fixes=(), defaults=DEFAULTS,
                        matched_reason=reason)  # fmt: skip
        group = Group(change=change, queries=3, distinct=1, examples=("q",))
        return group.headline(), change.action

    stale, action = headline("STALE")
    assert "3 queries matched tile mvlattice.t, which is stale" in stale
    assert "not built" not in stale and action == "refresh tile mvlattice.t"
    missing, action = headline("NOT_AVAILABLE")
    assert missing == "3 queries matched tile mvlattice.t, which is not built"
    assert action == "materialize tile mvlattice.t"


def test_the_fragment_lists_a_merged_elements_parts_and_counts_one_query_as_one() -> None:
    doc = {"model": "shop", **advice().to_json()}
    group = doc["groups"][0]
    group["distinct"] = 1
    first = "3 queries missed tile t because it lacks column colour"
    group["parts"] = [{"headline": first}, {"headline": "2 queries missed tile t: max(amount)"}]
    html = advice_html([doc])
    assert "<summary>1 distinct query</summary>" in html
    assert f'<ul class="parts"><li>{first}</li>' in html
    group["parts"] = group["parts"][:1]
    assert 'class="parts"' not in advice_html([doc])
