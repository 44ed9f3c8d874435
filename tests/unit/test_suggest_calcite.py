"""Calcite's LatticeSuggesterTest expectations (scott and FoodMart), through our suggester.

Calcite writes graphs as `EMP (DEPT:DEPTNO)`: the root table, then each child as
`table:columns of the parent it joins on`, nested. Our `describe` writes the same, with the
model's spelling of names and lower-case function names.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mvlattice.datasets.foodmart import TABLES
from mvlattice.model.loader import Model, load_model
from mvlattice.suggest.logs import ANSI, LogEntry
from mvlattice.suggest.suggester import Suggestion, describe, suggest

SCOTT = """
version: "1.0"
defaultSchema: scott
schemas:
  - name: scott
    type: delta
    tables:
      - name: emp
        columns: [empno, ename, job, mgr, hiredate, sal, comm, deptno]
        primaryKey: [empno]
        foreignKeys:
          - {columns: [deptno], references: dept}
          - {columns: [mgr], references: emp, referencedColumns: [empno]}
      - name: dept
        columns: [deptno, dname, loc]
        primaryKey: [deptno]
"""

SALES_KEYS = """foreignKeys:
          - {columns: [product_id], references: product}
          - {columns: [time_id], references: time_by_day}
          - {columns: [customer_id], references: customer}
          - {columns: [promotion_id], references: promotion}
          - {columns: [store_id], references: store}"""
FOODMART_KEYS = {  # as models/foodmart.yaml declares them
    "sales_fact_1997": SALES_KEYS,
    "time_by_day": "primaryKey: [time_id]",
    "product": "primaryKey: [product_id]\n"
    "        foreignKeys: [{columns: [product_class_id], references: product_class}]",
    "product_class": "primaryKey: [product_class_id]",
    "customer": "primaryKey: [customer_id]",
    "store": "primaryKey: [store_id]",
    "promotion": "primaryKey: [promotion_id]",
}


def foodmart_yaml(extra: str = "") -> str:
    """FoodMart's tables with their columns declared (no data needed) and their keys."""
    tables = []
    for table in TABLES:
        columns = [part.split()[0] for part in table.ddl.split(", ")]
        key = FOODMART_KEYS[table.name]
        tables.append(
            f"      - name: {table.name}\n        columns: [{', '.join(columns)}]"
            + (f"\n        {key}" if key else "")
        )
    head = 'version: "1.0"\ndefaultSchema: foodmart\nschemas:\n  - name: foodmart\n'
    return head + "    type: delta\n    tables:\n" + "\n".join(tables) + "\n" + extra


def model_from(tmp_path: Path, text: str, name: str = "model.yaml") -> Model:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load_model(path, warehouse=str(tmp_path / "warehouse"))


@pytest.fixture
def scott(tmp_path: Path) -> Model:
    return model_from(tmp_path, SCOTT)


@pytest.fixture
def foodmart(tmp_path: Path) -> Model:
    return model_from(tmp_path, foodmart_yaml())


def graphs(result: Suggestion) -> list[str]:
    return [describe(item) for item in result.lattices]


def one(sql: str, model: Model, dialect: str | None = None) -> Suggestion:
    return suggest([LogEntry(sql, "q", dialect=dialect)], model=model, evolve=False)


# --- testEmpDept ------------------------------------------------------------------------------


def test_join_using(scott: Model) -> None:
    q = (
        "select dept.dname, count(*), sum(sal) from emp join dept using (deptno) "
        "group by dept.dname"
    )
    assert graphs(one(q, scott)) == ["emp (dept:deptno):[count(), sum(emp.sal)]"]


def test_comma_join_with_where_equality_gives_the_same_lattice(scott: Model) -> None:
    q = (
        "select dept.dname, count(*), sum(sal) from emp, dept "
        "where emp.deptno = dept.deptno group by dept.dname"
    )
    assert graphs(one(q, scott)) == ["emp (dept:deptno):[count(), sum(emp.sal)]"]


