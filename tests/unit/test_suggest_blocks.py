"""Query blocks: tables, joins (ON, USING, comma joins), grouping, filters, aggregates, and
the reasons a block cannot make a lattice."""

from __future__ import annotations

from mvlattice.sql.parse import parse_statements
from mvlattice.suggest.catalog_blocks import (
    EXPRESSION_JOIN,
    NO_TABLES,
    NON_EQUI,
    UNKNOWN_TABLE,
    AggCall,
    BlockTable,
    ColumnRef,
    JoinPair,
    QueryBlock,
    learned_columns,
    query_blocks,
)
from mvlattice.suggest.table_catalog import (
    Catalog,
    TableInfo,
    open_catalog,
    with_learned,
)

CATALOG = Catalog(
    "s",
    {
        ("s", "f"): TableInfo("s", "f", ("a_id", "b_id", "x", "y"), declared=True),
        ("s", "a"): TableInfo("s", "a", ("a_id", "name", "c_id"), (("a_id",),), declared=True),
        ("s", "b"): TableInfo("s", "b", ("b_id", "kind"), (("b_id",),), declared=True),
    },
    closed=True,
)


def blocks(sql: str, catalog: Catalog = CATALOG, dialect: str = "spark") -> tuple[QueryBlock, ...]:
    (tree,) = parse_statements(sql, dialect)
    return query_blocks(tree, catalog)


def only(sql: str, catalog: Catalog = CATALOG) -> QueryBlock:
    (block,) = blocks(sql, catalog)
    return block


def test_on_join_grouping_filters_and_aggregates() -> None:
    block = only(
        "select a.name, sum(f.x), count(*), count(distinct f.y) from f join a on f.a_id = a.a_id "
        "where f.y > 3 and a.name like 'z%' group by a.name having max(f.x) > 1"
    )
    assert block.tables == (BlockTable("f", "s", "f"), BlockTable("a", "s", "a"))
    assert block.joins == (JoinPair("f", "a", ("a_id",), ("a_id",)),)
    assert block.group == (ColumnRef("a", "name"),)
    assert block.filters == (ColumnRef("f", "y"), ColumnRef("a", "name"))
    assert [(c.agg, c.args, c.distinct) for c in block.aggregates] == [
        ("sum", (ColumnRef("f", "x"),), False),
        ("count", (), False),
        ("count", (ColumnRef("f", "y"),), True),
        ("max", (ColumnRef("f", "x"),), False),
    ]
    assert block.skip is None


def test_comma_join_and_using_and_unqualified_columns_resolved_by_the_catalog() -> None:
    comma = only("select name, sum(x) from f, a where f.a_id = a.a_id group by name")
    using = only("select name, sum(x) from f join a using (a_id) group by name")
    for block in (comma, using):
        assert block.joins == (JoinPair("f", "a", ("a_id",), ("a_id",)),)
        assert block.group == (ColumnRef("a", "name"),)
        assert block.aggregates[0].args == (ColumnRef("f", "x"),)


def test_using_picks_the_earlier_table_that_has_the_column() -> None:
    block = only("select kind from f join a using (a_id) join b using (b_id)")
    assert block.joins == (
        JoinPair("f", "a", ("a_id",), ("a_id",)),
        JoinPair("f", "b", ("b_id",), ("b_id",)),
    )


def test_composite_join_is_one_pair() -> None:
    block = only("select 1 from f join a on f.a_id = a.a_id and f.b_id = a.c_id")
    assert block.joins == (JoinPair("f", "a", ("a_id", "b_id"), ("a_id", "c_id")),)


def test_group_by_ordinal_alias_and_distinct() -> None:
    assert only("select name as n, count(*) from a group by 1").group == (ColumnRef("a", "name"),)
    assert only("select name as n, count(*) from a group by n").group == (ColumnRef("a", "name"),)
    assert only("select distinct name, c_id from a").group == (
        ColumnRef("a", "name"),
        ColumnRef("a", "c_id"),
    )


def test_subqueries_and_ctes_are_blocks_of_their_own() -> None:
    found = blocks(
        "with w as (select a_id, sum(x) as t from f group by a_id) "
        "select a.name, w.t from w join a on w.a_id = a.a_id "
        "where a.a_id in (select a_id from f where y = 1)"
    )
    assert [tuple(t.table for t in b.tables) for b in found] == [("a",), ("f",), ("f",)]
    outer = found[0]
    assert outer.joins == ()  # w is not a table of the block
    assert outer.filters == (ColumnRef("a", "a_id"),)


def test_non_equi_and_expression_joins_make_the_block_unusable() -> None:
    assert only("select 1 from f, a where f.a_id < a.a_id").skip.reason == NON_EQUI
    assert only("select 1 from f, a where f.x = 1 or a.name = 'q'").skip.reason == NON_EQUI
    expression = only("select 1 from f join a on f.a_id + 1 = a.a_id").skip
    assert (expression.reason, expression.detail) == (EXPRESSION_JOIN, "f.a_id + 1 = a.a_id")


def test_unknown_tables_and_no_tables() -> None:
    assert only("select * from s.zzz").skip.reason == UNKNOWN_TABLE
    assert only("select 1").skip.reason == NO_TABLES


def test_aggregates_over_expressions_have_no_args() -> None:
    (call,) = only("select sum(x * 2) from f").aggregates
    assert call == AggCall("sum", None, False, "SUM(x * 2)")


def test_window_aggregates_are_not_measures() -> None:
    assert only("select sum(x) over (partition by y) from f").aggregates == ()


def test_open_catalog_learns_columns_from_qualified_references() -> None:
    (tree,) = parse_statements(
        'select "a"."name", count(*) from "f" as "x", "a" as "a" '
        'where "x"."a_id" = "a"."a_id" and "y" = 1 group by "a"."name"',
        "",
    )
    catalog = open_catalog("s")
    seen = list(learned_columns(tree, catalog))
    assert ("s", "a", "name") in seen and ("s", "f", "a_id") in seen
    assert ("s", "f", "y") not in seen  # unqualified in a two-table block: unknown owner
    learned = with_learned(catalog, seen)
    assert learned.table("s", "f").columns == ("a_id",)
    assert learned.table(None, "A").columns == ("name", "a_id")


def test_closed_catalog_keeps_declared_columns_and_finds_tables_in_other_schemas() -> None:
    catalog = Catalog(
        "main", {("other", "t"): TableInfo("other", "t", ("k",), declared=True)}, closed=True
    )
    assert catalog.table(None, "T").key == ("other", "t")
    assert catalog.table("main", "t") is None
    assert with_learned(catalog, [("other", "t", "zzz")]).table("other", "t").columns == ("k",)
