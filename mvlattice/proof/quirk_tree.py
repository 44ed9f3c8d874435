"""The tree helpers the quirks of `proof.rejected` share: a template query parsed, its main
block, its grouping columns, names quoted as another dialect quotes them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlglot import exp

from mvlattice.sql.parse import DIALECT


@dataclass(frozen=True, slots=True)
class Template:
    """An answerable query, parsed, and what the quirks need to know about it."""

    tree: exp.Query
    columns: frozenset[str]  # every column name of the tables it may read (lower case)

    def copy(self) -> exp.Query:
        return self.tree.copy()

    @property
    def select(self) -> exp.Select | None:
        found = self.tree if isinstance(self.tree, exp.Select) else self.tree.find(exp.Select)
        return found if isinstance(found, exp.Select) else None


# A quirk: the template changed into a near miss, or None when it does not apply.
Quirk = Callable[[Template], str | None]


def spark_sql(tree: exp.Expr) -> str:
    return tree.sql(dialect=DIALECT)


def outer(tree: exp.Query) -> exp.Select | None:
    """The SELECT that holds the query's GROUP BY (the template's main block)."""
    for select in tree.find_all(exp.Select):
        if select.args.get("group") is not None or select.find(exp.AggFunc) is not None:
            return select
    return None


def first(tree: exp.Expr, kind: type[exp.Expr]) -> exp.Expr | None:
    found = tree.find(kind)
    return found if isinstance(found, kind) else None


def grouped(select: exp.Select) -> list[exp.Column]:
    group = select.args.get("group")
    items = group.expressions if group is not None else []
    return [c for c in items if isinstance(c, exp.Column)]


def raw(name: str, left: str, right: str = "") -> exp.Var:
    """A name printed exactly as given (another dialect's quoting)."""
    return exp.Var(this=f"{left}{name}{right or left}")


def quote_parts(
    nodes: Sequence[exp.Expr], keys: tuple[str, ...], left: str, right: str = ""
) -> None:
    for node in nodes:
        for key in keys:
            part = node.args.get(key)
            if isinstance(part, exp.Identifier):
                node.set(key, raw(part.name, left, right))


def misspelled(name: str, taken: frozenset[str]) -> str:
    candidate = name[:-1] if len(name) > 3 else name + "x"
    return candidate if candidate.lower() not in taken else name + "_x"


def recast(query: Template, write: Callable[[str], str]) -> str | None:
    tree = query.copy()
    select = outer(tree)
    if select is None or not grouped(select):
        return None
    target = grouped(select)[0]
    for column in select.expressions:
        inner = column.this if isinstance(column, exp.Alias) else column
        if isinstance(inner, exp.Column) and inner == target:
            inner.replace(exp.Var(this=write(spark_sql(inner))))
            return spark_sql(tree)
    return None


def with_condition(query: Template, write: Callable[[str], str]) -> str | None:
    """`write(column)` ANDed to the main block's WHERE, over its first grouping column."""
    tree = query.copy()
    select = outer(tree)
    if select is None or not grouped(select):
        return None
    condition = exp.Var(this=write(spark_sql(grouped(select)[0])))
    select.where(condition, append=True, copy=False)
    return spark_sql(tree)


def extra_output(
    query: Template, write: Callable[[str], str], group_too: bool = False
) -> str | None:
    """One more output, `write(column)` over the main block's first grouping column; grouped
    by it too when `group_too` (so that only the function itself is wrong)."""
    tree = query.copy()
    select = outer(tree)
    if select is None or not grouped(select):
        return None
    column = spark_sql(grouped(select)[0])
    output = exp.Var(this=write(column))
    select.select(exp.alias_(output, "extra"), copy=False)
    if group_too:
        select.group_by(exp.Var(this=write(column)), copy=False)
    return spark_sql(tree)
