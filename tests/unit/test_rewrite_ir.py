"""SQL -> IR -> SQL: qualification, translation, the SPJG normal form, generation."""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.errors import SqlError, UnsupportedSqlError, UsageError
from mvlattice.mvrewrite.context import table_columns
from mvlattice.sql import ir
from mvlattice.sql.canon import Classes, canonical
from mvlattice.sql.from_sql import translate
from mvlattice.sql.parse import parse_query, qualify_query, schema_of, spark_output_name
from mvlattice.sql.spjg import normalize
from mvlattice.sql.to_sql import expression, plan_sql, pretty, sql_of
from tests.golden.rewrite import runner


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory):
    model = runner.hr_model(tmp_path_factory.mktemp("ir"))
    return schema_of(table_columns(model))


def plan_of(sql: str, schema) -> ir.Plan:
    return translate(qualify_query(parse_query(sql), schema, runner.SCHEMA))


def block_of(sql: str, schema):
    return normalize(plan_of(sql, schema))


def reason_of(sql: str, schema) -> str:
    with pytest.raises(UnsupportedSqlError) as info:
        block_of(sql, schema)
    return info.value.reason  # type: ignore[attr-defined]


# -- parsing ----------------------------------------------------------------------------------
def test_bad_sql_is_a_sql_error() -> None:
    with pytest.raises(SqlError, match="does not parse"):
        parse_query("SELECT FROM WHERE")


@pytest.mark.parametrize(
    "sql",
    ["INSERT INTO t VALUES (1)", "DROP TABLE emps", "SELECT 1; SELECT 2", "CREATE TABLE x (a INT)"],
)
def test_only_one_query_is_accepted(sql: str) -> None:
    with pytest.raises(UsageError, match="only queries|one SQL statement"):
        parse_query(sql)


def test_with_and_set_operations_are_queries() -> None:
    assert parse_query("WITH a AS (SELECT 1) SELECT * FROM a")
    assert parse_query("SELECT 1 UNION ALL SELECT 2")


def test_unknown_columns_and_tables_are_not_rewritable(schema) -> None:
    with pytest.raises(UnsupportedSqlError, match="could not be resolved"):
        qualify_query(parse_query("SELECT nosuch FROM emps"), schema, runner.SCHEMA)
    with pytest.raises(UnsupportedSqlError, match="not in the model"):
        qualify_query(parse_query("SELECT t.a FROM other.t AS t"), schema, runner.SCHEMA)


# -- translation ------------------------------------------------------------------------------
def test_a_block_becomes_operators(schema) -> None:
    plan = plan_of(
        "SELECT deptno, COUNT(*) AS c FROM emps WHERE salary > 10 GROUP BY deptno "
        "HAVING COUNT(*) > 1 ORDER BY c DESC LIMIT 3",
        schema,
    )
    assert isinstance(plan, ir.Limit) and plan.count == 3
    sort = plan.input
    assert isinstance(sort, ir.Sort) and sort.keys[0] == ir.SortKey(ir.Column("", "c"), True, False)
    project = sort.input
    assert isinstance(project, ir.Project)
    assert [o.name for o in project.outputs] == ["deptno", "c"]
    having = project.input
    assert isinstance(having, ir.Filter) and isinstance(having.input, ir.Aggregate)
    where = having.input.input
    assert isinstance(where, ir.Filter) and isinstance(where.input, ir.Scan)
    assert where.input == ir.Scan("hr_rewrite.emps", "emps")


def test_between_and_in_and_typed_literals(schema) -> None:
    block = block_of(
        "SELECT empid FROM emps WHERE salary BETWEEN 1 AND 2 AND deptno IN (1, 2) "
        "AND empname <> 'x' AND salary > -3.5",
        schema,
    )
    salary = ir.Column("emps", "salary")
    assert ir.Compare(">=", salary, ir.Literal("number", "1")) in block.conjuncts
    assert ir.Compare("<=", salary, ir.Literal("number", "2")) in block.conjuncts
    assert ir.Compare(">", salary, ir.Literal("number", "-3.5")) in block.conjuncts
    date = plan_of("SELECT empid FROM emps WHERE DATE '2020-01-02' > DATE '2020-1-1'", schema)
    assert ir.Literal("date", "2020-01-02") in list(ir.walk(date.input.condition))  # type: ignore[union-attr]


def test_derived_tables_merge_with_fresh_names(schema) -> None:
    block = block_of(
        "SELECT s.empid, emps.deptno FROM (SELECT empid, deptno FROM emps WHERE empid = 1) s "
        "JOIN emps ON s.deptno = emps.deptno",
        schema,
    )
    assert sorted(t.rel for t in block.tables) == ["emps", "emps_2"]
    assert block.outputs[0].expr == ir.Column("emps_2", "empid")
    assert ir.Compare("=", ir.Column("emps_2", "deptno"), ir.Column("emps", "deptno")) in (
        block.conjuncts
    )


