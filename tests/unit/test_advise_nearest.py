"""advise and the Queries page name the same nearest tile (one rule, `mvrewrite.closest`), and
advise merges the groups one tile answers into one element (`advise.merge`). No Spark: the
FoodMart model declares its columns, and the rewriter runs in the driver."""

from __future__ import annotations

import doctest
import re
from collections import Counter

import pytest

from mvlattice.advise.advice import Advice, Change, Fix, Group
from mvlattice.advise.advisor import nearest
from mvlattice.advise.merge import covers, groups, joined, merge
from mvlattice.advise.search import Search
from mvlattice.datasets.foodmart import TABLES
from mvlattice.http.ui.queries_view import nearest as page_nearest
from mvlattice.http.ui.queries_view import queries_html
from mvlattice.jobs.naming import tile_qualified_name
from mvlattice.lattice.lattice import Measure, TileSpec
from mvlattice.mvrewrite import closest
from mvlattice.mvrewrite.closest import closest_miss, nearest_view
from mvlattice.mvrewrite.context import context_for
from mvlattice.mvrewrite.rewriter import REJECTED, Explanation, RewriteResult, rewrite
from tests.golden.rewrite import runner

COUNT = (Measure("count"),)
# Declared first, and lacking two of the query's columns; the second tile lacks one.
YEAR = TileSpec("star", ("the_year",), COUNT)
QUARTERS = TileSpec("star", ("the_year", "quarter", "product_family"), COUNT)
MONTHS = (
    "select t.the_year, t.quarter, t.the_month, count(*) as n from foodmart.sales_fact_1997 s "
    "join foodmart.time_by_day t on s.time_id = t.time_id "
    "group by t.the_year, t.quarter, t.the_month"
)
TYPES = {
    (f"foodmart.{t.name}", c.split()[0].lower()): c.split()[1]
    for t in TABLES
    for c in re.split(r",\s*(?![^(]*\))", t.ddl)
}


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory):
    return runner.foodmart_model(tmp_path_factory.mktemp("foodmart"))


def search_for(model) -> Search:
    search = Search(model)
    search.types = TYPES  # the declared model has no Delta logs to read types from
    return search


def test_advise_names_the_tile_the_queries_page_names(model) -> None:
    context = context_for(model, tiles=[YEAR, QUARTERS], materializations=(), types=TYPES)
    result = rewrite(MONTHS, context, explain=True)
    assert not result.rewritten
    tiles = {tile_qualified_name(s): s for s in (YEAR, QUARTERS)}
    assert {e.reason for e in result.explain} == {"MISSING_COLUMN"}
    page = page_nearest([e.to_dict() for e in result.explain])  # as the query log keeps them
    change = nearest(MONTHS, result.explain, tiles, model, search_for(model))
    assert page is not None and change is not None
    assert change.base == page["view"] == tile_qualified_name(YEAR)
    assert [f.label for f in change.fixes] == ["quarter", "the_month"]
    why = closest_miss(result)
    assert why is not None and why.view == page["view"]  # `mvlattice rewrite` names it too
    explain = [e.to_dict() for e in result.explain]
    entry = {"id": 1, "kind": "query", "sql": MONTHS, "outcome": "ok", "rewritten": False}
    html = queries_html([{**entry, "explain": explain}])
    assert f"nearest: <code>{change.base}</code>" in html


def note(view: str | None, reason: str, outcome: str = REJECTED) -> Explanation:
    return Explanation(view, outcome, reason, f"{view}: {reason}")  # type: ignore[arg-type]


def test_one_rule_for_the_cli_and_the_page() -> None:
    stale, missing = note("a", "STALE"), note("b", "MISSING_COLUMN")
    far, odd = note("c", "TABLES_NOT_CONTAINED"), note("d", "SOMETHING_NEW")
    result = RewriteResult(False, "q", (), (missing, far, stale, odd))
    assert closest_miss(result) == stale  # `rewrite` used to name b: MISSING_COLUMN ranked above
    assert page_nearest([e.to_dict() for e in result.explain])["view"] == "a"
    assert nearest_view([odd, far]) == far and nearest_view([note(None, "UNSAFE")]) is None
    block = note(None, "UNSUPPORTED", "not_rewritable")
    assert closest_miss(RewriteResult(False, "q", (), (stale, block))) == block
    assert closest_miss(RewriteResult(False, "q", (), (note(None, "UNSUPPORTED", "error"),)))


