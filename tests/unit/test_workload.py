"""Workloads: SQL statements mapped to lattice labels, and workload files in every format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mvlattice.errors import NotFoundError, UsageError
from mvlattice.lattice.lattice import Lattice, Measure
from mvlattice.plan.workload import (
    Workload,
    WorkloadQuery,
    read_workload,
    split_sql,
    workload_from_entries,
    workload_from_sql,
)
from tests.unit.plan_support import shop_lattice

COUNT = frozenset({Measure("count")})
FACT_TIME = "from shop.sales s join shop.time_by_day t on s.time_id = t.time_id"


@pytest.fixture
def lattice(tmp_path: Path) -> Lattice:
    return shop_lattice(tmp_path)


def asks(lattice: Lattice, *statements: str) -> Workload:
    return workload_from_sql(((sql, 1.0) for sql in statements), lattice)


def only(workload: Workload) -> tuple[set[str], set[str]]:
    assert len(workload.queries) == 1, workload
    query = workload.queries[0]
    return set(query.dimensions), set(query.filters)


def test_qualified_columns_map_through_the_query_aliases(lattice: Lattice) -> None:
    sql = (
        f"select t.the_year, t.the_month, sum(s.units) {FACT_TIME} group by t.the_year, t.the_month"
    )
    assert only(asks(lattice, sql)) == ({"the_year", "the_month"}, set())


def test_unqualified_columns_and_using_joins(lattice: Lattice) -> None:
    sql = "select the_month, count(*) from shop.sales join shop.time_by_day using (time_id) "
    sql += "group by the_month, time_id"
    assert only(asks(lattice, sql)) == ({"the_month", "s.time_id"}, set())


def test_unqualified_tables_match_by_name(lattice: Lattice) -> None:
    sql = "select brand, count(*) from sales join product using (product_id) group by brand"
    assert only(asks(lattice, sql)) == ({"brand"}, set())


def test_ordinals_aliases_and_expressions_resolve_to_their_columns(lattice: Lattice) -> None:
    sql = (
        "select upper(p.brand) as b, t.quarter as q, count(*) from shop.sales s "
        "join shop.product p on s.product_id = p.product_id "
        "join shop.time_by_day t on s.time_id = t.time_id group by 1, q"
    )
    assert only(asks(lattice, sql)) == ({"brand", "quarter"}, set())


def test_select_distinct_groups_by_its_select_list(lattice: Lattice) -> None:
    sql = f"select distinct t.quarter, t.the_year from {FACT_TIME[5:]} where s.store_id = 1"
    assert only(asks(lattice, sql)) == ({"quarter", "the_year"}, {"store_id"})


def test_rollup_groups_by_its_finest_set(lattice: Lattice) -> None:
    sql = f"select t.the_year, t.the_month, count(*) {FACT_TIME} "
    sql += "group by rollup(t.the_year, t.the_month)"
    assert only(asks(lattice, sql)) == ({"the_year", "the_month"}, set())


def test_filters_are_where_columns_but_not_join_predicates(lattice: Lattice) -> None:
    sql = (
        "select p.brand, count(*) from shop.sales s, shop.product p, shop.time_by_day t "
        "where s.product_id = p.product_id and s.time_id = t.time_id "
        "and t.the_year = 1997 and (t.quarter = 'Q1' or s.units > 2) group by p.brand"
    )
    assert only(asks(lattice, sql)) == ({"brand"}, {"the_year", "quarter", "units"})


def test_a_table_outside_the_lattice_maps_to_the_column_it_joins_on(lattice: Lattice) -> None:
    sql = (
        "select st.city, count(*) from shop.sales s join shop.store st "
        "on s.store_id = st.store_id where st.city <> 'Paris' group by st.city"
    )
    assert only(asks(lattice, sql)) == ({"store_id"}, {"store_id"})


def test_unmappable_blocks_are_counted_not_guessed(lattice: Lattice) -> None:
    work = asks(
        lattice,
        "select st.city, count(*) from shop.sales s cross join shop.store st group by st.city",
        "select s.nope, count(*) from shop.sales s group by s.nope",
        "select units, price from shop.sales",  # detail rows: no tile answers it
    )
    assert (work.queries, work.unmapped, work.ignored) == ((), 3, 0)
    assert len(work.unmapped_statements()) == 3 and "s.nope" in work.unmapped_statements()[1]


def test_the_plan_names_the_statements_it_could_not_weigh(lattice: Lattice) -> None:
    from mvlattice.plan.render import unmapped_lines

    mapped = "select s.store_id, count(*) from shop.sales s group by s.store_id"
    detail = [f"select units, price from shop.sales where units > {i}" for i in range(7)]
    work = asks(lattice, mapped, *detail)
    assert work.unmapped_statements() == tuple(detail)
    lines = unmapped_lines(work)
    assert lines[0].startswith("statements that read the fact table in a block the lattice")
    assert lines[1] == f"  unmapped: {detail[0]}" and len(lines) == 1 + 5 + 1
    assert lines[-1] == "  … and 2 more (`--json` lists them all)"
    assert unmapped_lines(asks(lattice, mapped)) == [] and unmapped_lines(None) == []


def test_statements_that_miss_the_fact_table_are_ignored(lattice: Lattice) -> None:
    work = asks(lattice, "select brand, count(*) from shop.product group by brand", "select 1")
    assert (work.queries, work.ignored, work.statements) == ((), 2, 2)


def test_unparsable_statements_are_counted(lattice: Lattice) -> None:
    work = asks(lattice, "select from where (", f"select count(*) {FACT_TIME}")
    assert work.unparsed == 1
    assert work.queries == (WorkloadQuery(frozenset(), frozenset(), 1.0, COUNT),)


def test_every_block_reading_the_fact_table_counts_subqueries_and_ctes_too(
    lattice: Lattice,
) -> None:
    sql = (
        "with m as (select t.the_month, count(*) c from shop.sales s join shop.time_by_day t "
        "on s.time_id = t.time_id group by t.the_month) "
        "select * from m where c > (select count(*) from shop.sales where store_id = 3)"
    )
    work = asks(lattice, sql)
    found = {(q.dimensions, q.filters) for q in work.queries}
    assert found == {
        (frozenset({"the_month"}), frozenset()),
        (frozenset(), frozenset({"store_id"})),
    }


def test_equal_queries_merge_and_weights_add(lattice: Lattice) -> None:
    sql = f"select t.the_month, count(*) {FACT_TIME} group by t.the_month"
    work = workload_from_sql([(sql, 2.0), (sql.upper(), 3.0)], lattice)
    assert work.queries == (WorkloadQuery(frozenset({"the_month"}), frozenset(), 5.0, COUNT),)
    assert work.weights() == {frozenset({"the_month"}): 5.0}


def test_weights_sum_over_queries_needing_the_same_columns() -> None:
    work = Workload(
        (
            WorkloadQuery(frozenset({"a"}), frozenset({"b"}), 2.0),
            WorkloadQuery(frozenset({"a", "b"}), frozenset(), 1.0),
        )
    )
    assert work.weights() == {frozenset({"a", "b"}): 3.0}


def test_the_measures_a_query_aggregates(lattice: Lattice) -> None:
    sql = (
        "select t.the_month, sum(s.units), avg(s.price), min(units), count(distinct brand) "
        "from shop.sales s join shop.time_by_day t on s.time_id = t.time_id "
        "join shop.product p on s.product_id = p.product_id group by t.the_month"
    )
    (query,) = asks(lattice, sql).queries
    assert query.measures == {
        Measure("sum", ("units",)),
        Measure("sum", ("price",)),  # AVG rolls up from SUM and COUNT
        Measure("count", ("price",)),
        Measure("min", ("units",)),
    }
    assert query.distinct == {"brand"} and query.columns == {"the_month", "brand"}
    odd = asks(lattice, f"select t.the_month, sum(s.units * 2) {FACT_TIME} group by 1")
    assert odd.queries[0].measures is None  # no tile measure answers an expression


def test_split_sql_keeps_semicolons_in_strings_and_drops_comment_only_parts() -> None:
    text = "select 'a;b' from x;\n-- a comment; still a comment\n;select 2 /* ; */ ;\n"
    assert split_sql(text) == ["select 'a;b' from x", "select 2 /* ; */"]


def test_sql_log_files(lattice: Lattice, tmp_path: Path) -> None:
    log = tmp_path / "log.sql"
    query = f"select t.the_month, count(*) {FACT_TIME} where t.the_year = 1997 group by 1"
    log.write_text(f"{query};\n{query};\nselect 1;\n")
    work = read_workload(log, lattice)
    assert work.queries == (
        WorkloadQuery(frozenset({"the_month"}), frozenset({"the_year"}), 2.0, COUNT),
    )
    assert (work.statements, work.ignored) == (3, 1)


@pytest.mark.parametrize("name", ["log.jsonl", "log.json", "log.txt"])
def test_json_lines_files_with_weights(lattice: Lattice, tmp_path: Path, name: str) -> None:
    query = f"select t.quarter, count(*) {FACT_TIME} group by t.quarter"
    lines = [
        json.dumps({"sql": query, "weight": 4}),
        "",
        json.dumps({"sql": query}),
        json.dumps({"event": "startup"}),  # not a query: skipped
    ]
    (tmp_path / name).write_text("\n".join(lines))
    work = read_workload(tmp_path / name, lattice)
    assert work.queries == (WorkloadQuery(frozenset({"quarter"}), frozenset(), 5.0, COUNT),)


def test_declared_lists_in_yaml_and_json(lattice: Lattice, tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(
        "- {dimensions: [THE_YEAR, the_month], weight: 10}\n"
        "- {dimensions: [[p, brand]], filters: [family]}\n"
    )
    (tmp_path / "w.json").write_text(
        json.dumps([{"dimensions": ["the_year", "the_month"], "weight": 10}, {"dimensions": []}])
    )
    yaml_work = read_workload(tmp_path / "w.yaml", lattice)
    assert yaml_work.queries == (
        WorkloadQuery(frozenset({"brand"}), frozenset({"family"}), 1.0),
        WorkloadQuery(frozenset({"the_year", "the_month"}), frozenset(), 10.0),
    )
    json_work = read_workload(tmp_path / "w.json", lattice)
    assert json_work.weights() == {frozenset(): 1.0, frozenset({"the_year", "the_month"}): 10.0}


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ({"dimensions": []}, "a workload is a list"),
        (
            [{"dimensions": ["the_mnth"]}],
            "entry 1: dimensions: unknown column 'the_mnth' (did you mean 'the_month'?)",
        ),
        ([{"dimensions": [["t", "nope"]]}], "no column 'nope' in table alias 't'"),
        ([{"dimensions": ["brand"], "weight": -1}], "weight must be a non-negative number"),
        ([{"dimensions": ["brand"], "weight": True}], "weight must be a non-negative number"),
        ([{"dims": ["brand"]}], "expected keys dimensions, filters, weight"),
        (["brand"], "must be a mapping with 'dimensions'"),
        ([{"dimensions": "brand"}], "must be a list of column labels"),
    ],
)
def test_bad_declared_entries_say_what_is_wrong(
    lattice: Lattice, entries: object, message: str
) -> None:
    with pytest.raises(UsageError, match=_literal(message)):
        workload_from_entries(entries, lattice)


def test_bad_files_fail_with_one_clear_line(lattice: Lattice, tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="workload file not found"):
        read_workload(tmp_path / "missing.sql", lattice)
    (tmp_path / "bad.jsonl").write_text('{"sql": "select 1"}\n{not json\n')
    with pytest.raises(UsageError, match="line 2: invalid JSON"):
        read_workload(tmp_path / "bad.jsonl", lattice)
    (tmp_path / "bad.yaml").write_text("- {dimensions: [a\n")
    with pytest.raises(UsageError, match="invalid YAML"):
        read_workload(tmp_path / "bad.yaml", lattice)


def _literal(text: str) -> str:
    import re

    return re.escape(text)
