"""Tile column names must not collide.

A tile stores dimension `label` as the column `column_name(label)` and each measure as its
stored columns (`measures.stored_columns`). Both mappings squash odd characters to `_`, so
'unit price' and 'unit_price', or a column labelled 'count' and the measure COUNT(*), would
become one tile column: the tile could not be built, or — worse — `tilesql.tile_columns` would
keep one of two different measures under a shared name and answer the other with its values.
The model refuses such lattices; relabelling a column with AS resolves it.
"""

from __future__ import annotations

from collections.abc import Iterable

from mvlattice.lattice.lattice import Measure
from mvlattice.lattice.measures import StoredColumn, column_name, stored_columns


def stored_name_clashes(labels: Iterable[str], measures: Iterable[Measure]) -> list[str]:
    """One message per tile column name claimed by two different things."""
    owners: dict[str, str] = {}
    computed: dict[str, StoredColumn] = {}
    messages: list[str] = []

    def claim(name: str, owner: str) -> None:
        if name in owners and owners[name] != owner:
            messages.append(
                f"{owners[name]} and {owner} would both be stored in tiles as column "
                f"'{name}'; give the column another label with AS"
            )
        owners.setdefault(name, owner)

    for label in labels:
        claim(column_name(label), f"column '{label}'")
    for measure in dict.fromkeys(measures):
        for stored in stored_columns(measure):
            # AVG(x) and SUM(x) share sum_x legitimately: the same stored column.
            if computed.get(stored.name, stored) != stored:
                claim(stored.name, f"measure {measure}")
                continue
            computed[stored.name] = stored
            claim(stored.name, _owner(stored))
    return messages


def _owner(stored: StoredColumn) -> str:
    """The stored column, named by what it computes (the same for AVG(x)'s and SUM(x)'s)."""
    inner = ", ".join(stored.args) or "*"
    return f"measure {stored.agg}({'DISTINCT ' if stored.distinct else ''}{inner})"
