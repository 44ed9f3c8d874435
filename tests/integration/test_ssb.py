"""The SSB generator: specification row counts and domains; the model and the 13 queries run;
tiles planned with the 13 queries as the workload answer every one of them (the benchmark's
building blocks, `bench/ssb.py`, at a tiny scale factor)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.datasets import ssb
from mvlattice.datasets.ssb_queries import QUERIES, workload
from mvlattice.proof.comparison import compare
from mvlattice.workspace import Workspace

pytestmark = pytest.mark.spark

SF = 0.001
# 6,000 lines, 2 suppliers: the queries that find no rows at this scale (the other 7 do).
EMPTY_AT_SF = ("Q2.2", "Q2.3", "Q3.2", "Q3.3", "Q3.4", "Q4.3")


@pytest.fixture(scope="module")
def ssb_workspace(spark, warehouse: Path, tmp_path_factory) -> Workspace:
    ssb.generate(spark, str(warehouse), SF, progress=lambda _line: None)
    model = ssb.model_file(SF, tmp_path_factory.mktemp("ssb"))
    assert f"location: {ssb.folder(SF)}" in model.read_text()
    return Workspace(model, warehouse=str(warehouse))


def test_specification_sizes() -> None:
    assert ssb.sizes(1) == ssb.SsbSizes(6_000_000, 30_000, 2_000, 200_000)
    assert ssb.sizes(10) == ssb.SsbSizes(60_000_000, 300_000, 20_000, 800_000)


def test_row_counts_and_domains(ssb_workspace: Workspace) -> None:
    ws = ssb_workspace
    one = lambda sql: ws.collect(ws.sql(sql))[1][0]  # noqa: E731
    assert one("select count(*) from ssb.lineorder") == (6000,)
    assert one(
        "select count(*), count(distinct d_datekey), min(d_year), max(d_year) from ssb.date"
    ) == (2556, 2556, 1992, 1998)
    assert one("select count(*) from ssb.part") == (200,)
    assert one(
        "select min(lo_quantity) >= 1, max(lo_quantity) <= 50, min(lo_discount) >= 0, "
        "max(lo_discount) <= 10 from ssb.lineorder"
    ) == (True, True, True, True)
    assert one(
        "select count(*) from ssb.lineorder l left anti join ssb.date d "
        "on l.lo_orderdate = d.d_datekey"
    ) == (0,)
    assert one(
        "select count(*) from ssb.part where p_brand1 not rlike '^MFGR#[1-5][1-5]"
        "(0[1-9]|[1-3][0-9]|40)$' or substr(p_brand1, 1, 7) != p_category"
    ) == (0,)
    assert one(
        "select count(*) from ssb.customer where c_region not in "
        "('AFRICA', 'AMERICA', 'ASIA', 'EUROPE', 'MIDDLE EAST') "
        "or substr(c_city, 1, 9) != rpad(substr(c_nation, 1, 9), 9, ' ')"
    ) == (0,)


def test_model_validates_and_all_13_queries_run(ssb_workspace: Workspace) -> None:
    ws = ssb_workspace
    lattice = ws.model.lattice("lineorder")
    assert {"lo_discount_revenue", "lo_profit"} <= set(lattice.labels)
    _, violations = ws.validate_data()
    assert violations == ()
    for name, sql in QUERIES:
        columns, _ = ws.collect(ws.sql(sql))
        assert columns, name
    assert [n for n, _ in QUERIES] == [
        "Q1.1",
        "Q1.2",
        "Q1.3",
        "Q2.1",
        "Q2.2",
        "Q2.3",
        "Q3.1",
        "Q3.2",
        "Q3.3",
        "Q3.4",
        "Q4.1",
        "Q4.2",
        "Q4.3",
    ]


def test_the_workload_asks_what_each_query_needs(ssb_workspace: Workspace) -> None:
    work = workload(ssb_workspace.model.lattice("lineorder"))
    assert (work.statements, work.unmapped, work.ignored) == (13, 0, 0)
    # Q2.1 filters on the category and groups by the brand: a tile needs both.
    asked = {(q.dimensions, q.filters) for q in work.queries}
    assert (frozenset({"d_year", "p_brand1"}), frozenset({"p_category", "s_region"})) in asked


def test_tiles_planned_for_the_13_queries_answer_them_all(ssb_workspace: Workspace) -> None:
    ws = ssb_workspace
    work = workload(ws.model.lattice("lineorder"))
    # A slot per kind of query: at 6,000 lines Q1.3's view is nearly the fact table, so with
    # fewer slots HRU rightly prefers others (at SF 1 it is 3 % of it).
    plan = ws.plan("lineorder", max_tiles=len(work.queries), workload=work, max_size=1)
    built = ws.materialize_plan(plan)
    assert built.ok and len(built.results) == len(plan.tiles) > 0, built.results
    tiles = {r.target for r in built.results}
    empty = []
    for name, sql in QUERIES:
        result = compare(ws, name, sql, runs=1)
        assert result.rewritten, name
        assert len(result.tiles) == 1 and set(result.tiles) <= tiles, (name, result.tiles)
        assert result.same_result, name
        empty += [name] if result.rows == 0 else []
    # Not every comparison may be empty against empty.
    assert empty == list(EMPTY_AT_SF), empty
    again = ws.materialize_plan(plan)  # nothing changed: every tile fresh, nothing rebuilt
    assert {r.status for r in again.results} == {"skipped"}
