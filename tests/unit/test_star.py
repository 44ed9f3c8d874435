"""Building a lattice's star from SQL: edges, labels, derived columns, and every rejection."""

from __future__ import annotations

import pytest

from mvlattice.document import Problems
from mvlattice.lattice.star import Star, build_star

TABLES = {
    ("w", "sales"): (
        "sale_id",
        "product_id",
        "order_date_id",
        "ship_date_id",
        "store_id",
        "region_id",
        "units",
        "price",
    ),
    ("w", "product"): ("product_id", "product_class_id", "brand"),
    ("w", "product_class"): ("product_class_id", "family"),
    ("w", "dates"): ("date_id", "the_year", "the_month"),
    ("w", "store"): ("store_id", "region_id", "store_name"),
    ("w", "region"): ("store_id", "region_id", "region_name"),
}


def columns_of(schema: str, table: str) -> tuple[str, ...] | None:
    return TABLES.get((schema.lower(), table.lower()))


def build(sql: str) -> tuple[Star | None, list[str]]:
    problems = Problems("m.yaml")
    star = build_star(sql, "w", columns_of, problems, "lattices[0].sql")
    return star, [p.message for p in problems.items]


def ok(sql: str) -> Star:
    star, problems = build(sql)
    assert problems == [] and star is not None
    return star


def rejected(sql: str) -> str:
    star, problems = build(sql)
    assert star is None and len(problems) == 1, problems
    return problems[0]


def test_snowflake_arm_edges_follow_from_order() -> None:
    star = ok(
        'select 1 from "w"."sales" as s join w.product p using (product_id) '
        "join w.product_class pc on p.product_class_id = pc.product_class_id"
    )
    assert [(n.alias, n.parent) for n in star.nodes] == [("s", None), ("p", "s"), ("pc", "p")]
    assert [(e.source, e.target, e.source_columns, e.target_columns) for e in star.edges] == [
        ("s", "p", ("product_id",), ("product_id",)),
        ("p", "pc", ("product_class_id",), ("product_class_id",)),
    ]


def test_one_table_under_two_aliases() -> None:
    star = ok(
        "select 1 from w.sales s join w.dates od on s.order_date_id = od.date_id "
        "join w.dates sd on s.ship_date_id = sd.date_id"
    )
    assert [(n.alias, n.table) for n in star.nodes] == [
        ("s", "sales"),
        ("od", "dates"),
        ("sd", "dates"),
    ]
    labels = [c.label for c in star.columns]
    assert "od.the_year" in labels and "sd.the_year" in labels and "the_year" not in labels
    assert "units" in labels  # unique in the lattice: plain name


def test_labels_are_alias_qualified_only_when_ambiguous() -> None:
    star = ok("select 1 from w.sales s join w.product p using (product_id)")
    labels = [c.label for c in star.columns]
    assert "s.product_id" in labels and "p.product_id" in labels and "brand" in labels


def test_derived_columns_and_relabelled_columns() -> None:
    star = ok(
        "select s.units * s.price as revenue, p.brand as brand_label "
        "from w.sales s join w.product p using (product_id)"
    )
    revenue = next(c for c in star.columns if c.label == "revenue")
    assert revenue.derived and revenue.expression == "`s`.`units` * `s`.`price`"
    assert any(c.label == "brand_label" and c.column == "brand" for c in star.columns)


def test_composite_keys() -> None:
    star = ok(
        "select 1 from w.sales s join w.region r "
        "on s.store_id = r.store_id and r.region_id = s.region_id"
    )
    (edge,) = star.edges
    assert edge.source_columns == ("store_id", "region_id")
    assert edge.target_columns == ("store_id", "region_id")


def test_non_equi_join_is_rejected() -> None:
    assert "not an equality of two columns" in rejected(
        "select 1 from w.sales s join w.product p on s.product_id > p.product_id"
    )


@pytest.mark.parametrize("join", ["left join", "full outer join", "right join"])
def test_outer_joins_are_rejected(join: str) -> None:
    assert "JOIN is not allowed in a lattice" in rejected(
        f"select 1 from w.sales s {join} w.product p on s.product_id = p.product_id"
    )


def test_cross_join_is_rejected() -> None:
    assert "CROSS JOIN is not allowed" in rejected("select 1 from w.sales s cross join w.product p")


def test_join_referencing_no_earlier_table() -> None:
    assert "references no earlier table" in rejected(
        "select 1 from w.sales s join w.product_class pc using (family)"
    )


def test_join_condition_must_link_to_an_earlier_table() -> None:
    message = rejected("select 1 from w.sales s join w.product p on p.product_id = p.product_id")
    assert "must compare a column of 'p' with a column of an earlier table" in message


def test_unknown_table_and_column() -> None:
    assert (
        rejected("select 1 from w.sales s join w.prodct p using (product_id)")
        == "unknown table 'w.prodct'"
    )
    assert "(did you mean 'product_id'?)" in rejected(
        "select 1 from w.sales s join w.product p on s.prodct_id = p.product_id"
    )


def test_duplicate_alias() -> None:
    assert (
        rejected("select 1 from w.sales s join w.product s using (product_id)")
        == "duplicate table alias 's' in lattice SQL"
    )


def test_ambiguous_using() -> None:
    assert "ambiguous" in rejected(
        "select 1 from w.sales s join w.store st using (store_id) join w.region r using (store_id)"
    )


def test_derived_column_needs_a_label() -> None:
    assert "needs a label" in rejected("select s.units * 2 from w.sales s")


def test_where_clause_is_rejected() -> None:
    assert "must not have a WHERE clause" in rejected("select 1 from w.sales s where s.units > 1")


def test_star_sql_joins_only_what_is_needed() -> None:
    from mvlattice.lattice.lattice import Lattice

    star = ok(
        'select 1 from "w"."sales" as s join w.product p using (product_id) '
        "join w.product_class pc on p.product_class_id = pc.product_class_id "
        "join w.dates d on s.order_date_id = d.date_id"
    )
    lattice = Lattice("l", "w", "", star.nodes, star.edges, star.columns)
    sql = lattice.from_sql(("pc",))
    assert "`product_class` AS `pc`" in sql and "`product` AS `p`" in sql
    assert "dates" not in sql
