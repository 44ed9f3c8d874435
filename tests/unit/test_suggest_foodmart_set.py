"""The whole FoodMart query set (Maven Central net.hydromatic:foodmart-queries, 6,761 queries)
through the suggester, as Calcite's LatticeSuggesterTest.testFoodMartAll does.

Calcite gets 388 lattices without evolve and 27 with, after excluding queries on Mondrian's
test tables and five queries its validator rejects. Its lattice key is the join graph *and*
the measures; ours is the join graph alone. With Calcite's exclusions our numbers are 386
(graph and measures), 122 (graph) and 28 (root tables), measured once; here the
whole set is read, without a model, and the numbers are pinned.
"""

from __future__ import annotations

import pytest

from mvlattice.datasets.foodmart_queries import ensure_queries
from mvlattice.suggest.logs import read_log
from mvlattice.suggest.suggester import Suggestion, suggest


@pytest.fixture(scope="module")
def result() -> Suggestion:
    return suggest(read_log(ensure_queries()), default_schema="foodmart")


def test_queries_read_parsed_used_and_skipped(result: Suggestion) -> None:
    s = result.summary
    assert (s.read, s.parsed, s.used) == (6761, 6761, 6737)
    assert (s.blocks, s.blocks_used) == (6874, 6753)
    assert {k.reason: k.count for k in s.skipped} == {
        "no tables": 16,
        "non-equi join": 4,
        "not a star (a table joined from two others)": 4,
    }


def test_lattices_with_and_without_merging(result: Suggestion) -> None:
    s = result.summary
    assert (s.lattices, s.lattices_with_merging, s.lattices_without_merging) == (39, 39, 136)
    # not emitted: the nine over aggregate tables the log names no column of
    assert sum(item.lattice is None for item in result.lattices) == 9
    assert dict(s.directions) == {"naming": 46, "from order": 3}


def test_suggested_tiles_for_the_sales_lattice(result: Suggestion) -> None:
    sales = next(item for item in result.lattices if item.name == "sales_fact_1997")
    assert len(sales.suggested.queries) == 1822
    plan = sales.tiles
    assert plan is not None and len(plan.tiles) == 8
    assert plan.tiles[0].planned.dimensions == (
        "customer.gender",
        "product_class.product_family",
        "product_class.product_department",
        "time_by_day.the_year",
    )
    answered = sum(len(t.queries) for t in plan.tiles)
    assert answered == 499
    assert all(t.queries for t in plan.tiles)
    assert len(plan.unmapped) == 9


def test_the_suggested_model_validates(result: Suggestion, tmp_path) -> None:
    """The whole log's model loads: no `columns: []` (issue 36: SchemaError before); the nine
    lattices over Mondrian's aggregate tables, whose columns the log never names, left out."""
    from mvlattice.model.loader import load_model
    from mvlattice.suggest.emit import emit_model

    text = emit_model(result, None, ["queries.json"])
    assert "columns: []" not in text
    left_out = [item.name for item in result.lattices if item.lattice is None]
    assert len(left_out) == 9 and all(name.startswith("agg_") for name in left_out)
    path = tmp_path / "suggested.yaml"
    path.write_text(text, encoding="utf-8")
    model = load_model(path, warehouse=str(tmp_path))
    assert len(model.lattices) == 39 - 9 and model.default_schema == "foodmart"
