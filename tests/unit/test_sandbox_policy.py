"""The sandbox's decision on plan trees, without Spark: relations by name, views trusted,
operators and expressions by allow-list, generators and sized values bounded, deep trees."""

from __future__ import annotations

from typing import Any

import pytest

from mvlattice.errors import RefusedSqlError
from mvlattice.sandbox.plan_tree import build_forest
from mvlattice.sandbox.policy import check_parsed, check_plan, make_policy

L = "org.apache.spark.sql.catalyst.plans.logical."
E = "org.apache.spark.sql.catalyst.expressions."
RELATION = "org.apache.spark.sql.execution.datasources.LogicalRelation"
BUILTINS = {
    "sum": E + "aggregate.Sum",
    "repeat": E + "StringRepeat",
    "reflect": E + "CallMethodViaReflection",
    "java_method": E + "CallMethodViaReflection",
    "ceil": E + "CeilExpressionBuilder",
    "upper": E + "Upper",
}
POLICY = make_policy(["shop.sales", "Shop.Product"], ["mvlattice"], BUILTINS)


def node(cls: str, children: int = 0, **fields: Any) -> dict[str, Any]:
    return {"class": cls, "num-children": children, **fields}


def relation(database: str | None, table: str) -> dict[str, Any]:
    ident = None if database is None else {"database": database, "table": table,
                                           "catalog": "spark_catalog"}  # fmt: skip
    return node(RELATION, catalogTable=None if ident is None else {"identifier": ident})


def project(*expressions: list[dict[str, Any]], child: dict[str, Any]) -> list[dict[str, Any]]:
    return [node(L + "Project", 1, projectList=list(expressions), child=0), child]


def literal(value: object) -> dict[str, Any]:
    return node(E + "Literal", value=str(value), dataType="integer")


def check(flat: list[dict[str, Any]]) -> None:
    check_plan(build_forest(flat), POLICY)


def test_model_tables_and_tiles_are_read_case_insensitively() -> None:
    check(project([node(E + "Upper", 1), literal(1)], child=relation("SHOP", "Sales")))
    check(project([literal(1)], child=relation("shop", "product")))
    check(project([literal(1)], child=relation("mvlattice", "any_tile")))


@pytest.mark.parametrize(
    "database, table, says",
    [("shop", "secrets", "shop.secrets is not a table"), ("other", "sales", "other.sales"),
     (None, "/etc/hostname", "file or path")],
)  # fmt: skip
def test_other_relations_are_refused(database: str | None, table: str, says: str) -> None:
    with pytest.raises(RefusedSqlError, match=says):
        check(project([literal(1)], child=relation(database, table)))


def test_a_view_of_the_model_is_trusted_but_not_another() -> None:
    desc = {"identifier": {"database": "shop", "table": "sales", "catalog": "spark_catalog"}}
    inner = relation("warehouse_db", "raw_sales")
    check([node(L + "View", 1, desc=desc, child=0), inner])
    other = {"identifier": {"database": "x", "table": "v", "catalog": "spark_catalog"}}
    with pytest.raises(RefusedSqlError, match="x.v"):
        check([node(L + "View", 1, desc=other, child=0), inner])


def test_operators_outside_the_list_are_refused() -> None:
    with pytest.raises(RefusedSqlError, match="TRANSFORM"):
        check(
            [node(L + "ScriptTransformation", 1, script="id", child=0), node(L + "OneRowRelation")]
        )
    with pytest.raises(RefusedSqlError, match="operator SomethingNew"):
        check([node(L + "SomethingNew")])


def test_denied_and_unknown_functions_are_refused_wherever_they_hide() -> None:
    reflect = node(E + "CallMethodViaReflection", 1)
    in_subquery = node(
        E + "ScalarSubquery",
        0,
        plan=project([reflect, literal(1)], child=node(L + "OneRowRelation")),
    )
    filtered = [node(L + "Filter", 1, condition=[node(E + "IsNotNull", 1), in_subquery], child=0),
                relation("shop", "sales")]  # fmt: skip
    with pytest.raises(RefusedSqlError, match=r"java_method\(\) / reflect\(\)"):
        check(filtered)
    with pytest.raises(RefusedSqlError, match="expression MysteryUDF"):
        check(project([node(E + "MysteryUDF")], child=node(L + "OneRowRelation")))
    with pytest.raises(RefusedSqlError, match="ScalaUDF"):
        check(project([node(E + "ScalaUDF")], child=node(L + "OneRowRelation")))


def test_a_builder_stands_for_the_class_it_builds() -> None:
    check(project([node(E + "Ceil", 1), literal(1)], child=node(L + "OneRowRelation")))


@pytest.mark.parametrize("end, ok", [(10_000_000, True), (10_000_001, False), (10**12, False)])
def test_range_is_bounded(end: int, ok: bool) -> None:
    flat = [node(L + "Range", start=0, end=end, step=1)]
    if ok:
        check(flat)
    else:
        with pytest.raises(RefusedSqlError, match="range"):
            check(flat)


def test_sized_functions_need_a_small_literal() -> None:
    def repeat(count: dict[str, Any]) -> list[dict[str, Any]]:
        return project([node(E + "StringRepeat", 2), literal("'x'"), count],
                       child=node(L + "OneRowRelation"))  # fmt: skip

    check(repeat(literal(100_000)))
    with pytest.raises(RefusedSqlError, match=r"repeat\(\) needs a literal size"):
        check(repeat(literal(100_001)))
    with pytest.raises(RefusedSqlError, match="literal size"):
        check(repeat(node(E + "AttributeReference", name="units")))


