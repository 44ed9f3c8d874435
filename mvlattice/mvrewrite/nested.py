"""The views of materializations, those that read other materializations included.

Each materialization's table is a table queries may name (`schema.table`, columns as stored), so
a materialization read by another one (its *inner*) is compiled first and its table joins the
schema the *outer* is compiled with. An outer gives up to two views, both stored in its table:

- its definition with each inner inlined as a derived table (`sql.inline`), so it is over base
  tables and answers queries over them when it is SPJG after inlining (an aggregate over an
  aggregate is not: then there is no such view);
- its SQL as written, over the inner's table, which answers queries that name the inner table.

Either is read only while the outer is fresh and so are its inners (`jobs.nested`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from mvlattice.errors import MvlatticeError
from mvlattice.model.loader import Materialization
from mvlattice.model.nesting import dependency_order
from mvlattice.mvrewrite.views import Compile, View, materialization_view
from mvlattice.sql.inline import Definition, inline_tables, qualify_tables
from mvlattice.sql.query_tables import query_tables

TableColumns = dict[str, dict[str, tuple[str, ...]]]  # schema -> table -> columns (lower case)


def materialization_views(
    items: Iterable[Materialization],
    declared: Iterable[Materialization],
    tables: TableColumns,
    compiler: Callable[[TableColumns], Compile],
) -> list[View]:
    """The views of `items`, in their order. `declared`: every materialization of the model
    (an item's inner ones may be among them only); `tables` gains each one's table, in place;
    `compiler(tables)` compiles against tables as they are then."""
    items = list(items)
    pool: dict[str, Materialization] = {m.key: m for m in declared}
    pool.update({m.key: m for m in items})
    reads = {key: _reads(m, pool) for key, m in pool.items()}
    try:
        order = dependency_order(reads)
    except ValueError:  # a cycle (refused by the model): nothing is nested
        reads = {key: () for key in pool}
        order = tuple(pool)
    definitions: dict[str, Definition] = {}
    views: dict[str, list[View]] = {}
    compile_block: Compile | None = None
    for key in order:
        m = pool[key]
        if compile_block is None or reads[key]:  # an inner's table must be known by now
            compile_block = compiler(tables)
        written = materialization_view(m, compile_block)
        found = [written]
        sql = m.sql
        if reads[key]:
            inlined = _inlined(m, definitions)
            expanded = None if inlined is None else materialization_view(m, compile_block, inlined)
            if expanded is not None and expanded.block is not None:
                found.insert(0, expanded)
                sql = inlined or m.sql
        views[key] = found
        block = written.block or found[0].block
        if block is not None:
            names = tuple(o.name for o in block.outputs)  # as stored
            by_table = tables.setdefault(m.schema.lower(), {})
            by_table.setdefault(m.table.lower(), tuple(n.lower() for n in names))
            columns = names if written.renamed else None
            definitions[key] = Definition(qualify_tables(sql, m.schema), columns)
    return [v for m in items for v in views.get(m.key, ())]


def _reads(m: Materialization, pool: Mapping[str, Materialization]) -> tuple[str, ...]:
    """The materializations of `pool` that `m` reads (from its SQL: golden cases build
    Materialization values without the model's `reads`)."""
    try:
        keys = query_tables(m.sql, m.schema)
    except MvlatticeError:
        return ()
    return tuple(k for k in keys if k in pool and k != m.key)


def _inlined(m: Materialization, definitions: Mapping[str, Definition]) -> str | None:
    try:
        return inline_tables(m.sql, m.schema, definitions)
    except MvlatticeError:
        return None
