"""GROUPING SETS / ROLLUP / CUBE expanded into one GROUP BY per set (mvlattice/sql/grouping_sets),
without Spark. The expected sets, bits and row counts are Spark 4's, observed on Spark:
`GROUPING SETS ((c), (b, c))` gives the set (c) GROUPING_ID 1 (the grouping columns are c, b);
`CUBE(b, c)` lists (b, c), (b), (c), (); `GROUPING SETS ((b), (b))` returns each row twice."""

from __future__ import annotations

import pytest
from sqlglot import exp, parse_one

from mvlattice.errors import UnsupportedSqlError
from mvlattice.sql import grouping_sets

TYPES = {"a": "int", "b": "bigint", "c": "decimal(18,2)", "d": "string"}


def _select(sql: str) -> exp.Select:
    tree = parse_one(sql, read="spark")
    assert isinstance(tree, exp.Select)
    return tree


def _sets(group_by: str) -> tuple[list[str], list[list[str]]]:
    found = grouping_sets.grouping_sets(
        _select(f"SELECT 1 FROM t GROUP BY {group_by}").args["group"]
    )
    keys = [k.sql() for k in found.keys]
    return keys, [[keys[i] for i in s] for s in found.sets]


def _column_type(column: exp.Column) -> str | None:
    return TYPES.get(column.name) if column.table == "t" else None


def _branches(sql: str) -> list[str]:
    return [b.sql("spark") for b in grouping_sets.expand(_select(sql), _column_type)]


@pytest.mark.parametrize(
    ("group_by", "keys", "sets"),
    [
        ("ROLLUP(a, b)", ["a", "b"], [["a", "b"], ["a"], []]),
        ("a, b WITH ROLLUP", ["a", "b"], [["a", "b"], ["a"], []]),
        ("CUBE(a, b)", ["a", "b"], [["a", "b"], ["a"], ["b"], []]),
        ("GROUPING SETS ((c), (b, c))", ["c", "b"], [["c"], ["b", "c"]]),
        ("GROUPING SETS (a, (a, b), ())", ["a", "b"], [["a"], ["a", "b"], []]),
        ("GROUPING SETS ((a), (a))", ["a"], [["a"], ["a"]]),
        ("a, ROLLUP(b)", ["a", "b"], [["a", "b"], ["a"]]),
        ("ROLLUP(a), CUBE(b)", ["a", "b"], [["a", "b"], ["a"], ["b"], []]),
        ("ROLLUP((a, b), c)", ["a", "b", "c"], [["a", "b", "c"], ["a", "b"], []]),
        ("ROLLUP(a, a)", ["a"], [["a"], ["a"], []]),
        ("GROUPING SETS (())", [], [[]]),
    ],
)
def test_the_sets_are_sparks(group_by: str, keys: list[str], sets: list[list[str]]) -> None:
    assert _sets(group_by) == (keys, sets)


@pytest.mark.parametrize(
    "group_by",
    [
        "CUBE(a, b, c, d, e, f, g)",  # 128 sets
        "CUBE(a, b, c, d), CUBE(e, f, g)",  # 16 x 8
        "ROLLUP(a, b, c, d, e, f, g, h), CUBE(a, b, c)",  # 9 x 8
        "GROUPING SETS (ROLLUP(a), b)",
        "ROLLUP(1, 2)",  # positions in the SELECT list
        "1, ROLLUP(b)",
    ],
)
def test_beyond_the_cap_or_nested_is_refused(group_by: str) -> None:
    with pytest.raises(UnsupportedSqlError):
        _sets(group_by)


def test_a_cube_of_six_is_within_the_cap() -> None:
    assert len(_sets("CUBE(a, b, c, d, e, f)")[1]) == 64 == grouping_sets.MAX_SETS


def test_each_branch_nulls_rolled_up_columns_and_types_the_grouping_functions() -> None:
    sql = (
        "SELECT t.a AS a, t.b AS b, GROUPING(t.a) AS ga, GROUPING_ID() AS g, SUM(t.c) AS s "
        "FROM t GROUP BY ROLLUP(t.a, t.b)"
    )
    assert _branches(sql) == [
        "SELECT t.a AS a, t.b AS b, CAST(0 AS TINYINT) AS ga, CAST(0 AS BIGINT) AS g, "
        "SUM(t.c) AS s FROM t GROUP BY t.a, t.b",
        "SELECT t.a AS a, CAST(NULL AS BIGINT) AS b, CAST(0 AS TINYINT) AS ga, "
        "CAST(1 AS BIGINT) AS g, SUM(t.c) AS s FROM t GROUP BY t.a",
        "SELECT CAST(NULL AS INT) AS a, CAST(NULL AS BIGINT) AS b, CAST(1 AS TINYINT) AS ga, "
        "CAST(3 AS BIGINT) AS g, SUM(t.c) AS s FROM t HAVING COUNT(*) > 0",
    ]