def test_a_very_deep_tree_is_checked_without_recursion() -> None:
    depth = 20_000
    flat = [node(E + "Upper", 1) for _ in range(depth)] + [literal(1)]
    check(project(flat, child=node(L + "OneRowRelation")))
    flat[depth // 2] = node(E + "CallMethodViaReflection", 1)
    with pytest.raises(RefusedSqlError, match="reflect"):
        check(project(flat, child=node(L + "OneRowRelation")))


def test_a_cross_join_needs_a_side_of_one_row() -> None:
    cross = {"object": "org.apache.spark.sql.catalyst.plans.Cross$"}
    inner = {"object": "org.apache.spark.sql.catalyst.plans.Inner$"}

    def join(kind: dict, right: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [node(L + "Join", 2, joinType=kind, left=0, right=1), relation("shop", "sales"),
                *right]  # fmt: skip

    with pytest.raises(RefusedSqlError, match="CROSS JOIN"):
        check(join(cross, [relation("shop", "product")]))
    one_row = [node(L + "Aggregate", 1, groupingExpressions=[], child=0),
               relation("shop", "product")]  # fmt: skip
    check(join(cross, one_row))
    check(join(cross, [node(L + "SubqueryAlias", 1, child=0), node(L + "OneRowRelation")]))
    check(join(inner, [relation("shop", "product")]))  # a condition, or a WHERE above


ANALYSIS = "org.apache.spark.sql.catalyst.analysis."


def test_memory_unbounded_aggregates_are_refused_by_name() -> None:
    builtins = {
        **BUILTINS,
        "collect_list": E + "aggregate.CollectList",
        "array_agg": E + "aggregate.CollectList",
        "mode": E + "aggregate.Mode",
    }
    policy = make_policy(["shop.sales"], [], builtins)
    for cls in ("CollectList", "Mode", "CollectSet", "Percentile"):
        flat = project([node(E + "aggregate." + cls, 1), literal(1)],
                       child=node(L + "OneRowRelation"))  # fmt: skip
        with pytest.raises(RefusedSqlError):
            check_plan(build_forest(flat), policy)


def rlike(pattern: dict[str, Any]) -> list[dict[str, Any]]:
    column = node(E + "AttributeReference", name="brand")
    return project([node(E + "RLike", 2), column, pattern], child=relation("shop", "sales"))


def test_regular_expressions_need_a_literal_linear_pattern() -> None:
    check(rlike(node(E + "Literal", value="^acme.*$", dataType="string")))
    with pytest.raises(RefusedSqlError, match="quantified group"):
        check(rlike(node(E + "Literal", value="(.*a){12}$", dataType="string")))
    with pytest.raises(RefusedSqlError, match="literal pattern"):
        check(rlike(node(E + "AttributeReference", name="brand")))
    with pytest.raises(RefusedSqlError, match="wildcards"):
        check(project([node(E + "Like", 2), literal("x"),
                       node(E + "Literal", value="%a%b%c%d", dataType="string")],
                      child=node(L + "OneRowRelation")))  # fmt: skip


def test_a_file_sources_hidden_columns_are_refused() -> None:
    reading = relation("shop", "sales")
    reading["output"] = [[node(E + "AttributeReference", name="units")],
                         [node(E + "AttributeReference", name="_metadata")]]  # fmt: skip
    with pytest.raises(RefusedSqlError, match="hidden column _metadata"):
        check(project([literal(1)], child=reading))
    reading["output"] = [[node(E + "AttributeReference", name="units")]]
    check(project([literal(1)], child=reading))


def time_travel(table: str) -> list[dict[str, Any]]:
    unresolved = node(ANALYSIS + "UnresolvedRelation", multipartIdentifier=f"[{table}]")
    return [node(L + "Project", 1, projectList=[], child=0),
            node(ANALYSIS + "RelationTimeTravel", relation=[unresolved], version="0")]  # fmt: skip


def test_old_versions_and_change_feeds_only_where_the_model_allows() -> None:
    strict = make_policy(["shop.sales"], [], BUILTINS)
    allowing = make_policy(["shop.sales"], [], BUILTINS, time_travel=["shop.sales"])
    with pytest.raises(RefusedSqlError, match="old versions of shop.sales"):
        check_parsed(build_forest(time_travel("shop, sales")), strict)
    check_parsed(build_forest(time_travel("shop, sales")), allowing)
    with pytest.raises(RefusedSqlError, match="old versions"):
        check_parsed(build_forest(time_travel("shop, product")), allowing)
    changes = [node(ANALYSIS + "UnresolvedTableValuedFunction", name="[table_changes]",
                    functionArgs=[[node(E + "Literal", value="shop.sales")]])]  # fmt: skip
    with pytest.raises(RefusedSqlError, match="change feed"):
        check_parsed(build_forest(changes), strict)
    check_parsed(build_forest(changes), allowing)


def test_type_strings_spark_parses_while_analyzing_are_bounded() -> None:
    deep = "array<" * 100 + "int" + ">" * 100
    call = [node(ANALYSIS + "UnresolvedFunction", 2, nameParts="[from_json]"),
            node(E + "Literal", value="[]"), node(E + "Literal", value=deep)]  # fmt: skip
    with pytest.raises(RefusedSqlError, match="from_json"):
        check_parsed(build_forest(project(call, child=node(L + "OneRowRelation"))), POLICY)
    call[2] = node(E + "Literal", value="array<int>")
    check_parsed(build_forest(project(call, child=node(L + "OneRowRelation"))), POLICY)
