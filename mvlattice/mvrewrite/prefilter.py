"""Cheap necessary conditions checked before full matching (GL01 §4's filter conditions,
applied by a linear scan until the filter tree replaces it).

Each test only rejects a view that full matching would reject too (the reason given is one
that holds; full matching might have named another first); it avoids mapping tables and
building equivalence classes for views that plainly cannot answer the query:

- the view reads none of the query's tables (TABLES_NOT_CONTAINED);
- the query groups by a column of a table that both sides read once, the view does not
  group by that column, and the column takes part in no column equality on either side (so
  no other column can stand in for it) — MISSING_COLUMN, as output mapping would say. A
  view grouping by a cast of the column counts as grouping by it (`lossless_cast`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from mvlattice.mvrewrite.match import lossless_cast
from mvlattice.mvrewrite.match.attempt import MISSING_COLUMN, TABLES_NOT_CONTAINED, Rejection
from mvlattice.mvrewrite.views import View
from mvlattice.sql import ir
from mvlattice.sql.spjg import Spjg

TableColumn = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Summary:
    """What the filter conditions need from a block, computed once per block."""

    tables: Counter[str]
    key_columns: frozenset[TableColumn]  # grouping expressions that are plain columns
    equated: frozenset[TableColumn]  # columns in some column = column conjunct
    cast_keys: frozenset[TableColumn] = frozenset()  # columns a grouping CAST reads

    @staticmethod
    def of(block: Spjg) -> Summary:
        table_of = {t.rel: t.table for t in block.tables}

        def named(column: ir.Column) -> TableColumn:
            return (table_of.get(column.rel, ""), column.name)

        keys = frozenset(named(k) for k in block.keys if isinstance(k, ir.Column))
        casts = (lossless_cast.cast_operand(k) for k in block.keys)
        cast_keys = frozenset(named(c[0]) for c in casts if c is not None)
        equated = frozenset(
            named(side)
            for c in block.conjuncts
            if isinstance(c, ir.Compare) and c.op == "="
            for side in (c.left, c.right)
            if isinstance(side, ir.Column)
            and isinstance(c.left, ir.Column)
            and isinstance(c.right, ir.Column)
        )
        return Summary(Counter(table_of.values()), keys, equated, cast_keys)


def reject(query: Summary, view: View, summary: Summary | None) -> Rejection | None:
    """A rejection if `view` certainly cannot answer the query, else None (match it)."""
    if summary is None or view.block is None:
        return None
    if not set(query.tables) & set(summary.tables):
        return Rejection(
            TABLES_NOT_CONTAINED,
            f"the view reads {', '.join(sorted(summary.tables))}; the query reads "
            f"{', '.join(sorted(query.tables))}",
        )
    if view.block.grouped:
        return _missing_key(query, view, summary)
    return None


def _missing_key(query: Summary, view: View, summary: Summary) -> Rejection | None:
    for table, column in sorted(query.key_columns - summary.key_columns - summary.cast_keys):
        if query.tables[table] != 1 or summary.tables[table] != 1:
            continue
        if (table, column) in query.equated or (table, column) in summary.equated:
            continue
        hint = ""
        label = view.label(table, column)
        if view.kind == "tile" and label is not None:
            hint = f" (add dimension '{label}' to a tile of lattice '{view.lattice}')"
        return Rejection(
            MISSING_COLUMN,
            f"the query groups by {table}.{column}, which the view does not output as a "
            f"grouping column{hint}",
        )
    return None
