"""The differential tester's pure parts: the seeded query generator and the multiset
comparison (tests/integration/test_difftest.py runs them on Spark)."""

from __future__ import annotations

import re
from collections import Counter
from decimal import Decimal

import sqlglot

from mvlattice.proof import compare, difftest, querygen
from mvlattice.proof.shape import DATE, DIM, INT, MEASURE, NUM, STRING, TS, Col, Node, Shape

SHAPE = Shape(
    "toy",
    "toy",
    (
        Node("f", "x.fact", None),
        Node("d", "x.dim", "f", (("d_id", "id"),)),
        Node("e", "x.extra", "f", (("e_id", "id"),), in_lattice=False),
    ),
    (
        Col(
            alias="d",
            name="city",
            label="city",
            kind=DIM,
            type=STRING,
            values=("'Austin'", "'B'", "'Chicago'"),
        ),
        Col(
            alias="d",
            name="born",
            label="born",
            kind=DIM,
            type=DATE,
            values=("DATE '2020-01-01'", "DATE '2021-01-01'"),
        ),
        Col(alias="f", name="n", label="n", kind=DIM, type=INT, values=("1", "2", "3")),
        Col(
            alias="d",
            name="ts",
            label="ts",
            kind=DIM,
            type=TS,
            values=("TIMESTAMP '2024-01-03 10:11:12'", "TIMESTAMP '2025-02-03 00:00:01'"),
        ),
        Col(alias="e", name="kind", label="", kind=DIM, type=STRING, values=("'k'",)),
        Col(alias="f", name="qty", label="qty", kind=MEASURE, type=INT, values=("1", "5")),
        Col(alias="f", name="price", label="price", kind=MEASURE, type=NUM, values=("0.5", "2.25")),
    ),
    big=True,
)
SPECS = querygen.views(SHAPE, __import__("random").Random(3), tiles=3, mvs=3)
QUERIES = [querygen.query(SHAPE, SPECS, seed) for seed in range(400)]


def test_the_same_seed_gives_the_same_query() -> None:
    again = querygen.views(SHAPE, __import__("random").Random(3), tiles=3, mvs=3)
    assert again == SPECS
    assert [querygen.query(SHAPE, again, seed) for seed in range(400)] == QUERIES
    assert len(set(QUERIES)) > 300


def test_every_query_parses_as_spark_sql() -> None:
    for sql in QUERIES:
        sqlglot.parse_one(sql, read="spark")


def test_the_generator_covers_the_issue_s_constructs() -> None:
    text = "\n".join(QUERIES)
    for construct in (" IN (", " NOT IN (", " BETWEEN ", " IS NULL", " IS NOT NULL", " OR ",
                      "NOT (", " % ", " LIKE ", "COUNT(*)", "COUNT(DISTINCT ", "SUM(", "MIN(",
                      "MAX(", "AVG(", " HAVING ", " ORDER BY ", " LIMIT ", " UNION ALL ",
                      "WITH q AS", "FROM (SELECT", "JOIN x.extra AS e"):  # fmt: skip
        assert construct in text, construct
    assert any(re.search(r"COUNT\(f\.qty\)", q) for q in QUERIES)


MORE_SPECS = querygen.views(SHAPE, __import__("random").Random(5), tiles=6, mvs=8)
GENERATED = [querygen.generate(SHAPE, MORE_SPECS, seed) for seed in range(2000)]


