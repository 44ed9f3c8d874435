"""Statistics when there is no data to count: a documented guess shaped like a typical star.

Used when the log comes without a model (or its data cannot be read). With R the lattice's
`rowCountEstimate` (ROWS_WHEN_UNKNOWN unless the model says otherwise):

- a table k joins away from the fact has about R^(1/(k+1)) rows: the fact R, a dimension
  √R, a dimension of a dimension ∛R (each step of a snowflake arm coarsens the grain);
- a join key of a table (the columns its parent joins on, and the parent's copy of them) has
  as many values as the table has rows;
- any other column has the square root of its table's rows;
- sets of columns combine by independence (Cardenas), as `DictStatisticProvider` estimates.

Only the *ordering* this gives matters to HRU96 (finer arms and more columns make bigger
tiles); the absolute numbers are guesses and the output says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from mvlattice.lattice.lattice import Lattice
from mvlattice.statistics.dict_provider import DictStatisticProvider

ROWS_WHEN_UNKNOWN = 1_000_000.0

DESCRIPTION = (
    "no data: a guess from rowCountEstimate (a table k joins from the fact has R^(1/(k+1)) "
    "rows, a non-key column the square root of its table's rows)"
)


def heuristic_statistics(lattice: Lattice, rows: float | None = None) -> DictStatisticProvider:
    total = max(1.0, float(rows if rows is not None else lattice.row_count_estimate))
    depth = _depths(lattice)
    table_rows = {alias: total ** (1.0 / (d + 1)) for alias, d in depth.items()}
    keys = _key_columns(lattice)
    counts: dict[Iterable[str] | str, float] = {}  # the provider's key type (Mapping: invariant)
    for column in lattice.columns:
        if column.alias is None:
            continue  # derived columns: left to the estimator (rows)
        if (column.alias, column.column) in keys:
            value = table_rows[keys[(column.alias, column.column)]]
        else:
            value = math.sqrt(table_rows[column.alias])
        counts[(column.label,)] = max(1.0, round(value))
    return DictStatisticProvider(int(total), counts)


def _depths(lattice: Lattice) -> dict[str, int]:
    parent = {n.alias: n.parent for n in lattice.nodes}
    out = {}
    for alias in parent:
        d, at = 0, parent[alias]
        while at is not None:
            d, at = d + 1, parent[at]
        out[alias] = d
    return out


def _key_columns(lattice: Lattice) -> dict[tuple[str, str | None], str]:
    """(alias, column) of join keys -> the alias of the table whose key it is."""
    out: dict[tuple[str, str | None], str] = {}
    for edge in lattice.edges:
        for source, target in zip(edge.source_columns, edge.target_columns, strict=True):
            out[(edge.target, target)] = edge.target
            out.setdefault((edge.source, source), edge.target)
    return out
