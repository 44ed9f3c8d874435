"""Distinct counts that roll up, on real Spark and Delta (issue 20, class 8): a tile measure
{agg: count, args: x, distinct: true, approximate: true} stores HLL_SKETCH_AGG(x); an
APPROX_COUNT_DISTINCT(x) query is answered from it (HLL_SKETCH_ESTIMATE(HLL_UNION_AGG(…)), a
BIGINT) at the tile's grouping or coarser, coarser tiles are built from it and appends merge into
it; an exact COUNT(DISTINCT x) is never answered from the sketch. On this tiny data the
DataSketches HLL sketch is exact, so every answer from a sketch equals the exact distinct count;
Spark's own APPROX_COUNT_DISTINCT (HyperLogLog++, 5% relative error) may be off by a little
(37 for 36): one estimate answered by another."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from mvlattice.workspace import Workspace
from tests.integration.test_jobs_support import SALES_DDL, make_shop, sales, tile_name, write

pytestmark = pytest.mark.spark

SCHEMA = "distinct_sketches"
S = SCHEMA
TILES = """\
- dimensions: [brand, the_year]
  measures:
    - {agg: count, args: amount, distinct: true, approximate: true}
    - {agg: count, args: sale_id, distinct: true, approximate: true}
    - {agg: count}
- dimensions: [the_year]
  measures:
    - {agg: count, args: amount, distinct: true, approximate: true}
    - {agg: count}
"""
BUILT: dict = {}
STAR = (
    f"from {S}.sales s join {S}.product p on s.product_id = p.product_id "
    f"join {S}.time t on s.time_id = t.time_id"
)


@pytest.fixture(scope="module")
def ws(spark, warehouse: Path) -> Workspace:
    model = make_shop(spark, warehouse, SCHEMA, TILES)
    workspace = Workspace(model, warehouse=str(warehouse))
    result = workspace.materialize()
    assert not result.failed, [r.error for r in result.failed]
    BUILT.update({r.target: r for r in result.results})
    return workspace


def exact(ws: Workspace, sql: str) -> Counter:
    return Counter(ws.query(sql, rewrite=False).rows)


def close(mine: Counter, theirs: Counter) -> bool:
    """Same groups; each approximate count within 10% of the other."""
    a, b = sorted(mine.elements(), key=repr), sorted(theirs.elements(), key=repr)
    return len(a) == len(b) and all(
        abs(x - y) <= 0.1 * max(abs(x), abs(y), 1) if isinstance(x, int) else x == y
        for r, q in zip(a, b, strict=True)
        for x, y in zip(r, q, strict=True)
    )


def answered_from(ws: Workspace, sql: str, tile: str) -> Counter:
    result = ws.query(sql, engine="spark")
    assert result.rewrite.rewritten, result.rewrite.explain
    assert result.rewrite.materializations == (tile,), result.rewrite.explain
    return Counter(result.rows)


def test_the_year_tile_is_rolled_up_from_the_sketches(ws) -> None:
    fine, year = tile_name(ws, ("brand", "the_year")), tile_name(ws, ("the_year",))
    assert (BUILT[year].path, BUILT[year].built_from) == ("rollup", fine)


def test_approximate_distinct_counts_roll_up_from_the_sketch(ws, spark) -> None:
    fine = tile_name(ws, ("brand", "the_year"))
    year = tile_name(ws, ("the_year",))
    cases = [
        (
            f"select p.brand, t.the_year, approx_count_distinct(s.amount) {STAR} "
            "group by p.brand, t.the_year",
            fine,
            f"select p.brand, t.the_year, count(distinct s.amount) {STAR} "
            "group by p.brand, t.the_year",
        ),
        (
            f"select p.brand, approx_count_distinct(s.sale_id), count(*) {STAR} group by p.brand",
            fine,
            f"select p.brand, count(distinct s.sale_id), count(*) {STAR} group by p.brand",
        ),
        (
            f"select approx_count_distinct(s.amount) {STAR}",
            year,
            f"select count(distinct s.amount) {STAR}",
        ),
        (
            f"select approx_count_distinct(s.sale_id) {STAR} where p.brand = 'b1'",
            fine,
            f"select count(distinct s.sale_id) {STAR} where p.brand = 'b1'",
        ),
        (
            f"select t.the_year, approx_count_distinct(s.amount) {STAR} group by t.the_year",
            year,
            f"select t.the_year, count(distinct s.amount) {STAR} group by t.the_year",
        ),
    ]
    for approx, tile, count in cases:
        answered = answered_from(ws, approx, tile)
        assert answered == exact(ws, count), approx
        assert close(answered, exact(ws, approx)), approx
        rewritten = ws.rewrite(approx).sql
        assert "HLL_UNION_AGG" in rewritten or "HLL_SKETCH_ESTIMATE" in rewritten, rewritten
        types = [f.dataType.simpleString() for f in spark.sql(rewritten).schema.fields]
        original = [f.dataType.simpleString() for f in spark.sql(approx).schema.fields]
        assert types == original, (approx, rewritten)


def test_no_rows_give_zero_like_approx_count_distinct(ws) -> None:
    sql = f"select approx_count_distinct(s.amount) {STAR} where t.the_year = 1900"
    assert answered_from(ws, sql, tile_name(ws, ("the_year",))) == Counter([(0,)])
    assert exact(ws, sql) == Counter([(0,)])


def test_an_exact_distinct_count_is_never_answered_from_a_sketch(ws) -> None:
    for sql in (
        f"select p.brand, count(distinct s.amount) {STAR} group by p.brand",
        f"select p.brand, t.the_year, count(distinct s.sale_id) {STAR} "
        "group by p.brand, t.the_year",
        f"select count(distinct s.amount) {STAR}",
    ):
        result = ws.rewrite(sql)
        assert not result.rewritten, result.sql


def test_an_exact_distinct_count_of_a_tile_dimension_rolls_up(ws) -> None:
    sql = f"select t.the_year, count(distinct p.brand) {STAR} group by t.the_year"
    assert answered_from(ws, sql, tile_name(ws, ("brand", "the_year"))) == exact(ws, sql)


def test_appends_merge_into_the_sketches(ws, spark, warehouse: Path) -> None:
    base = warehouse / "jobs" / SCHEMA
    write(spark, base / "sales", sales(1000, 15), SALES_DDL, mode="append")
    result = ws.refresh()
    assert result.ok
    done = {r.target: r.path for r in result.results}
    assert done[tile_name(ws, ("brand", "the_year"))] == "incremental"
    assert done[tile_name(ws, ("the_year",))] == "incremental"
    sql = f"select p.brand, approx_count_distinct(s.sale_id) {STAR} group by p.brand"
    count = f"select p.brand, count(distinct s.sale_id) {STAR} group by p.brand"
    assert answered_from(ws, sql, tile_name(ws, ("brand", "the_year"))) == exact(ws, count)
    sql = f"select t.the_year, approx_count_distinct(s.amount) {STAR} group by t.the_year"
    assert answered_from(ws, sql, tile_name(ws, ("the_year",))) == exact(ws, sql)
