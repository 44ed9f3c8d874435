"""The approximate distinct-count measure (issue 20, class 8) without Spark: the model key
`approximate`, the stored HLL sketch column and how tiles are built, rolled up and merged
with it. Rewrite decisions are golden cases (tests/golden/rewrite/sketches.txt)."""

from __future__ import annotations

from pathlib import Path

from mvlattice.jobs.tilesql import can_build_from, merge_tile_sql, mergeable, rollup_tile_sql
from mvlattice.lattice.lattice import Measure, TileSpec
from mvlattice.lattice.measures import base_aggregate_sql, rollup_sql, stored_columns
from mvlattice.model.loader import load_model
from tests.unit.test_model_loader import LATTICE, SCHEMA, problems_of, write

APPROX = Measure("count", ("sale_id",), distinct=True, approximate=True)
EXACT = Measure("count", ("sale_id",), distinct=True)


def with_measures(measures: str) -> str:
    return (SCHEMA + LATTICE).replace(
        "measures: [{agg: sum, args: [units]}, {agg: count}]", f"measures: {measures}"
    )


def test_the_approximate_measure_loads(tmp_path: Path) -> None:
    text = with_measures("[{agg: count, args: sale_id, distinct: true, approximate: true}]")
    model = load_model(write(tmp_path, text), warehouse=str(tmp_path / "wh"))
    (tile,) = model.lattice("sales").tiles
    assert tile.measures == (APPROX,)
    assert str(APPROX) == "approx_count_distinct(sale_id)" and str(EXACT) != str(APPROX)
    assert APPROX.name == "approx_count_distinct_sale_id"


def test_approximate_is_only_for_a_distinct_count_of_one_column(tmp_path: Path) -> None:
    for measures in (
        "[{agg: sum, args: units, approximate: true}]",
        "[{agg: count, args: sale_id, approximate: true}]",
        "[{agg: count, approximate: true, distinct: true}]",
        "[{agg: count, args: [sale_id, units], distinct: true, approximate: true}]",
    ):
        found = problems_of(tmp_path, with_measures(measures))
        assert found == [
            "lattices[0].tiles[0].measures[0].approximate: approximate: true is only for a "
            "distinct count of one column ({agg: count, args: x, distinct: true, "
            "approximate: true})"
        ], measures
    found = problems_of(
        tmp_path, with_measures("[{agg: count, args: sale_id, distinct: true, approximate: 1}]")
    )
    assert found == [
        "lattices[0].tiles[0].measures[0].approximate: must be true or false, got a number (1)"
    ]


def test_the_sketch_is_a_stored_column_that_rolls_up() -> None:
    (sketch,) = stored_columns(APPROX)
    assert sketch.name == "hll_sketch_sale_id" and sketch.rollup == "hll_union_agg"
    assert base_aggregate_sql(sketch, {"sale_id": "s.sale_id"}) == (
        "hll_sketch_agg(CASE WHEN s.sale_id IS NOT NULL THEN xxhash64(s.sale_id) END)"
    )
    assert rollup_sql(sketch) == "hll_union_agg(`hll_sketch_sale_id`)"
    (exact,) = stored_columns(EXACT)
    assert exact.name == "count_distinct_sale_id" and exact.rollup is None


def test_coarser_tiles_build_from_the_sketch_and_appends_merge() -> None:
    fine = TileSpec("sales", ("brand", "the_year"), (APPROX, Measure("count")))
    coarse = TileSpec("sales", ("the_year",), (APPROX,))
    exact = TileSpec("sales", ("the_year",), (EXACT,))
    assert can_build_from(coarse, fine)
    assert not can_build_from(exact, fine)  # never an exact count from a sketch
    assert not can_build_from(coarse, TileSpec("sales", ("brand", "the_year"), (EXACT,)))
    assert "hll_union_agg(`hll_sketch_sale_id`) AS `hll_sketch_sale_id`" in rollup_tile_sql(
        coarse, fine, "t"
    )
    assert mergeable(fine) and not mergeable(exact)
    merged = merge_tile_sql(fine, "tile", "SELECT …")
    assert "hll_union_agg(`hll_sketch_sale_id`) AS `hll_sketch_sale_id`" in merged


def test_the_record_keeps_the_measure() -> None:
    from mvlattice.jobs import record

    assert record._measure(record._measure_json(APPROX)) == APPROX
    assert record._measure(record._measure_json(EXACT)) == EXACT
    assert "approximate" not in record._measure_json(EXACT)


def test_the_sketch_hashes_its_input_so_the_view_reads_as_a_sketch_of_the_column() -> None:
    """One spelling for every column type (hll_sketch_agg alone takes only INT, BIGINT,
    STRING, BINARY); the rewriter reads the tile's definition as a sketch of the column."""
    from sqlglot import exp, parse_one

    from mvlattice.sql.aggregates import sketch_input_sql, sketched_value

    for value in ("s.sold_on", "year(`t`.`the_date`)", "CAST(s.amount AS DECIMAL(10, 2))"):
        node = parse_one(f"hll_sketch_agg({sketch_input_sql(value)})", read="spark")
        assert isinstance(node, exp.Anonymous)
        assert sketched_value(node.expressions[0]) == parse_one(value, read="spark")
    for other in (
        "CASE WHEN s.a IS NOT NULL THEN xxhash64(s.b) END",  # hashes another column
        "CASE WHEN s.a IS NULL THEN xxhash64(s.a) END",
        "CASE WHEN s.a IS NOT NULL THEN xxhash64(s.a) ELSE 0 END",
        "CASE WHEN s.a IS NOT NULL THEN hash(s.a) END",
        "s.a",
    ):
        node = parse_one(other, read="spark")
        assert sketched_value(node) is node, other
