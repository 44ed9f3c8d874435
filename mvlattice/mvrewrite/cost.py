"""Choosing between rewrites: fewest rows read, deterministically.

Rows read is the view's row count when known (the tile catalog records it), else a guess from
its shape: a grouped view with k grouping columns ~ 10^k rows, a view of rows ~ a base table.
A union rewrite also reads the base tables; each table joined back costs another pass.
"""

from __future__ import annotations

from mvlattice.mvrewrite.match.attempt import Attempt
from mvlattice.mvrewrite.views import View

BASE_ROWS = 1e9  # what a scan of base tables is assumed to read


def rows_read(attempt: Attempt) -> float:
    rows = view_rows(attempt.view)
    if attempt.union is not None:
        rows += BASE_ROWS
    return rows * (1 + len(attempt.join_back))


def view_rows(view: View) -> float:
    if view.row_count is not None:
        return view.row_count
    block = view.block
    if block is None or not block.grouped:
        return BASE_ROWS
    return float(10 ** min(len(block.keys), 9))


def order_key(attempt: Attempt) -> tuple[float, int, int, str]:
    """Cheapest first; then no re-aggregation, fewer compensations, and the view's name."""
    return (rows_read(attempt), int(attempt.aggregate), len(attempt.filters), attempt.view.name)
