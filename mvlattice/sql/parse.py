"""Parsing and qualifying SQL with sqlglot (Spark dialect) against the model's tables."""

from __future__ import annotations

from collections.abc import Mapping

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.schema import MappingSchema

from mvlattice.errors import SqlError, UsageError, first_line
from mvlattice.sql.from_sql_expr import unsupported

DIALECT = "spark"
UNKNOWN_TYPE = "UNKNOWN"  # qualification needs names only; the matcher never trusts types

# db -> table -> column names
TableColumns = Mapping[str, Mapping[str, tuple[str, ...]]]


def schema_of(tables: TableColumns) -> MappingSchema:
    """The sqlglot schema for qualification, built once per model."""
    mapping: dict[str, object] = {
        db: {table: {c: UNKNOWN_TYPE for c in cols} for table, cols in by_table.items()}
        for db, by_table in tables.items()
    }
    return MappingSchema(mapping, dialect=DIALECT)


def parse_statements(sql: str, dialect: str | None = DIALECT) -> tuple[exp.Expr, ...]:
    """The statements of `sql` in `dialect`, leniently: sqlglot errors propagate, for callers
    (the suggester reading a log) that count them rather than refuse the request."""
    return tuple(t for t in sqlglot.parse(sql, read=dialect) if t is not None)


def parse_query(sql: str) -> exp.Query:
    """One SELECT / WITH / set-operation statement; anything else is a usage error."""
    try:
        statements = [s for s in sqlglot.parse(sql, read=DIALECT) if s is not None]
    except SqlglotError as exc:
        raise SqlError(f"SQL does not parse: {first_line(exc)}") from None
    except (AttributeError, TypeError, ValueError, IndexError, KeyError, RecursionError) as exc:
        # sqlglot itself trips over some malformed text; to the user that is still bad SQL
        raise SqlError(f"SQL does not parse: {first_line(exc)}") from None
    if len(statements) != 1:
        raise UsageError(f"expected one SQL statement, got {len(statements)}")
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        raise UsageError(
            f"only queries (SELECT or WITH … SELECT) can be rewritten, not {tree.key.upper()}"
        )
    return tree


def qualify_query(tree: exp.Query, schema: MappingSchema, default_db: str | None) -> exp.Query:
    """`tree` qualified in place: aliased tables, qualified columns, expanded stars, named
    outputs (sqlglot lower-cases names; `output_names` keeps the query's own spelling)."""
    if tree.find(exp.Aliases) is not None:
        # `f(x) AS (a, b)` (or `COUNT(x) (x)`): its rewrite would not parse (found by fuzzing)
        raise unsupported("an output with a list of aliases is not rewritten")
    for select in list(tree.find_all(exp.Select)):
        _name_outputs(select)
    try:
        qualified = qualify(
            tree,
            dialect=DIALECT,
            db=default_db,
            schema=schema,
            validate_qualify_columns=True,
            identify=True,
        )
    except SqlglotError as exc:
        message = f"the query could not be resolved against the model: {first_line(exc)}"
        raise unsupported(message) from None
    except (AttributeError, TypeError, ValueError, IndexError, KeyError) as exc:
        # sqlglot's qualifier crashes on a few trees its parser accepts (`db...table`, found
        # by fuzzing): such a query is left as written, with the reason
        message = f"the query could not be resolved against the model: {first_line(exc)}"
        raise unsupported(message) from None
    _check_tables(qualified, schema)
    return qualified


def _check_tables(tree: exp.Query, schema: MappingSchema) -> None:
    """Columns of a table outside the model are unknown, so sqlglot may resolve a name that
    Spark finds ambiguous (or in the other table): such a statement is left as written."""
    ctes = {cte.alias_or_name for cte in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        if not table.db and table.name in ctes:
            continue
        if schema.find(table, raise_on_missing=False) is None:
            raise unsupported(
                f"table {table.sql(dialect=DIALECT)} is not in the model, so its columns are "
                "unknown"
            )


def output_names(tree: exp.Query) -> tuple[str, ...] | None:
    """The statement's output names as written (None when a star hides them)."""
    select = first_select(tree)
    if select is None or any(item.is_star for item in select.expressions):
        return None
    return tuple(
        item.output_name if isinstance(item, exp.Alias | exp.Column) else spark_output_name(item)
        for item in select.expressions
    )


def first_select(tree: exp.Expr) -> exp.Select | None:
    """The SELECT whose outputs name the statement's columns (a set operation's first)."""
    while isinstance(tree, exp.SetOperation | exp.Subquery):
        tree = tree.this
    return tree if isinstance(tree, exp.Select) else None


def rename_outputs(tree: exp.Query, names: tuple[str, ...]) -> None:
    """Give the statement's outputs `names` (same count), e.g. back their original case."""
    select = first_select(tree)
    if select is None or len(select.expressions) != len(names):
        return
    for item, name in zip(select.expressions, names, strict=True):
        if isinstance(item, exp.Alias):
            item.set("alias", exp.Identifier(this=name, quoted=True))


def _name_outputs(select: exp.Select) -> None:
    """Give unnamed outputs the name Spark gives them (sum(salary), count(1), …)."""
    for i, item in enumerate(select.expressions):
        if isinstance(item, exp.Alias | exp.Column | exp.Star) or item.is_star:
            continue
        select.expressions[i] = exp.alias_(item, spark_output_name(item), quoted=True)


def spark_output_name(node: exp.Expr) -> str:
    """Spark's automatic name for an unnamed output, as far as it can be told from the SQL:
    qualifiers dropped, functions in lower case, COUNT(*) as count(1), string literals without
    quotes, operators in parentheses: `sum(salary)`, `(x + 1)`, `count(DISTINCT x)`."""
    copy = node.copy()
    while isinstance(copy, exp.Paren):  # Spark's tree has no parentheses: `(CAST(x AS T))`
        copy = copy.this  # is named `x`, `((x + 1))` `(x + 1)`
    if isinstance(copy, exp.Cast | exp.TryCast) and isinstance(copy.this, exp.Column):
        return copy.this.name
    if isinstance(copy, exp.Literal):
        return copy.name
    for column in list(copy.find_all(exp.Column)):
        for part in ("table", "db", "catalog"):
            column.set(part, None)
    for literal in list(copy.find_all(exp.Literal)):
        if literal.is_string:  # exp.var refuses '' (concat(x, '') crashed): build it
            literal.replace(exp.Var(this=literal.name))
    for operation in list(copy.find_all(exp.Binary, exp.Not, exp.Neg, exp.In)):
        if operation is not copy and not isinstance(operation.parent, exp.Paren):
            operation.replace(exp.Paren(this=operation.copy()))
    text = copy.sql(dialect=DIALECT, normalize_functions="lower", identify=False)
    text = text.replace("count(*)", "count(1)")
    if isinstance(copy, exp.Binary | exp.Not | exp.Neg | exp.In):
        text = f"({text})"
    return text
