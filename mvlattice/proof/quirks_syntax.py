"""Quirks of other dialects' syntax that Spark's parser rejects: double-quoted and bracketed
names, MySQL's `LIMIT 0, 5`, `FETCH FIRST`, `TOP`, `DISTINCT ON`, table hints, Postgres's casts
and regular expressions (`proof.rejected`)."""

from __future__ import annotations

from sqlglot import exp

from mvlattice.proof.quirk_tree import (
    DIALECT,
    Template,
    first,
    grouped,
    quote_parts,
    recast,
    spark_sql,
    with_condition,
)


def double_quoted_names(query: Template) -> str | None:
    """Calcite, ANSI and Postgres quoting: every name in double quotes (the issue's query)."""
    return query.tree.sql(dialect=DIALECT, identify=True).replace("`", '"')


def double_quoted_tables(query: Template) -> str | None:
    tree = query.copy()
    quote_parts(list(tree.find_all(exp.Table)), ("this", "db"), '"')
    return spark_sql(tree)


def double_quoted_columns(query: Template) -> str | None:
    """Qualified columns in double quotes: `"t"."the_month"` (Spark reads "…" as strings)."""
    tree = query.copy()
    qualified = [c for c in tree.find_all(exp.Column) if c.args.get("table") is not None]
    if not qualified:
        return None
    quote_parts(qualified, ("this", "table"), '"')
    return spark_sql(tree)


def square_bracket_tables(query: Template) -> str | None:
    """SQL Server quoting: `[foodmart].[sales_fact_1997]`."""
    tree = query.copy()
    quote_parts(list(tree.find_all(exp.Table)), ("this", "db"), "[", "]")
    return spark_sql(tree)


def mysql_limit(query: Template) -> str | None:
    """MySQL's `LIMIT offset, count` (sqlglot reads it as LIMIT … OFFSET …)."""
    tree = query.copy()
    tree.set("limit", None)
    return f"{spark_sql(tree)} LIMIT 0, 10"


def fetch_first(query: Template) -> str | None:
    """ANSI/Postgres/Oracle `FETCH FIRST n ROWS ONLY` (sqlglot writes LIMIT n)."""
    tree = query.copy()
    tree.set("limit", None)
    return f"{spark_sql(tree)} FETCH FIRST 10 ROWS ONLY"


def top_n(query: Template) -> str | None:
    """SQL Server's `SELECT TOP n`."""
    text = spark_sql(query.tree)
    return "SELECT TOP 10 " + text[len("SELECT ") :] if text.startswith("SELECT ") else None


def distinct_on(query: Template) -> str | None:
    """Postgres's `SELECT DISTINCT ON (…)` (sqlglot writes a ROW_NUMBER filter)."""
    select = query.select
    if select is None or not grouped(select) or not spark_sql(query.tree).startswith("SELECT "):
        return None
    first = spark_sql(grouped(select)[0])
    text = spark_sql(query.tree)
    return f"SELECT DISTINCT ON ({first}) " + text[len("SELECT ") :]


def table_hint(query: Template) -> str | None:
    """SQL Server's `WITH (NOLOCK)` after a table (sqlglot drops it)."""
    table = first(query.tree, exp.Table)
    if table is None:
        return None
    text, written = spark_sql(query.tree), spark_sql(table)
    return text.replace(written, f"{written} WITH (NOLOCK)", 1) if written in text else None


def postgres_text_cast(query: Template) -> str | None:
    """Postgres's `CAST(x AS TEXT)` (sqlglot writes STRING) on a grouping column."""
    return recast(query, lambda c: f"CAST({c} AS TEXT)")


def postgres_double_colon(query: Template) -> str | None:
    """Postgres's `x::float8` (sqlglot writes CAST(x AS DOUBLE)) on an aggregate."""
    tree = query.copy()
    agg = first(tree, exp.AggFunc)
    if agg is None:
        return None
    agg.replace(exp.Var(this=f"{spark_sql(agg)}::float8"))
    return spark_sql(tree)


def postgres_regex_match(query: Template) -> str | None:
    """Postgres's `x ~ 'pattern'`."""
    return with_condition(query, lambda c: f"{c} ~ '^J'")
