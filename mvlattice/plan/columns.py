"""Which lattice columns the planner groups by (dimensions) and which it only aggregates.

A tile grouped by a measure column (FoodMart's `unit_sales`, a handful of values) answers
nothing a user asks; HRU96 with every column as a dimension builds such tiles. The rule:

- a column the lattice lists under `dimensions:` is a dimension; one under `measures:` is not;
- the argument of a measure (default or declared) is not;
- a plain column of the fact table (the lattice's root) is not, unless it is a key: a join
  column of the star or a column of a declared primary, unique or foreign key of the table
  (`customer_id`, a key into a table outside the lattice, is a dimension);
- every other column is: columns of dimension tables and derived columns (date parts, …).

The model has no column types, so "numeric fact column" is read as "fact column that is not a
key" — in a star schema those are the measures; a degenerate dimension on the fact table is
declared with `dimensions:`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mvlattice.lattice.lattice import Lattice

if TYPE_CHECKING:
    from mvlattice.model.loader import Model


@dataclass(frozen=True, slots=True)
class ColumnRoles:
    """Lattice labels the planner may group by, and those it never does unless asked."""

    dimensions: tuple[str, ...]
    measures: tuple[str, ...]


def fact_keys(model: Model | None, lattice: Lattice) -> frozenset[str]:
    """Labels of the root table's declared key and foreign-key columns (none without a model)."""
    if model is None:
        return frozenset()
    root = lattice.root
    table = model.table(root.schema, root.table)
    if table is None:
        return frozenset()
    names = {c.lower() for key in table.keys for c in key}
    names |= {c.lower() for fk in table.foreign_keys for c in fk.columns}
    return frozenset(
        c.label
        for c in lattice.columns
        if c.alias == root.alias and c.column is not None and c.column.lower() in names
    )


def column_roles(lattice: Lattice, keys: frozenset[str] = frozenset()) -> ColumnRoles:
    """Split the lattice's labels (see the module docstring); `keys`: from `fact_keys`."""
    root = lattice.root.alias
    joins = {
        c.label
        for edge in lattice.edges
        if edge.source == root
        for c in lattice.columns
        if c.alias == root and c.column in edge.source_columns
    }
    declared = (*lattice.default_measures, *(m for t in lattice.tiles for m in t.measures))
    measured = {a for m in declared for a in m.args} | set(lattice.measure_labels)
    plain_fact = {
        c.label
        for c in lattice.columns
        if c.alias == root and not c.derived and c.label not in joins | keys
    }
    dims, measures = [], []
    for c in lattice.columns:
        if c.label not in lattice.dimension_labels and c.label in measured | plain_fact:
            measures.append(c.label)
        else:
            dims.append(c.label)
    return ColumnRoles(tuple(dims), tuple(measures))