def test_grouping_id_follows_the_order_of_first_appearance() -> None:
    sql = (
        "SELECT t.b AS b, t.c AS c, GROUPING_ID() AS g FROM t "
        "GROUP BY GROUPING SETS ((t.c), (t.b, t.c))"
    )
    branches = grouping_sets.expand(_select(sql), _column_type)
    assert [b.expressions[2].sql("spark") for b in branches] == [
        "CAST(1 AS BIGINT) AS g",
        "CAST(0 AS BIGINT) AS g",
    ]


def test_aggregate_arguments_keep_the_real_values() -> None:
    sql = "SELECT t.a AS a, MAX(t.a) AS top, t.a + 1 AS a1 FROM t GROUP BY ROLLUP(t.a)"
    assert _branches(sql)[1] == (
        "SELECT CAST(NULL AS INT) AS a, MAX(t.a) AS top, CAST(NULL AS INT) + 1 AS a1 "
        "FROM t HAVING COUNT(*) > 0"
    )


def test_having_is_kept_per_set_and_the_empty_set_alone_stays_a_global_aggregate() -> None:
    having = "SELECT t.a AS a FROM t GROUP BY ROLLUP(t.a) HAVING GROUPING(t.a) = 1"
    assert _branches(having)[1].endswith("HAVING CAST(1 AS TINYINT) = 1 AND COUNT(*) > 0")
    alone = "SELECT COUNT(*) AS n FROM t GROUP BY GROUPING SETS (())"
    assert _branches(alone) == ["SELECT COUNT(*) AS n FROM t"]
    twice = "SELECT COUNT(*) AS n FROM t GROUP BY GROUPING SETS ((), ())"
    assert _branches(twice) == ["SELECT COUNT(*) AS n FROM t HAVING COUNT(*) > 0"] * 2


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SELECT DISTINCT t.a AS a FROM t GROUP BY ROLLUP(t.a)", "DISTINCT"),
        ("SELECT SUM(COUNT(*)) OVER () AS w FROM t GROUP BY ROLLUP(t.a)", "window"),
        ("SELECT t.a + 1 AS x FROM t GROUP BY ROLLUP(t.a + 1)", "type"),
        ("SELECT x.a AS a FROM (SELECT 1 AS a) AS x GROUP BY ROLLUP(x.a)", "type"),
        ("SELECT t.a AS a FROM t GROUP BY ROLLUP(t.a) ORDER BY SUM(t.c)", "ORDER BY"),
        ("SELECT GROUPING(t.b) AS g FROM t GROUP BY ROLLUP(t.a)", "not a grouping"),
        ("SELECT GROUPING_ID(t.b, t.a) AS g FROM t GROUP BY CUBE(t.a, t.b)", "grouping columns"),
    ],
)
def test_what_cannot_be_reproduced_exactly_is_refused(sql: str, message: str) -> None:
    with pytest.raises(UnsupportedSqlError, match=message):
        _branches(sql)


def test_a_rolled_up_expression_in_every_set_needs_no_type() -> None:
    sql = "SELECT t.a + 1 AS x, t.b AS b FROM t GROUP BY t.a + 1, ROLLUP(t.b)"
    assert len(_branches(sql)) == 2


def test_the_union_carries_order_and_limit() -> None:
    select = _select("SELECT t.a AS a FROM t GROUP BY ROLLUP(t.a) ORDER BY a DESC LIMIT 3")
    union = grouping_sets.union_all(grouping_sets.expand(select, _column_type), select)
    assert union.sql("spark") == (
        "SELECT t.a AS a FROM t GROUP BY t.a UNION ALL SELECT CAST(NULL AS INT) AS a FROM t "
        "HAVING COUNT(*) > 0 ORDER BY a DESC LIMIT 3"
    )


def test_the_tile_engine_serves_typed_nulls_but_not_timestamp_ones() -> None:
    from mvlattice.sql.refusal import Refusal
    from mvlattice.sql.transpile import Source, Transpiled, to_duckdb

    sources = {"s.tile": Source("tile_0", {"y": "INT", "c": "BIGINT", "d": "DECIMAL(18,2)"})}
    sql = (
        "SELECT mv.y AS y, CAST(0 AS TINYINT) AS g, mv.c AS c FROM s.tile AS mv UNION ALL "
        "SELECT CAST(NULL AS INT) AS y, CAST(1 AS TINYINT) AS g, SUM(mv.c) AS c FROM s.tile AS mv"
    )
    assert isinstance(to_duckdb(sql, sources), Transpiled)
    decimal = "SELECT CAST(NULL AS DECIMAL(18,2)) AS d FROM s.tile AS mv"
    assert isinstance(to_duckdb(decimal, sources), Transpiled)
    stamp = to_duckdb("SELECT CAST(NULL AS TIMESTAMP) AS t FROM s.tile AS mv", sources)
    assert isinstance(stamp, Refusal) and "NULL cast to TIMESTAMP" in stamp.reason