def test_the_rule_s_doctest() -> None:
    found = doctest.testmod(closest)
    assert found.attempted > 0 and found.failed == 0


# -- merging ---------------------------------------------------------------------------------------
COLOUR = Fix(kind="dimension", label="colour")
REGION = Fix(kind="dimension", label="region")
TOP = Fix(kind="measure", label="max(amount)", measure=Measure("max", ("amount",)))
BASE = TileSpec("star", ("brand", "the_year"), COUNT)


def extend(*fixes: Fix, base: str | None = "t1", spec: TileSpec = BASE) -> Change:
    for fix in fixes:
        spec = fix.apply(spec)
    return Change(spec=spec, base=base, fixes=fixes, defaults=COUNT)


def everything(sql: str, spec: TileSpec) -> bool:
    return True


def test_two_changes_to_one_tile_are_one_element_answering_both() -> None:
    grouped = {extend(COLOUR): [("q1", 2), ("q2", 1)], extend(TOP): [("q3", 2)]}
    asked: Counter[str] = Counter()

    def answers(sql: str, spec: TileSpec) -> bool:
        asked[sql] += 1
        return True

    (bucket,) = merge(grouped, answers)
    assert bucket.queries == 5 and bucket.change.base == "t1"
    measures = (*COUNT, Measure("max", ("amount",)))
    assert bucket.change.spec == TileSpec("star", ("brand", "the_year", "colour"), measures)
    assert bucket.change.fixes == (COLOUR, TOP)
    assert set(asked) == {"q1", "q2", "q3"}  # every query checked against the merged tile
    (group,) = groups([bucket], examples=3)
    assert (group.queries, group.distinct, len(group.parts)) == (5, 3, 2)
    lacks = "column colour, measure max(amount)"
    assert group.headline() == f"5 queries missed tile t1 because it lacks {lacks}"
    doc = group.to_json()
    assert [p["queries"] for p in doc["parts"]] == [3, 2] and "element" not in doc["parts"][0]
    assert set(group.examples) == {"q1", "q2", "q3"}
    report = Advice(since=None, requests=5, misses=5, answered_now=0, reasons=(), groups=(group,),
                    unadvised=0).lines()  # fmt: skip
    assert report[2:5] == [
        f"5 queries missed tile t1 because it lacks {lacks}",
        "  3 queries missed tile t1 because it lacks column colour",
        "  2 queries missed tile t1 because it lacks measure max(amount)",
    ]
    assert sum(line.strip().startswith("- dimensions:") for line in report) == 1


def test_a_tile_covering_another_absorbs_it_and_unrelated_tiles_stay_apart() -> None:
    empty = TileSpec("star", (), COUNT)
    small = extend(COLOUR, base=None, spec=empty)
    big = extend(COLOUR, REGION, base=None, spec=empty)
    other = extend(Fix(kind="dimension", label="the_year"), base=None, spec=empty)
    assert covers(big.spec, small.spec) and not covers(small.spec, big.spec)
    buckets = merge({small: [("a", 1)], other: [("b", 3)], big: [("c", 1)]}, everything)
    assert [(b.change, b.queries) for b in buckets] == [(other, 3), (big, 2)]
    elsewhere = TileSpec("x", BASE.dimensions, COUNT)
    assert joined(extend(COLOUR), extend(COLOUR, spec=elsewhere)) is None


def test_a_merge_the_rewriter_refuses_is_not_made() -> None:
    grouped = {extend(COLOUR): [("q1", 2)], extend(TOP): [("q3", 1)]}
    buckets = merge(grouped, lambda sql, spec: sql != "q3")
    assert [b.change for b in buckets] == [extend(COLOUR), extend(TOP)]


def test_a_build_or_a_refresh_is_not_merged_with_an_extension() -> None:
    stale = Change(spec=BASE, base="t1", fixes=(), defaults=COUNT, matched_reason="STALE")
    buckets = merge({stale: [("q1", 1)], extend(COLOUR): [("q2", 1)]}, everything)
    assert len(buckets) == 2
    (group,) = groups(buckets[:1], examples=3)
    assert group.parts == () and isinstance(group, Group)
