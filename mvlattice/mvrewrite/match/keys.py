"""Facts about tables the rewriter may rely on: unique keys, foreign keys, NOT NULL columns,
and column types where known (they decide the precision of an AVG rebuilt from SUM / COUNT).

They come from the model's declarations (primaryKey, uniqueKeys, foreignKeys, notNull) and from
every lattice edge, which asserts a non-NULL foreign key to a unique key (Calcite relies on the
same; `mvlattice validate --data` checks it). Names are lower case, as qualified SQL has them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from mvlattice.model.constraints import ForeignKeyCheck, NotNullCheck, UniqueKey, constraints
from mvlattice.model.loader import Model


@dataclass(frozen=True, slots=True)
class ForeignKey:
    table: str
    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]
    lattice_edge: bool  # lattice edges assert the foreign key columns are never NULL


def _empty() -> Mapping:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Keys:
    unique: Mapping[str, tuple[frozenset[str], ...]] = field(default_factory=_empty)
    foreign: tuple[ForeignKey, ...] = ()
    not_null: Mapping[str, frozenset[str]] = field(default_factory=_empty)
    types: Mapping[tuple[str, str], str] = field(default_factory=_empty)  # (table, col) -> type

    def type_of(self, table: str, column: str) -> str | None:
        return self.types.get((table, column))

    def is_unique(self, table: str, columns: frozenset[str]) -> bool:
        """Whether `columns` contain a unique key of `table` (at most one row per value)."""
        return any(key <= columns for key in self.unique.get(table, ()))

    def never_null(self, fk: ForeignKey) -> bool:
        declared = self.not_null.get(fk.table, frozenset())
        return fk.lattice_edge or all(c in declared for c in fk.columns)

    def references(self, table: str, ref_table: str) -> tuple[ForeignKey, ...]:
        return tuple(f for f in self.foreign if f.table == table and f.ref_table == ref_table)


def keys_of(model: Model, types: Mapping[tuple[str, str], str] | None = None) -> Keys:
    """`types`: (schema.table, column) -> Spark SQL type, where known."""
    unique: dict[str, list[frozenset[str]]] = {}
    foreign: list[ForeignKey] = []
    not_null: dict[str, set[str]] = {}
    for item in constraints(model):
        if isinstance(item, UniqueKey):
            unique.setdefault(_table(item.schema, item.table), []).append(_cols(item.columns))
        elif isinstance(item, ForeignKeyCheck):
            foreign.append(_foreign_key(item))
        elif isinstance(item, NotNullCheck):
            not_null.setdefault(_table(item.schema, item.table), set()).add(item.column.lower())
    for table in model.tables:  # a primary key is never NULL
        name = _table(table.schema, table.name)
        not_null.setdefault(name, set()).update(c.lower() for c in table.primary_key)
    return Keys(
        MappingProxyType({t: tuple(ks) for t, ks in unique.items()}),
        tuple(foreign),
        MappingProxyType({t: frozenset(cs) for t, cs in not_null.items()}),
        MappingProxyType(
            {(t.lower(), c.lower()): normal_type(v) for (t, c), v in (types or {}).items()}
        ),
    )


TYPE_ALIASES = {"integer": "int", "long": "bigint", "short": "smallint", "byte": "tinyint"}


def normal_type(text: str) -> str:
    """Spark's type names as DDL spells them: int, bigint, decimal(18,2), …"""
    name = text.strip().lower().replace(" ", "")
    return TYPE_ALIASES.get(name, name)


def _foreign_key(item: ForeignKeyCheck) -> ForeignKey:
    return ForeignKey(
        _table(item.schema, item.table),
        tuple(c.lower() for c in item.columns),
        _table(item.ref_schema, item.ref_table),
        tuple(c.lower() for c in item.ref_columns),
        item.origin.startswith("lattice"),
    )


def _table(schema: str, table: str) -> str:
    return f"{schema}.{table}".lower()


def _cols(columns: tuple[str, ...]) -> frozenset[str]:
    return frozenset(c.lower() for c in columns)
