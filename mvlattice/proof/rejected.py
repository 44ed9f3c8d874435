"""Near misses Spark rejects: a query the tiles answer, changed by one quirk of another SQL
dialect or by one mistake, so that Spark's parser or analyzer refuses it (issue 36).

sqlglot reads more than Spark does — double-quoted names, `LIMIT 0, 5`, `FETCH FIRST`,
`DISTINCT ON`, `CAST(x AS TEXT)`, `x::float8`, functions Spark lacks — and writes what it read
back as valid Spark SQL, so without Spark's own word on the text such a query would be answered
from a tile. None of these may be answered: `Workspace` rewrites only what Spark accepts as
written (`engine.acceptance`). Each quirk applies to some queries and not others; `near_misses`
applies every one that applies, once, to a query, and the same query always gives the same
near misses. Whoever uses them checks that Spark really rejects each (`spark.sql` raises).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from sqlglot import exp

from mvlattice.sql.parse import DIALECT, parse_query


@dataclass(frozen=True, slots=True)
class NearMiss:
    quirk: str  # the quirk's name, QUIRKS' key
    template: str  # the answerable query it was made from
    sql: str


@dataclass(frozen=True, slots=True)
class _Query:
    """A template, parsed, and what the quirks need to know about it."""

    tree: exp.Query
    columns: frozenset[str]  # every column name of the tables it may read (lower case)

    def copy(self) -> exp.Query:
        return self.tree.copy()

    @property
    def select(self) -> exp.Select | None:
        found = self.tree if isinstance(self.tree, exp.Select) else self.tree.find(exp.Select)
        return found if isinstance(found, exp.Select) else None


Quirk = Callable[[_Query], str | None]


def near_misses(sql: str, columns: Collection[str] = ()) -> tuple[NearMiss, ...]:
    """Every quirk of QUIRKS that applies to `sql` (Spark SQL), applied once. `columns`: the
    column names of the model's tables (a misspelled name must not be another real one)."""
    query = _Query(parse_query(sql), frozenset(c.lower() for c in columns))
    out: dict[str, NearMiss] = {}
    for name, quirk in QUIRKS:
        text = quirk(query)
        if text is not None and text != sql and text not in {m.sql for m in out.values()}:
            out[name] = NearMiss(name, sql, text)
    return tuple(out.values())


# -- helpers ----------------------------------------------------------------------------------
def _spark(tree: exp.Expr) -> str:
    return tree.sql(dialect=DIALECT)


def _outer(tree: exp.Query) -> exp.Select | None:
    """The SELECT that holds the query's GROUP BY (the template's main block)."""
    for select in tree.find_all(exp.Select):
        if select.args.get("group") is not None or select.find(exp.AggFunc) is not None:
            return select
    return None


def _first(tree: exp.Expr, kind: type[exp.Expr]) -> exp.Expr | None:
    found = tree.find(kind)
    return found if isinstance(found, kind) else None


def _grouped(select: exp.Select) -> list[exp.Column]:
    group = select.args.get("group")
    items = group.expressions if group is not None else []
    return [c for c in items if isinstance(c, exp.Column)]


def _raw(name: str, left: str, right: str = "") -> exp.Var:
    """A name printed exactly as given (another dialect's quoting)."""
    return exp.Var(this=f"{left}{name}{right or left}")


def _quote_parts(
    nodes: Sequence[exp.Expr], keys: tuple[str, ...], left: str, right: str = ""
) -> None:
    for node in nodes:
        for key in keys:
            part = node.args.get(key)
            if isinstance(part, exp.Identifier):
                node.set(key, _raw(part.name, left, right))


def _misspelled(name: str, taken: frozenset[str]) -> str:
    candidate = name[:-1] if len(name) > 3 else name + "x"
    return candidate if candidate.lower() not in taken else name + "_x"


# -- parse errors: other dialects' syntax -----------------------------------------------------
def double_quoted_names(query: _Query) -> str | None:
    """Calcite, ANSI and Postgres quoting: every name in double quotes (the issue's query)."""
    return query.tree.sql(dialect=DIALECT, identify=True).replace("`", '"')


def double_quoted_tables(query: _Query) -> str | None:
    tree = query.copy()
    _quote_parts(list(tree.find_all(exp.Table)), ("this", "db"), '"')
    return _spark(tree)