def test_having_aggregate_is_a_measure(scott: Model) -> None:
    q = (
        "select dept.dname from emp, dept where emp.deptno = dept.deptno "
        "group by dept.dname having count(*) > 10"
    )
    assert graphs(one(q, scott)) == ["emp (dept:deptno):[count()]"]


def test_single_table_distinct(scott: Model) -> None:
    assert graphs(one("select distinct dname from dept", scott)) == ["dept:[]"]


def test_no_tables_no_lattice(scott: Model) -> None:
    q = "select distinct t.c from (values 1, 2) as t(c) join (values 2, 3) as u(c) using (c)"
    result = one(q, scott)
    assert graphs(result) == []
    assert [(s.reason, s.count) for s in result.summary.skipped] == [("no tables", 1)]


def test_self_join_is_two_nodes(scott: Model) -> None:
    q = "select * from emp as e join emp as m on e.mgr = m.empno"
    assert graphs(one(q, scott)) == ["emp (emp:mgr):[]"]


def test_double_self_join(scott: Model) -> None:
    q = "select * from emp as e join emp as m on e.mgr = m.empno join emp as m2 on m.mgr = m2.empno"
    assert graphs(one(q, scott)) == ["emp (emp:mgr (emp:mgr)):[]"]


def test_cyclic_self_join_gives_no_lattice(scott: Model) -> None:
    q = (
        "select * from emp as e join emp as m on e.mgr = m.empno "
        "join emp as m2 on m.mgr = m2.empno where m2.mgr = e.empno"
    )
    result = one(q, scott)
    assert graphs(result) == []
    (skip,) = result.summary.skipped
    assert (skip.reason, skip.count) == ("cyclic join", 1)


def test_self_join_aliases_are_distinct_in_the_lattice(scott: Model) -> None:
    q = "select * from emp as e join emp as m on e.mgr = m.empno join emp as m2 on m.mgr = m2.empno"
    (item,) = one(q, scott).lattices
    assert item.lattice is not None
    assert [n.alias for n in item.lattice.nodes] == ["emp", "emp_2", "emp_3"]
    assert [(e.source, e.target) for e in item.lattice.edges] == [
        ("emp", "emp_2"),
        ("emp_2", "emp_3"),
    ]


# --- testFoodmart, testSharedSnowflake, testEvolve --------------------------------------------

SNOWFLAKE = """select "t"."the_year" as "c0", "t"."quarter" as "c1",
 "pc"."product_family" as "c2", sum("s"."unit_sales") as "m0"
from "time_by_day" as "t", "sales_fact_1997" as "s", "product_class" as "pc", "product" as "p"
where "s"."time_id" = "t"."time_id" and "t"."the_year" = 1997
and "s"."product_id" = "p"."product_id" and "p"."product_class_id" = "pc"."product_class_id"
group by "t"."the_year", "t"."quarter", "pc"."product_family\""""


def test_foodmart_simple_join(foodmart: Model) -> None:
    q = (
        'select "t"."the_year", count(*) from "sales_fact_1997" as "s" '
        'join "time_by_day" as "t" on "s"."time_id" = "t"."time_id" group by "t"."the_year"'
    )
    assert graphs(one(q, foodmart, ANSI)) == ["sales_fact_1997 (time_by_day:time_id):[count()]"]


def test_foodmart_snowflake(foodmart: Model) -> None:
    expected = (
        "sales_fact_1997 (product:product_id (product_class:product_class_id) "
        "time_by_day:time_id):[sum(sales_fact_1997.unit_sales)]"
    )
    assert graphs(one(SNOWFLAKE, foodmart, ANSI)) == [expected]


