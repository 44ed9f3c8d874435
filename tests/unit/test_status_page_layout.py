"""The lattice pictures keep their labels apart however long the names (issue 36: labels of
FoodMart's lattice overlapped). Widths are the layout's own estimate (`text_width`); the browser
test measures the drawn text in tests/integration/test_status_page.py."""

from __future__ import annotations

from xml.etree import ElementTree

from mvlattice.http.ui.svg import (
    STAR_RADIUS,
    StarTable,
    box_size,
    overlapping,
    spread_star,
    star_layout,
    star_svg,
    text_width,
    tile_svg,
)
from mvlattice.plan.render import GraphNode, TileGraph

NS = "{http://www.w3.org/2000/svg}"
LONG = "product_class__product_family_product_department_product_category"


def wide_star(arms: int) -> tuple[StarTable, ...]:
    fact = StarTable("f", "foodmart.sales_fact_1998_with_a_long_name", None, ("unit_sales",))
    dims = tuple(
        StarTable(f"d{i}", f"foodmart.dimension_table_{i}_{LONG}", "f", (f"{LONG}_{i}",))
        for i in range(arms)
    )
    snow = StarTable("s", f"foodmart.snowflaked_{LONG}", "d0", ("x",))
    return (fact, *dims, snow)


def test_a_star_of_wide_tables_spreads_until_no_boxes_overlap() -> None:
    tables = wide_star(6)
    boxes = {t.alias: box_size(t) for t in tables}
    assert overlapping(star_layout(tables), boxes)  # the fixed distance crowded them
    assert overlapping(spread_star(tables, boxes), boxes) == []
    narrow = (StarTable("f", "f", None), StarTable("d", "d", "f"))
    small = {t.alias: box_size(t) for t in narrow}
    assert spread_star(narrow, small) == star_layout(narrow, STAR_RADIUS)  # no needless growth
    ElementTree.fromstring(star_svg(tables))  # still one well-formed picture


def labels(svg: str) -> list[tuple[float, float, float]]:
    """(left, right, baseline) of each centred label, by the layout's width estimate."""
    out = []
    for text in ElementTree.fromstring(svg).iter(f"{NS}text"):
        x, half = float(text.get("x", 0)), text_width(text.text or "") / 2
        out.append((x - half, x + half, float(text.get("y", 0))))
    return out


def test_the_labels_of_a_row_of_views_with_long_names_and_big_numbers_do_not_overlap() -> None:
    dims = ("the_year", "quarter", "month_of_year", "product_family", "store_country")
    nodes = [GraphNode("star", 0, dims, 86_837_123, 0)]
    nodes += [
        GraphNode(f"t{i}", i, (dims[i - 1], dims[i % 5]), 1_234_567, 98_765_432)
        for i in range(1, 6)
    ]
    edges = tuple(("star", f"t{i}") for i in range(1, 6))
    placed = labels(tile_svg(TileGraph(f"foodmart_{LONG}", tuple(nodes), edges)))
    for i, (left, right, y) in enumerate(placed):
        for other_left, other_right, other_y in placed[i + 1 :]:
            if y == other_y:
                assert right <= other_left or other_right <= left, (left, right, other_left)
