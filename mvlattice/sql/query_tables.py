"""A declared materialization's SQL: the model tables it reads, and the same SQL with each
Delta table pinned to a version (`VERSION AS OF n`) so the result matches recorded versions."""

from __future__ import annotations

import functools
from collections.abc import Mapping

import sqlglot
from sqlglot import exp

from mvlattice.errors import SqlError


def _parse(sql: str) -> exp.Expr:
    try:
        return sqlglot.parse_one(sql, read="spark")
    except sqlglot.errors.SqlglotError as exc:
        raise SqlError(f"SQL does not parse: {str(exc).splitlines()[0]}") from None


def _tables(tree: exp.Expr, schema: str) -> list[tuple[exp.Table, str]]:
    """Every table reference that is not a CTE, with its `schema.table` key (lower case)."""
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    found = []
    for table in tree.find_all(exp.Table):
        if not table.db and table.name.lower() in ctes:
            continue
        found.append((table, f"{table.db or schema}.{table.name}".lower()))
    return found


@functools.lru_cache(maxsize=1024)  # freshness asks it of materializations on every query
def query_tables(sql: str, schema: str) -> tuple[str, ...]:
    """`schema.table` (lower case) of every table the query reads, each once."""
    return tuple(dict.fromkeys(key for _, key in _tables(_parse(sql), schema)))


def pin_versions(sql: str, schema: str, versions: Mapping[str, int | None]) -> str:
    """The query with every table whose key has a Delta version read `VERSION AS OF` it."""
    tree = _parse(sql)
    wanted = {k.lower(): v for k, v in versions.items()}
    for table, key in _tables(tree, schema):
        version = wanted.get(key)
        if version is not None:
            table.set(
                "version",
                exp.Version(this="VERSION", kind="AS OF", expression=exp.Literal.number(version)),
            )
    return tree.sql(dialect="spark")