def test_foodmart_snowflake_without_a_model_by_naming_conventions() -> None:
    result = suggest([LogEntry(SNOWFLAKE, "q", dialect=ANSI)], default_schema="foodmart")
    (item,) = result.lattices
    assert item.suggested.describe() == (
        "sales_fact_1997 (product:product_id (product_class:product_class_id) time_by_day:time_id)"
    )
    assert result.summary.directions == (("naming", 3),)


def test_shared_snowflake_region_twice() -> None:
    q = """select "s"."store_country", "r"."sales_region", "r1"."sales_region",
      sum("f"."unit_sales") from "store" as "s", "sales_fact_1997" as "f", "region" as "r",
      "region" as "r1", "customer" as "c"
    where "f"."store_id" = "s"."store_id" and "s"."store_country" = 'USA'
      and "s"."region_id" = "r"."region_id" and "r"."sales_region" = 'South West'
      and "f"."customer_id" = "c"."customer_id" and "c"."customer_region_id" = "r1"."region_id"
    group by "s"."store_country", "r"."sales_region", "r1"."sales_region\""""
    result = suggest([LogEntry(q, "q", dialect=ANSI)], default_schema="foodmart")
    assert graphs(result) == [
        "sales_fact_1997 (customer:customer_id (region:customer_region_id) "
        "store:store_id (region:region_id)):[sum(sales_fact_1997.unit_sales)]"
    ]


def test_evolve(foodmart: Model) -> None:
    queries = [
        'select count(*) from "sales_fact_1997"',
        'select sum("unit_sales") from "sales_fact_1997" join "customer" using ("customer_id") '
        'group by "customer"."city"',
        'select count(distinct "the_day") from "sales_fact_1997" '
        'join "time_by_day" using ("time_id") join "product" using ("product_id")',
        'select min("product"."product_id") from "sales_fact_1997" '
        'join "product" using ("product_id") '
        'join "product_class" as pc using ("product_class_id") group by pc."product_department"',
    ]
    expected = [
        "sales_fact_1997:[count()]",
        "sales_fact_1997 (customer:customer_id):[count(), sum(sales_fact_1997.unit_sales)]",
        "sales_fact_1997 (customer:customer_id product:product_id time_by_day:time_id):"
        "[count(), sum(sales_fact_1997.unit_sales), count(DISTINCT time_by_day.the_day)]",
        "sales_fact_1997 (customer:customer_id product:product_id "
        "(product_class:product_class_id) time_by_day:time_id):"
        "[count(), sum(sales_fact_1997.unit_sales), count(DISTINCT time_by_day.the_day), "
        "min(product.product_id)]",
    ]
    log = []
    for i, (sql, graph) in enumerate(zip(queries, expected, strict=True)):
        log.append(LogEntry(sql, f"q{i}", dialect=ANSI))
        result = suggest(log, model=foodmart, tiles=False)
        assert graphs(result) == [graph]
    (item,) = result.lattices
    assert item.lattice is not None
    tables = sorted(n.table for n in item.lattice.nodes)
    assert tables == ["customer", "product", "product_class", "sales_fact_1997", "time_by_day"]


def test_without_merging_each_join_graph_is_a_lattice(foodmart: Model) -> None:
    queries = [
        'select count(*) from "sales_fact_1997"',
        'select sum("unit_sales") from "sales_fact_1997" join "customer" using ("customer_id")',
        'select count(*) from "sales_fact_1997" as s join "customer" as c '
        'on s."customer_id" = c."customer_id" where c."city" = \'Albany\'',
    ]
    log = [LogEntry(q, f"q{i}", dialect=ANSI) for i, q in enumerate(queries)]
    result = suggest(log, model=foodmart, evolve=False, tiles=False)
    assert graphs(result) == [
        "sales_fact_1997:[count()]",
        "sales_fact_1997 (customer:customer_id):[sum(sales_fact_1997.unit_sales), count()]",
    ]
    assert [item.suggested.queries for item in result.lattices] == [("q0",), ("q1", "q2")]
    assert (result.summary.lattices_without_merging, result.summary.lattices_with_merging) == (2, 1)