def double_quoted_columns(query: _Query) -> str | None:
    """Qualified columns in double quotes: `"t"."the_month"` (Spark reads "…" as strings)."""
    tree = query.copy()
    qualified = [c for c in tree.find_all(exp.Column) if c.args.get("table") is not None]
    if not qualified:
        return None
    _quote_parts(qualified, ("this", "table"), '"')
    return _spark(tree)


def square_bracket_tables(query: _Query) -> str | None:
    """SQL Server quoting: `[foodmart].[sales_fact_1997]`."""
    tree = query.copy()
    _quote_parts(list(tree.find_all(exp.Table)), ("this", "db"), "[", "]")
    return _spark(tree)


def mysql_limit(query: _Query) -> str | None:
    """MySQL's `LIMIT offset, count` (sqlglot reads it as LIMIT … OFFSET …)."""
    tree = query.copy()
    tree.set("limit", None)
    return f"{_spark(tree)} LIMIT 0, 10"


def fetch_first(query: _Query) -> str | None:
    """ANSI/Postgres/Oracle `FETCH FIRST n ROWS ONLY` (sqlglot writes LIMIT n)."""
    tree = query.copy()
    tree.set("limit", None)
    return f"{_spark(tree)} FETCH FIRST 10 ROWS ONLY"


def top_n(query: _Query) -> str | None:
    """SQL Server's `SELECT TOP n`."""
    text = _spark(query.tree)
    return "SELECT TOP 10 " + text[len("SELECT ") :] if text.startswith("SELECT ") else None


def distinct_on(query: _Query) -> str | None:
    """Postgres's `SELECT DISTINCT ON (…)` (sqlglot writes a ROW_NUMBER filter)."""
    select = query.select
    if select is None or not _grouped(select) or not _spark(query.tree).startswith("SELECT "):
        return None
    first = _spark(_grouped(select)[0])
    text = _spark(query.tree)
    return f"SELECT DISTINCT ON ({first}) " + text[len("SELECT ") :]


def table_hint(query: _Query) -> str | None:
    """SQL Server's `WITH (NOLOCK)` after a table (sqlglot drops it)."""
    table = _first(query.tree, exp.Table)
    if table is None:
        return None
    text, written = _spark(query.tree), _spark(table)
    return text.replace(written, f"{written} WITH (NOLOCK)", 1) if written in text else None


def postgres_text_cast(query: _Query) -> str | None:
    """Postgres's `CAST(x AS TEXT)` (sqlglot writes STRING) on a grouping column."""
    return _recast(query, lambda c: f"CAST({c} AS TEXT)")


def postgres_double_colon(query: _Query) -> str | None:
    """Postgres's `x::float8` (sqlglot writes CAST(x AS DOUBLE)) on an aggregate."""
    tree = query.copy()
    agg = _first(tree, exp.AggFunc)
    if agg is None:
        return None
    agg.replace(exp.Var(this=f"{_spark(agg)}::float8"))
    return _spark(tree)


def postgres_regex_match(query: _Query) -> str | None:
    """Postgres's `x ~ 'pattern'`."""
    return _with_condition(query, lambda c: f"{c} ~ '^J'")


def _recast(query: _Query, write: Callable[[str], str]) -> str | None:
    tree = query.copy()
    select = _outer(tree)
    if select is None or not _grouped(select):
        return None
    target = _grouped(select)[0]
    for column in select.expressions:
        inner = column.this if isinstance(column, exp.Alias) else column
        if isinstance(inner, exp.Column) and inner == target:
            inner.replace(exp.Var(this=write(_spark(inner))))
            return _spark(tree)
    return None


def _with_condition(query: _Query, write: Callable[[str], str]) -> str | None:
    """`write(column)` ANDed to the main block's WHERE, over its first grouping column."""
    tree = query.copy()
    select = _outer(tree)
    if select is None or not _grouped(select):
        return None
    condition = exp.Var(this=write(_spark(_grouped(select)[0])))
    select.where(condition, append=True, copy=False)
    return _spark(tree)


# -- analysis errors: names, functions, arity, types, grouping ---------------------------------
def foreign_aggregate(query: _Query) -> str | None:
    """An aggregate of another dialect: SQLite's total(x), SQL Server's count_big(*)."""
    tree = query.copy()
    agg = _first(tree, exp.AggFunc)
    if agg is None:
        return None
    name = "count_big" if isinstance(agg, exp.Count) else "total"
    agg.replace(exp.Anonymous(this=name, expressions=[agg.this.copy()]))
    return _spark(tree)