def test_distinct_is_grouping(schema) -> None:
    block = block_of("SELECT DISTINCT deptno FROM emps", schema)
    assert block.grouped and block.keys == (ir.Column("emps", "deptno"),)


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("SELECT empid FROM emps LEFT JOIN (SELECT deptno FROM depts) d ON d.deptno = 1", "UNSAFE"),
        ("SELECT empid FROM emps WHERE rand() > 0.5", "UNSAFE"),
        ("SELECT empid, uuid() FROM emps", "UNSAFE"),
        ("SELECT empid, frobnicate(empid) FROM emps", "UNSAFE"),
        ("SELECT empid, RANK() OVER (ORDER BY salary) FROM emps", "UNSUPPORTED"),
        ("SELECT deptno, STDDEV(salary) FROM emps GROUP BY deptno", "UNSUPPORTED"),
        ("SELECT deptno FROM emps GROUP BY CUBE (deptno)", "UNSUPPORTED"),
        (
            "SELECT empid FROM emps e WHERE EXISTS "
            "(SELECT 1 FROM depts d WHERE d.deptno = e.deptno)",
            "UNSUPPORTED",
        ),
        (
            "SELECT t.c FROM (SELECT deptno, COUNT(*) AS c FROM emps GROUP BY deptno) t",
            "UNSUPPORTED",
        ),
        ("SELECT empid FROM emps UNION SELECT deptno FROM depts", "UNSUPPORTED"),
    ],
)
def test_what_is_not_an_spjg_block(sql: str, reason: str, schema) -> None:
    assert reason_of(sql, schema) == reason


def test_uncorrelated_subqueries_are_kept_as_sql(schema) -> None:
    block = block_of(
        "SELECT empid FROM emps WHERE deptno IN (SELECT deptno FROM depts WHERE deptno > 1)",
        schema,
    )
    (subquery,) = block.conjuncts
    assert isinstance(subquery, ir.Subquery) and subquery.kind == "in"
    assert "depts" in subquery.sql


# -- generation -------------------------------------------------------------------------------
ROUND_TRIP = [
    "SELECT empid, (salary + 1) * 2 AS x, -salary AS y FROM emps "
    "WHERE NOT (empid = 1 AND deptno = 2)",
    "SELECT deptno, SUM(salary) / COUNT(salary) AS a FROM emps GROUP BY deptno "
    "HAVING MAX(salary) > 3",
    "SELECT CASE WHEN salary > 10 THEN 'a' ELSE 'b' END AS c, CAST(salary AS INT) AS i FROM emps",
    "SELECT empid FROM emps WHERE empname LIKE 'B%' OR salary IS NULL OR deptno IN (1, 2)",
    "SELECT e.empid, d.deptname FROM emps e JOIN depts d ON e.deptno = d.deptno ORDER BY 1 LIMIT 5",
    "SELECT COUNT(DISTINCT deptno) AS n, COUNT(*) AS c FROM emps",
    "SELECT empid FROM emps WHERE deptno IN (SELECT deptno FROM depts)",
    "SELECT upper(empname) AS u, coalesce(salary, 0) AS s FROM emps WHERE salary - 1 > 2 * deptno",
]


@pytest.mark.parametrize("sql", ROUND_TRIP)
def test_plan_to_sql_round_trips(sql: str, schema) -> None:
    plan = plan_of(sql, schema)
    again = plan_of(plan_sql(plan).sql(dialect="spark"), schema)
    assert again == plan


def test_operands_keep_their_precedence() -> None:
    a, b = ir.Column("t", "a"), ir.Column("t", "b")
    plus = ir.Func("Add", (("this", a), ("expression", b)))
    times = ir.Func("Mul", (("this", plus), ("expression", ir.Literal("number", "2"))))
    assert expression(times).sql(dialect="spark") == "(`t`.`a` + `t`.`b`) * 2"
    negated = ir.Not(ir.And((ir.Compare("=", a, b), ir.Compare(">", a, b))))
    assert sql_of(negated) == "NOT (t.a = t.b AND t.a > t.b)"


def test_pretty_quotes_only_where_needed(schema) -> None:
    plan = ir.Project(
        ir.Scan("hr_rewrite.emps", "order"),
        (ir.Output("count(1)", ir.Agg("count")), ir.Output("x", ir.Column("order", "x"))),
    )
    text = pretty(plan_sql(plan))
    assert "`order`.x" in text and "AS `count(1)`" in text and "hr_rewrite.emps AS `order`" in text


def test_spark_output_names() -> None:
    names = [
        spark_output_name(e)
        for e in parse_query(
            "SELECT COUNT(*), SUM(e.salary), COUNT(DISTINCT x), x + 1, CAST(x AS STRING), 'lit', "
            "(CAST(t.y AS BIGINT)), ((x + 1)), (t.y)"
        ).expressions
    ]
    assert names == [
        "count(1)", "sum(salary)", "count(DISTINCT x)", "(x + 1)", "x", "lit", "y", "(x + 1)", "y"
    ]  # fmt: skip


# -- canonical forms --------------------------------------------------------------------------
def test_canonical_forms_compare_equal() -> None:
    a, b, c = ir.Column("t", "a"), ir.Column("u", "b"), ir.Column("t", "c")
    classes = Classes.build([(a, b)])
    five = ir.Literal("number", "5")
    assert canonical(ir.Compare("=", b, c), classes) == canonical(ir.Compare("=", c, a), classes)
    assert canonical(ir.Compare("<", five, b), classes) == ir.Compare(">", a, five)
    coalesce = ir.Func("Coalesce", (("this", a), ("expressions", (b,))))
    assert canonical(coalesce, classes) == a
    both = ir.And((ir.Compare(">", c, five), ir.Compare(">", a, five)))
    assert canonical(both, classes) == canonical(ir.And(tuple(reversed(both.terms))), classes)
    assert classes.members(b) == (a, b) and classes.members(c) == (c,)


def test_model_columns_come_from_declarations(tmp_path: Path) -> None:
    model = runner.hr_model(tmp_path)
    found = table_columns(model)
    assert found["hr_rewrite"]["emps"] == ("empid", "deptno", "locationid", "empname", "salary")
