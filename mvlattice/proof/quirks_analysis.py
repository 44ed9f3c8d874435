"""Mistakes Spark's analyzer rejects: functions of other dialects, wrong arity, unknown and
ambiguous names, grouping errors, positions out of range, type errors (`proof.rejected`)."""

from __future__ import annotations

from sqlglot import exp

from mvlattice.proof.quirk_tree import (
    DIALECT,
    Template,
    extra_output,
    first,
    grouped,
    misspelled,
    outer,
    spark_sql,
    with_condition,
)


def foreign_aggregate(query: Template) -> str | None:
    """An aggregate of another dialect: SQLite's total(x), SQL Server's count_big(*)."""
    tree = query.copy()
    agg = first(tree, exp.AggFunc)
    if agg is None:
        return None
    name = "count_big" if isinstance(agg, exp.Count) else "total"
    agg.replace(exp.Anonymous(this=name, expressions=[agg.this.copy()]))
    return spark_sql(tree)


def group_concat(query: Template) -> str | None:
    """MySQL's GROUP_CONCAT over a grouping column, as one more output."""
    return extra_output(query, lambda c: f"GROUP_CONCAT({c})")


def foreign_scalar(query: Template) -> str | None:
    """A scalar function of another dialect on a grouping column: MySQL's TO_DAYS."""
    return extra_output(query, lambda c: f"TO_DAYS({c})", group_too=True)


def sql_server_isnull(query: Template) -> str | None:
    """SQL Server's two-argument ISNULL(x, y) (Spark's isnull takes one)."""
    return extra_output(query, lambda c: f"ISNULL({c}, 'none')", group_too=True)


def sqlite_strftime(query: Template) -> str | None:
    return with_condition(query, lambda c: f"STRFTIME('%Y', {c}) = '1997'")


def too_many_arguments(query: Template) -> str | None:
    """round(sum(x), 1, 2): Spark's round takes at most two arguments."""
    tree = query.copy()
    agg = first(tree, exp.AggFunc)
    if agg is None:
        return None
    agg.replace(exp.Anonymous(this="round", expressions=[agg.copy(), exp.Literal.number(1),
                                                         exp.Literal.number(2)]))  # fmt: skip
    return spark_sql(tree)


def no_arguments(query: Template) -> str | None:
    """COUNT() with no argument (sqlglot keeps it; Spark wants one)."""
    tree = query.copy()
    count = first(tree, exp.Count)
    if count is None or not isinstance(count.this, exp.Star):
        return None
    count.replace(exp.Anonymous(this="COUNT", expressions=[]))
    return spark_sql(tree)


def unknown_column(query: Template) -> str | None:
    """A grouping column misspelled, in the outputs and the GROUP BY alike."""
    tree = query.copy()
    select = outer(tree)
    if select is None or not grouped(select):
        return None
    name = grouped(select)[0].name
    wrong = misspelled(name, query.columns)
    for column in tree.find_all(exp.Column):
        if column.name == name:
            column.set("this", exp.to_identifier(wrong))
    return spark_sql(tree)


def unknown_table(query: Template) -> str | None:
    tree = query.copy()
    table = first(tree, exp.Table)
    if table is None:
        return None
    table.set("this", exp.to_identifier(table.name + "s"))
    return spark_sql(tree)


def ambiguous_column(query: Template) -> str | None:
    """A join column named alike on both sides (`ON a.k = b.k`), output unqualified."""
    tree = query.copy()
    select = outer(tree)
    if select is None:
        return None
    for join in select.args.get("joins") or []:
        condition = join.args.get("on")
        for eq in condition.find_all(exp.EQ) if condition is not None else ():
            left, right = eq.this, eq.expression
            if isinstance(left, exp.Column) and isinstance(right, exp.Column) \
                    and left.name == right.name and left.table != right.table:  # fmt: skip
                select.select(exp.column(left.name), copy=False)
                return spark_sql(tree)
    return None


def ungrouped_output(query: Template) -> str | None:
    """A grouping column left out of the GROUP BY, still an output (or no GROUP BY at all)."""
    tree = query.copy()
    select = outer(tree)
    if select is None or not grouped(select):
        return None
    group = select.args["group"]
    if len(group.expressions) > 1:
        group.set("expressions", group.expressions[:-1])
    else:
        select.set("group", None)
    select.set("having", None)
    return spark_sql(tree)


def aggregate_in_where(query: Template) -> str | None:
    tree = query.copy()
    select = outer(tree)
    if select is None:
        return None
    select.where("COUNT(*) > 0", append=True, dialect=DIALECT, copy=False)
    return spark_sql(tree)


def nested_aggregate(query: Template) -> str | None:
    tree = query.copy()
    agg = first(tree, exp.AggFunc)
    if agg is None:
        return None
    agg.replace(exp.Sum(this=agg.copy()))
    return spark_sql(tree)


def order_by_position_out_of_range(query: Template) -> str | None:
    tree = query.copy()
    outputs = len(tree.selects) if isinstance(tree, exp.Query) else 0
    if not outputs:
        return None
    tree.set("limit", None)
    tree = tree.order_by(str(outputs + 1), append=False, copy=False)
    return spark_sql(tree)


def group_by_position_out_of_range(query: Template) -> str | None:
    tree = query.copy()
    select = outer(tree)
    if select is None or not grouped(select):
        return None
    group = select.args["group"]
    position = exp.Literal.number(len(select.expressions) + 1)
    group.set("expressions", [*group.expressions[:-1], position])
    return spark_sql(tree)


def alias_in_where(query: Template) -> str | None:
    """An aggregate's output name used in WHERE (Spark resolves WHERE before SELECT)."""
    tree = query.copy()
    select = outer(tree)
    if select is None:
        return None
    for item in select.expressions:
        if isinstance(item, exp.Alias) and item.find(exp.AggFunc) is not None \
                and item.alias.lower() not in query.columns:  # fmt: skip
            select.where(f"{item.alias} > 0", append=True, dialect=DIALECT, copy=False)
            return spark_sql(tree)
    return None


def compared_with_array(query: Template) -> str | None:
    return with_condition(query, lambda c: f"{c} = ARRAY(1)")


def compared_with_struct(query: Template) -> str | None:
    return with_condition(query, lambda c: f"{c} = NAMED_STRUCT('a', 1)")


def number_as_condition(query: Template) -> str | None:
    """IF over a count: Spark wants a BOOLEAN condition."""
    return extra_output(query, lambda _c: "IF(COUNT(*), 1, 0)")


def window_in_where(query: Template) -> str | None:
    return with_condition(query, lambda c: f"ROW_NUMBER() OVER (ORDER BY {c}) = 1")


def unknown_using_column(query: Template) -> str | None:
    tree = query.copy()
    for join in tree.find_all(exp.Join):
        using = join.args.get("using")
        if using:
            name = using[0].name
            using[0].replace(exp.to_identifier(misspelled(name, query.columns)))
            return spark_sql(tree)
    return None