def group_concat(query: _Query) -> str | None:
    """MySQL's GROUP_CONCAT over a grouping column, as one more output."""
    return _extra_output(query, lambda c: f"GROUP_CONCAT({c})")


def foreign_scalar(query: _Query) -> str | None:
    """A scalar function of another dialect on a grouping column: MySQL's TO_DAYS."""
    return _extra_output(query, lambda c: f"TO_DAYS({c})", grouped=True)


def sql_server_isnull(query: _Query) -> str | None:
    """SQL Server's two-argument ISNULL(x, y) (Spark's isnull takes one)."""
    return _extra_output(query, lambda c: f"ISNULL({c}, 'none')", grouped=True)


def sqlite_strftime(query: _Query) -> str | None:
    return _with_condition(query, lambda c: f"STRFTIME('%Y', {c}) = '1997'")


def too_many_arguments(query: _Query) -> str | None:
    """round(sum(x), 1, 2): Spark's round takes at most two arguments."""
    tree = query.copy()
    agg = _first(tree, exp.AggFunc)
    if agg is None:
        return None
    agg.replace(exp.Anonymous(this="round", expressions=[agg.copy(), exp.Literal.number(1),
                                                         exp.Literal.number(2)]))  # fmt: skip
    return _spark(tree)


def no_arguments(query: _Query) -> str | None:
    """COUNT() with no argument (sqlglot keeps it; Spark wants one)."""
    tree = query.copy()
    count = _first(tree, exp.Count)
    if count is None or not isinstance(count.this, exp.Star):
        return None
    count.replace(exp.Anonymous(this="COUNT", expressions=[]))
    return _spark(tree)


def unknown_column(query: _Query) -> str | None:
    """A grouping column misspelled, in the outputs and the GROUP BY alike."""
    tree = query.copy()
    select = _outer(tree)
    if select is None or not _grouped(select):
        return None
    name = _grouped(select)[0].name
    wrong = _misspelled(name, query.columns)
    for column in tree.find_all(exp.Column):
        if column.name == name:
            column.set("this", exp.to_identifier(wrong))
    return _spark(tree)


def unknown_table(query: _Query) -> str | None:
    tree = query.copy()
    table = _first(tree, exp.Table)
    if table is None:
        return None
    table.set("this", exp.to_identifier(table.name + "s"))
    return _spark(tree)


def ambiguous_column(query: _Query) -> str | None:
    """A join column named alike on both sides (`ON a.k = b.k`), output unqualified."""
    tree = query.copy()
    select = _outer(tree)
    if select is None:
        return None
    for join in select.args.get("joins") or []:
        condition = join.args.get("on")
        for eq in condition.find_all(exp.EQ) if condition is not None else ():
            left, right = eq.this, eq.expression
            if isinstance(left, exp.Column) and isinstance(right, exp.Column) \
                    and left.name == right.name and left.table != right.table:  # fmt: skip
                select.select(exp.column(left.name), copy=False)
                return _spark(tree)
    return None


def ungrouped_output(query: _Query) -> str | None:
    """A grouping column left out of the GROUP BY, still an output (or no GROUP BY at all)."""
    tree = query.copy()
    select = _outer(tree)
    if select is None or not _grouped(select):
        return None
    group = select.args["group"]
    if len(group.expressions) > 1:
        group.set("expressions", group.expressions[:-1])
    else:
        select.set("group", None)
    select.set("having", None)
    return _spark(tree)


def aggregate_in_where(query: _Query) -> str | None:
    tree = query.copy()
    select = _outer(tree)
    if select is None:
        return None
    select.where("COUNT(*) > 0", append=True, dialect=DIALECT, copy=False)
    return _spark(tree)


def nested_aggregate(query: _Query) -> str | None:
    tree = query.copy()
    agg = _first(tree, exp.AggFunc)
    if agg is None:
        return None
    agg.replace(exp.Sum(this=agg.copy()))
    return _spark(tree)


