"""The constraints a model declares and its lattices imply, as checkable values.

A lattice edge A -> B says: B's key columns are unique in B, and every value of A's foreign key
exists in B (Calcite relies on both and never checks them; `validate --data` does).
"""

from __future__ import annotations

from dataclasses import dataclass

from mvlattice.model.loader import Model


@dataclass(frozen=True, slots=True)
class UniqueKey:
    schema: str
    table: str
    columns: tuple[str, ...]
    origin: str  # e.g. "lattice star: edge s -> p" or "primaryKey"


@dataclass(frozen=True, slots=True)
class ForeignKeyCheck:
    schema: str
    table: str
    columns: tuple[str, ...]
    ref_schema: str
    ref_table: str
    ref_columns: tuple[str, ...]
    origin: str


@dataclass(frozen=True, slots=True)
class NotNullCheck:
    schema: str
    table: str
    column: str
    origin: str


Constraint = UniqueKey | ForeignKeyCheck | NotNullCheck


def constraints(model: Model) -> tuple[Constraint, ...]:
    """Every distinct constraint to check, implied ones first, each once."""
    found: dict[tuple, Constraint] = {}
    for lattice in model.lattices:
        for edge in lattice.edges:
            source, target = lattice.node(edge.source), lattice.node(edge.target)
            origin = f"lattice {lattice.name}: join {edge.source} -> {edge.target}"
            _add(found, UniqueKey(target.schema, target.table, edge.target_columns, origin))
            _add(
                found,
                ForeignKeyCheck(
                    source.schema,
                    source.table,
                    edge.source_columns,
                    target.schema,
                    target.table,
                    edge.target_columns,
                    origin,
                ),
            )
    for table in model.tables:
        for key in table.keys:
            _add(found, UniqueKey(table.schema, table.name, key, "declared key"))
        for fk in table.foreign_keys:
            _add(
                found,
                ForeignKeyCheck(
                    table.schema,
                    table.name,
                    fk.columns,
                    *fk.references,
                    fk.referenced_columns,
                    "declared foreign key",
                ),
            )
        for column in table.not_null:
            _add(found, NotNullCheck(table.schema, table.name, column, "declared notNull"))
    return tuple(found.values())


def _add(found: dict[tuple, Constraint], item: Constraint) -> None:
    key = _identity(item)
    found.setdefault(key, item)


def _identity(item: Constraint) -> tuple:
    if isinstance(item, UniqueKey):
        return (
            "unique",
            item.schema.lower(),
            item.table.lower(),
            tuple(sorted(c.lower() for c in item.columns)),
        )
    if isinstance(item, ForeignKeyCheck):
        return (
            "fk",
            item.schema.lower(),
            item.table.lower(),
            tuple(c.lower() for c in item.columns),
            item.ref_schema.lower(),
            item.ref_table.lower(),
            tuple(c.lower() for c in item.ref_columns),
        )
    return ("notnull", item.schema.lower(), item.table.lower(), item.column.lower())
