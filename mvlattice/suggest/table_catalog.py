"""What the suggester knows about tables: names, columns, declared keys and foreign keys.

With a model the catalog is *closed*: a table the model does not declare is unknown, and its
columns come from the model (declared, or read off the table's Delta log). Without one it is
*open*: every table a query names exists, and its columns are learned from the log itself —
each column a query qualifies with the table's alias, or names in a block reading that table
alone. Spellings are the model's, else the first one seen; lookups ignore case.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from mvlattice.model.loader import ForeignKey, Model, Table, known_columns

TableKey = tuple[str, str]  # (schema, table), in the catalog's spelling


@dataclass(frozen=True, slots=True)
class TableInfo:
    schema: str
    name: str
    columns: tuple[str, ...] = ()
    keys: tuple[tuple[str, ...], ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    declared: bool = False  # from a model

    @property
    def key(self) -> TableKey:
        return (self.schema, self.name)

    def column(self, name: str) -> str | None:
        """The catalog's spelling of a column, or None when the table has no such column."""
        lowered = name.lower()
        return next((c for c in self.columns if c.lower() == lowered), None)


@dataclass(frozen=True, slots=True)
class Catalog:
    default_schema: str
    tables: Mapping[tuple[str, str], TableInfo] = field(default_factory=dict)
    closed: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "tables", MappingProxyType(dict(self.tables)))

    def table(self, schema: str | None, name: str) -> TableInfo | None:
        """The table a query names; None when a closed catalog does not have it."""
        found = self.tables.get(((schema or self.default_schema).lower(), name.lower()))
        if found is None and schema is None and self.closed:
            named = [t for (_, n), t in self.tables.items() if n == name.lower()]
            found = named[0] if len(named) == 1 else None
        if found is None and not self.closed:
            return TableInfo(schema or self.default_schema, name)
        return found

    def info(self, key: TableKey) -> TableInfo:
        found = self.table(*key)
        return found if found is not None else TableInfo(*key)


def open_catalog(default_schema: str) -> Catalog:
    return Catalog(default_schema)


ColumnsOf = Callable[[Table], tuple[str, ...] | None]


def model_catalog(model: Model, columns_of: ColumnsOf | None = None) -> Catalog:
    """A closed catalog of the model's tables; columns declared, else from the Delta log,
    else as read from the source when the model was loaded (`known_columns`)."""
    read = columns_of or known_columns
    tables = {}
    for t in model.tables:
        keys = t.keys
        tables[(t.schema.lower(), t.name.lower())] = TableInfo(
            t.schema, t.name, read(t) or (), keys, t.foreign_keys, declared=True
        )
    return Catalog(model.default_schema or "default", tables, closed=True)


def with_learned(catalog: Catalog, learned: Iterable[tuple[str, str, str]]) -> Catalog:
    """The catalog plus columns seen in the log, as (schema, table, column). Tables whose
    columns the catalog knows keep them; others get what the log shows, in order first seen."""
    tables = dict(catalog.tables)
    for schema, name, column in learned:
        key = (schema.lower(), name.lower())
        info = tables.get(key) or catalog.table(schema, name)
        if info is None or (info.declared and _known(catalog, key)):
            continue
        if info.column(column) is None:
            info = replace(info, columns=(*info.columns, column))
        tables[key] = info
    return replace(catalog, tables=tables)


def _known(catalog: Catalog, key: tuple[str, str]) -> bool:
    info = catalog.tables.get(key)
    return info is not None and bool(info.columns)
