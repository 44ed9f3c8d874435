"""What the rewritten FROM clause offers: view outputs and the columns of joined-back tables.

GL01 §3.1.3: a compensating predicate or an output expression can be computed from the view
when it is a view output, or is built from view outputs (columns matched through the query's
equivalence classes), or uses columns of tables joined back to the view.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from mvlattice.sql import ir
from mvlattice.sql.canon import Classes, canonical


@dataclass(frozen=True, slots=True)
class Available:
    classes: Classes  # the query's
    exact: Mapping[ir.Expr, ir.Expr]  # view output expression (query space) -> view column
    canonical: Mapping[ir.Expr, ir.Expr]  # the same, keyed by canonical form
    open_rels: frozenset[str]  # joined-back tables: their columns are read directly

    def express(self, expr: ir.Expr) -> ir.Expr | None:
        """`expr` over the rewritten FROM, or None if some part of it is not available."""
        found = self._lookup(expr)
        if found is not None:
            return found
        if isinstance(expr, ir.Column | ir.Agg):
            return None
        missing: list[ir.Expr] = []

        def child(node: ir.Expr) -> ir.Expr:
            out = self.express(node)
            if out is None:
                missing.append(node)
                return node
            return out

        rebuilt = ir.map_children(expr, child)
        return None if missing else rebuilt

    def express_part(self, part: tuple[ir.Column, ...]) -> ir.Expr | None:
        """Some column of `part` (columns the view holds equal), read from the view."""
        for column in part:
            if column.rel in self.open_rels:
                return column
            found = self.exact.get(column)
            if found is not None:
                return found
        return None

    def missing(self, expr: ir.Expr) -> ir.Column | None:
        """The first column of `expr` that cannot be read (for messages)."""
        for node in ir.walk(expr):
            if isinstance(node, ir.Column) and self.express(node) is None:
                return node
        return None

    def _lookup(self, expr: ir.Expr) -> ir.Expr | None:
        if isinstance(expr, ir.Literal):
            return expr
        if isinstance(expr, ir.Column) and expr.rel in self.open_rels:
            return expr
        found = self.exact.get(expr)
        if found is None:
            found = self.canonical.get(canonical(expr, self.classes))
        if found is None and isinstance(expr, ir.Column):
            found = next((m for m in self.classes.members(expr) if m.rel in self.open_rels), None)
        return found


def index(
    outputs: Mapping[ir.Expr, ir.Expr], classes: Classes, open_rels: frozenset[str]
) -> Available:
    """`outputs`: query-space view output expressions -> columns of the view scan."""
    canonical_index: dict[ir.Expr, ir.Expr] = {}
    for expr, column in outputs.items():
        canonical_index.setdefault(canonical(expr, classes), column)
    return Available(classes, dict(outputs), canonical_index, open_rels)