def test_the_generator_covers_issue_20_s_constructs() -> None:
    """Each new construct is generated, tagged, and written as Spark spells it."""
    tags = {t for g in GENERATED for t in g.constructs}
    for tag in ("or", "in", "not_in", "between", "not_equal", "like_prefix", "time_grain",
                "outer_join", "grouping_sets", "approx_distinct", "unnamed_outputs",
                "lossless_cast", "nested_mv"):  # fmt: skip
        assert tag in tags, tag
    text = "\n".join(g.sql for g in GENERATED)
    for construct in ("date_trunc('", "year(", "quarter(",
                      "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "ROLLUP(", "CUBE(",
                      "GROUPING SETS (", "GROUPING(", "grouping_id()", "approx_count_distinct(",
                      " LIKE '", ") OR ("):  # fmt: skip
        assert construct in text, construct
    assert "to_date(" in text or " AS DATE)" in text
    for g in GENERATED:
        sqlglot.parse_one(g.sql, read="spark")
        assert g.constructs


def test_approximate_counts_never_decide_a_limit_and_are_located() -> None:
    located = [g for g in GENERATED if g.approx]
    assert len(located) > 20
    for g in located:
        assert " LIMIT " not in g.sql, g.sql
        assert "approx_count_distinct(" in g.sql


def test_views_have_unnamed_outputs_outer_joins_and_nested_ones() -> None:
    specs = querygen.views(SHAPE, __import__("random").Random(5), tiles=6, mvs=8)
    definitions = difftest.mv_definitions(SHAPE, specs, "x")
    text = "\n".join(definitions.values())
    assert "SUM(1)" in text and " JOIN " in text
    assert any(s.style == "nested" for s in specs)
    nested = [sql for name, sql in definitions.items() if name.startswith("dt_nested_")]
    assert nested and all(re.search(r"FROM x\.dt_mv_\d+_[0-9a-f]{8} GROUP BY", q) for q in nested)
    tiles = [querygen.tile_element(s) for s in specs if s.kind == "tile"]
    approx = [m for t in tiles for m in t["measures"] if m.get("approximate")]
    assert all(m["agg"] == "count" and m["distinct"] and len(m["args"]) == 1 for m in approx)


def test_approximate_counts_compare_within_their_error() -> None:
    base = [("a", Decimal(100)), ("b", Decimal(37))]
    assert (
        difftest.approximate_difference(base, [("b", Decimal(36)), ("a", Decimal(104))], (1,)) == ""
    )
    assert difftest.approximate_difference(base, [("a", Decimal(100)), ("b", Decimal(60))], (1,))
    assert difftest.approximate_difference(base, [("a", Decimal(100)), ("c", Decimal(37))], (1,))
    assert difftest.approximate_difference(base, base[:1], (1,))


def test_the_report_counts_per_construct() -> None:
    records = (
        difftest.Record(("or", "join"), True, True),
        difftest.Record(("or",), False, False, "PREDICATE_NOT_IMPLIED"),
    )
    finding = difftest.Finding("s", 1, difftest.MISMATCH, "q", "r", "d", ("or",))
    rows = difftest.Report(2, 1, (finding,), records=records).by_construct()
    assert rows["or"] == {
        "queries": 2, "rewritten": 1, "local": 1, "mismatches": 1, "local_mismatches": 0,
        "errors": 0, "not_rewritten": {"PREDICATE_NOT_IMPLIED": 1}, "share": 0.5,
    }  # fmt: skip
    assert rows["join"]["queries"] == 1 and rows["join"]["mismatches"] == 0


def test_a_limit_follows_an_order_by_every_output() -> None:
    """LIMIT without a total order would make the multiset nondeterministic."""
    for sql in QUERIES:
        for select in sqlglot.parse_one(sql, read="spark").find_all(sqlglot.exp.Select):
            if select.args.get("limit") is None:
                continue
            order = select.args.get("order")
            assert order is not None, sql
            ordered = {o.this.sql() for o in order.expressions}
            assert ordered == {e.alias_or_name for e in select.expressions}, sql


def test_tiles_use_lattice_labels_only() -> None:
    for spec in SPECS:
        if spec.kind == "tile":
            element = querygen.tile_element(spec)
            assert element["dimensions"] and "" not in element["dimensions"]
            assert element["measures"][0] == {"agg": "count"}


def test_multisets_compare_by_value_with_nulls_equal() -> None:
    row = compare.values('{"a": 1.50, "b": null, "c": "x"}')
    assert row == (Decimal("1.5"), None, "x")
    same = Counter([row, row])
    assert compare.difference(same, Counter([(Decimal("1.500"), None, "x")] * 2)) == ""
    assert "2 rows vs 1" in compare.difference(same, Counter([row]))
    assert compare.difference(Counter([(None,)]), Counter([(Decimal(0),)])) != ""
    assert compare.difference(Counter([("1",)]), Counter([(Decimal(1),)])) != ""


def test_floats_compare_to_a_relative_tolerance() -> None:
    a = Counter([(Decimal("0.30000000000000004"), "x"), (Decimal("1e20"), "y")])
    b = Counter([(Decimal("0.3"), "x"), (Decimal("100000000000000000001"), "y")])
    assert compare.difference(a, b) == ""
    assert compare.difference(a, Counter([(Decimal("0.31"), "x"), (Decimal("1e20"), "y")]))
