"""The SSB generator: specification row counts and domains; the model and the 13 queries run."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.datasets import ssb
from mvlattice.datasets.ssb_queries import QUERIES
from mvlattice.workspace import Workspace
from tests.conftest import REPO

pytestmark = pytest.mark.spark

SF = 0.001


@pytest.fixture(scope="module")
def ssb_workspace(spark, warehouse: Path, tmp_path_factory) -> Workspace:  # noqa: ANN001
    ssb.generate(spark, str(warehouse), SF, progress=lambda _line: None)
    model = tmp_path_factory.mktemp("ssb") / "ssb.yaml"
    text = (REPO / "models" / "ssb.yaml").read_text()
    model.write_text(text.replace("location: ssb_sf1", f"location: {ssb.folder(SF)}"))
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