def order_by_position_out_of_range(query: _Query) -> str | None:
    tree = query.copy()
    outputs = len(tree.selects) if isinstance(tree, exp.Query) else 0
    if not outputs:
        return None
    tree.set("limit", None)
    tree = tree.order_by(str(outputs + 1), append=False, copy=False)
    return _spark(tree)


def group_by_position_out_of_range(query: _Query) -> str | None:
    tree = query.copy()
    select = _outer(tree)
    if select is None or not _grouped(select):
        return None
    group = select.args["group"]
    position = exp.Literal.number(len(select.expressions) + 1)
    group.set("expressions", [*group.expressions[:-1], position])
    return _spark(tree)


def alias_in_where(query: _Query) -> str | None:
    """An aggregate's output name used in WHERE (Spark resolves WHERE before SELECT)."""
    tree = query.copy()
    select = _outer(tree)
    if select is None:
        return None
    for item in select.expressions:
        if isinstance(item, exp.Alias) and item.find(exp.AggFunc) is not None \
                and item.alias.lower() not in query.columns:  # fmt: skip
            select.where(f"{item.alias} > 0", append=True, dialect=DIALECT, copy=False)
            return _spark(tree)
    return None


def compared_with_array(query: _Query) -> str | None:
    return _with_condition(query, lambda c: f"{c} = ARRAY(1)")


def compared_with_struct(query: _Query) -> str | None:
    return _with_condition(query, lambda c: f"{c} = NAMED_STRUCT('a', 1)")


def number_as_condition(query: _Query) -> str | None:
    """IF over a count: Spark wants a BOOLEAN condition."""
    return _extra_output(query, lambda _c: "IF(COUNT(*), 1, 0)")


def window_in_where(query: _Query) -> str | None:
    return _with_condition(query, lambda c: f"ROW_NUMBER() OVER (ORDER BY {c}) = 1")


def unknown_using_column(query: _Query) -> str | None:
    tree = query.copy()
    for join in tree.find_all(exp.Join):
        using = join.args.get("using")
        if using:
            name = using[0].name
            using[0].replace(exp.to_identifier(_misspelled(name, query.columns)))
            return _spark(tree)
    return None


def _extra_output(query: _Query, write: Callable[[str], str], grouped: bool = False) -> str | None:
    """One more output, `write(column)` over the main block's first grouping column; grouped
    by it too when `grouped` (so that only the function itself is wrong)."""
    tree = query.copy()
    select = _outer(tree)
    if select is None or not _grouped(select):
        return None
    column = _spark(_grouped(select)[0])
    output = exp.Var(this=write(column))
    select.select(exp.alias_(output, "extra"), copy=False)
    if grouped:
        select.group_by(exp.Var(this=write(column)), copy=False)
    return _spark(tree)


QUIRKS: tuple[tuple[str, Quirk], ...] = (
    ("double_quoted_names", double_quoted_names),
    ("double_quoted_tables", double_quoted_tables),
    ("double_quoted_columns", double_quoted_columns),
    ("square_bracket_tables", square_bracket_tables),
    ("mysql_limit", mysql_limit),
    ("fetch_first", fetch_first),
    ("top_n", top_n),
    ("distinct_on", distinct_on),
    ("table_hint", table_hint),
    ("postgres_text_cast", postgres_text_cast),
    ("postgres_double_colon", postgres_double_colon),
    ("postgres_regex_match", postgres_regex_match),
    ("foreign_aggregate", foreign_aggregate),
    ("group_concat", group_concat),
    ("foreign_scalar", foreign_scalar),
    ("sql_server_isnull", sql_server_isnull),
    ("sqlite_strftime", sqlite_strftime),
    ("too_many_arguments", too_many_arguments),
    ("no_arguments", no_arguments),
    ("unknown_column", unknown_column),
    ("unknown_table", unknown_table),
    ("ambiguous_column", ambiguous_column),
    ("ungrouped_output", ungrouped_output),
    ("aggregate_in_where", aggregate_in_where),
    ("nested_aggregate", nested_aggregate),
    ("order_by_position_out_of_range", order_by_position_out_of_range),
    ("group_by_position_out_of_range", group_by_position_out_of_range),
    ("alias_in_where", alias_in_where),
    ("compared_with_array", compared_with_array),
    ("compared_with_struct", compared_with_struct),
    ("number_as_condition", number_as_condition),
    ("window_in_where", window_in_where),
    ("unknown_using_column", unknown_using_column),
)
