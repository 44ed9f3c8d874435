"""A query over other views' tables, with each such table replaced by the view's definition (a
derived table): a materialization reading another one, expressed over base tables for matching.

`Definition.sql` is the inner view's SQL with its tables qualified by its own schema
(`qualify_tables`), so it means the same inside a query whose default schema differs;
`Definition.columns`, when given, are the names its outputs are stored under (`stored_names`),
set as the aliases of its SELECT list, so the outer query reads the columns it knows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from mvlattice.errors import SqlError


@dataclass(frozen=True, slots=True)
class Definition:
    sql: str
    columns: tuple[str, ...] | None = None  # stored output names, when they differ


def _parse(sql: str) -> exp.Expr:
    try:
        return sqlglot.parse_one(sql, read="spark")
    except sqlglot.errors.SqlglotError as exc:
        raise SqlError(f"SQL does not parse: {str(exc).splitlines()[0]}") from None


def _tables(tree: exp.Expr) -> list[exp.Table]:
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    return [t for t in tree.find_all(exp.Table) if t.db or t.name.lower() not in ctes]


def qualify_tables(sql: str, schema: str) -> str:
    """`sql` with every table that names no schema (and is no CTE) read from `schema`."""
    tree = _parse(sql)
    for table in _tables(tree):
        if not table.db:
            table.set("db", exp.to_identifier(schema))
    return tree.sql(dialect="spark")


def inline_tables(sql: str, schema: str, definitions: Mapping[str, Definition]) -> str:
    """`sql` (default schema `schema`) with each table whose `schema.table` (lower case) is a
    key of `definitions` read as `(<definition>) AS <its alias or name>`. SqlError when a
    definition's outputs cannot be renamed to its stored columns (a `*` among them)."""
    tree = _parse(sql)
    for table in _tables(tree):
        key = f"{table.db or schema}.{table.name}".lower()
        found = definitions.get(key)
        if found is None:
            continue
        inner = _parse(found.sql)
        if found.columns is not None:
            inner = _renamed(inner, found.columns)
        alias = table.alias or table.name
        table.replace(exp.Subquery(this=inner, alias=exp.TableAlias(this=exp.to_identifier(alias))))
    return tree.sql(dialect="spark")


def _renamed(tree: exp.Expr, columns: tuple[str, ...]) -> exp.Expr:
    if not isinstance(tree, exp.Select) or len(tree.expressions) != len(columns):
        raise SqlError("its outputs cannot be named as they are stored")
    if any(_is_star(e) for e in tree.expressions):
        raise SqlError("its outputs cannot be named as they are stored")
    items = [
        exp.alias_(e.unalias() if isinstance(e, exp.Alias) else e, name, quoted=True)
        for e, name in zip(tree.expressions, columns, strict=True)
    ]
    return tree.select(*items, append=False)


def _is_star(item: exp.Expr) -> bool:
    """`*` or `t.*` (a `COUNT(*)` is one output)."""
    return isinstance(item, exp.Star) or (
        isinstance(item, exp.Column) and isinstance(item.this, exp.Star)
    )
