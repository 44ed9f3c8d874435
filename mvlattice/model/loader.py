"""The model file: schemas, tables and their constraints, lattices, materializations.

The format is Calcite's JSON/YAML model (root `version`, `defaultSchema`, `schemas`; lattices
and materializations inside a schema) with our additions, listed in the README. Loading
reports every problem at once, each located by file and path inside the document.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mvlattice.delta.columns import delta_log_columns
from mvlattice.document import Problems, child, read_document, suggest
from mvlattice.lattice.lattice import Lattice
from mvlattice.model.fast_path import FastPath, parse_fast_path
from mvlattice.model.lattices import (
    Materialization,
    parse_lattices,
    parse_materializations,
    parse_vacuum,
)
from mvlattice.settings import join_location, resolve_warehouse, under
from mvlattice.sql.names import catalog_name_problem, path_name_problem, sql_name_problem

SCHEMA_TYPES = ("delta", "parquet", "csv", "catalog")


@dataclass(frozen=True, slots=True)
class ForeignKey:
    columns: tuple[str, ...]
    references: tuple[str, str]  # (schema, table)
    referenced_columns: tuple[str, ...]


@dataclass(kw_only=True, frozen=True, slots=True)
class Table:
    schema: str
    name: str
    location: str | None  # files of delta/parquet/csv tables; None for catalog tables
    format: str | None = None  # delta, parquet, csv; None for catalog tables
    declared_columns: tuple[str, ...] | None = None
    primary_key: tuple[str, ...] = ()
    unique_keys: tuple[tuple[str, ...], ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    not_null: tuple[str, ...] = ()
    options: tuple[tuple[str, str], ...] = ()
    doc_path: str = field(default="", compare=False)  # where it is declared, for messages
    catalog_name: str | None = None  # `database.table` in Spark's catalog, for catalog schemas
    # Clients of the service may read its old versions and change feed (`timeTravel: true`).
    time_travel: bool = False
    # Columns read from the source when loading (Spark's schema of CSV/Parquet files, of a
    # catalog table or a Delta log not readable here); None when declared or in a local log.
    source_columns: tuple[str, ...] | None = None

    @property
    def qualified_name(self) -> str:
        return f"{self.schema}.{self.name}"

    @property
    def keys(self) -> tuple[tuple[str, ...], ...]:
        """Every declared unique column set, the primary key first."""
        return ((self.primary_key,) if self.primary_key else ()) + self.unique_keys


@dataclass(frozen=True, slots=True)
class Schema:
    name: str
    type: str | None  # None: a schema that only holds lattices / materializations
    location: str | None = None
    database: str | None = None
    tables: tuple[Table, ...] = ()


@dataclass(frozen=True, slots=True)
class SparkSettings:
    master: str | None = None
    conf: tuple[tuple[str, str], ...] = ()


@dataclass(kw_only=True, frozen=True, slots=True)
class Model:
    file: str
    warehouse: str
    version: str
    default_schema: str | None
    schemas: tuple[Schema, ...]
    lattices: tuple[Lattice, ...] = ()
    materializations: tuple[Materialization, ...] = ()
    spark: SparkSettings = field(default_factory=SparkSettings)
    vacuum_retention_seconds: float | None = None  # root `vacuum: {retention}`: the default
    fast_path: FastPath = field(default_factory=FastPath)  # what the tile engine answers

    @property
    def tables(self) -> tuple[Table, ...]:
        return tuple(t for s in self.schemas for t in s.tables)

    def table(self, schema: str, name: str) -> Table | None:
        for t in self.tables:
            if t.schema.lower() == schema.lower() and t.name.lower() == name.lower():
                return t
        return None

    def lattice_tables(self, lattice_name: str) -> tuple[Table, ...]:
        """The tables a lattice reads (each once, in FROM order)."""
        seen: dict[str, Table] = {}
        for node in self.lattice(lattice_name).nodes:
            table = self.table(node.schema, node.table)
            if table is not None:
                seen.setdefault(table.qualified_name, table)
        return tuple(seen.values())

    def lattice(self, name: str) -> Lattice:
        from mvlattice.errors import NotFoundError

        for lat in self.lattices:
            if lat.name == name:
                return lat
        names = [lat.name for lat in self.lattices]
        raise NotFoundError(f"no lattice '{name}' in {self.file}" + suggest(name, names))

    def choose_lattice(self, name: str | None) -> Lattice:
        """The lattice named, else the only one; a user error when that is ambiguous."""
        from mvlattice.errors import NotFoundError, UsageError

        if name is not None:
            return self.lattice(name)
        if len(self.lattices) == 1:
            return self.lattices[0]
        if not self.lattices:
            raise NotFoundError(f"no lattices in {self.file}")
        names = ", ".join(lat.name for lat in self.lattices)
        raise UsageError(f"{self.file} has several lattices ({names}); name one with --lattice")


# (table) -> its columns, asked only when neither the model nor a local Delta log tells.
ColumnsFallback = Callable[[Table], tuple[str, ...] | None]


def load_model(
    path: str | Path, warehouse: str | None = None, columns_fallback: ColumnsFallback | None = None
) -> Model:
    """Read, validate and resolve a model file; raises ModelError listing every problem."""
    path = Path(path)
    doc = read_document(path)
    problems = Problems(str(path))
    root = problems.mapping(doc, "", "the model")
    problems.raise_if_any()
    assert root is not None
    problems.check_keys(root, "", ROOT_KEYS, required=("version",))
    warehouse = resolve_warehouse(warehouse or root.get("warehouse"))
    default_schema = _default_schema(root, problems)
    spark = _spark_settings(root.get("spark"), problems)
    schemas = _schemas(root.get("schemas", []), warehouse, problems)
    if default_schema and schemas and default_schema not in (s.name for s in schemas):
        problems.add(
            "defaultSchema",
            f"no schema named '{default_schema}'"
            + suggest(default_schema, (s.name for s in schemas)),
        )
    columns = _ColumnIndex(schemas, columns_fallback, problems)
    _check_constraints(schemas, columns, problems)
    lattices = parse_lattices(root, default_schema, columns, problems)
    materializations = parse_materializations(root, default_schema, columns, problems)
    schemas = columns.with_source_columns(schemas)
    retention = parse_vacuum(root, "", problems)
    fast_path = parse_fast_path(root, problems)
    problems.raise_if_any()
    return Model(
        file=str(path),
        warehouse=warehouse,
        version=str(root.get("version")),
        default_schema=default_schema,
        schemas=schemas,
        lattices=lattices,
        materializations=materializations,
        spark=spark,
        vacuum_retention_seconds=retention,
        fast_path=fast_path,
    )


ROOT_KEYS = (
    "version",
    "defaultSchema",
    "schemas",
    "lattices",
    "materializations",
    "spark",
    "warehouse",
    "vacuum",
    "fast_path",
)
SCHEMA_KEYS = ("name", "type", "location", "database", "tables", "lattices", "materializations")
TABLE_KEYS = (
    "name",
    "path",
    "columns",
    "primaryKey",
    "uniqueKeys",
    "foreignKeys",
    "notNull",
    "options",
    "timeTravel",
)


class _ColumnIndex:
    """Answers (schema, table) -> columns for the lattice builder, asking each table once."""

    def __init__(
        self, schemas: tuple[Schema, ...], fallback: ColumnsFallback | None, problems: Problems
    ) -> None:
        self.tables = {(t.schema.lower(), t.name.lower()): t for s in schemas for t in s.tables}
        self.catalog_schemas = {s.name.lower() for s in schemas if s.type == "catalog"}
        self.fallback = fallback
        self.problems = problems
        self.cache: dict[tuple[str, str], tuple[str, ...] | None] = {}
        self.from_source: dict[tuple[str, str], tuple[str, ...]] = {}  # what `fallback` read

    def __call__(self, schema: str, table: str) -> tuple[str, ...] | None:
        key = (schema.lower(), table.lower())
        if key not in self.cache:
            self.cache[key] = self._lookup(key)
        return self.cache[key]

    def table(self, schema: str, table: str) -> Table | None:
        return self.tables.get((schema.lower(), table.lower()))

    def _lookup(self, key: tuple[str, str]) -> tuple[str, ...] | None:
        table = self.tables.get(key)
        if table is None:
            return None
        found = known_columns(table)
        if found is not None or self.fallback is None:
            return found
        found = self.fallback(table)
        if found is not None:
            self.from_source[key] = found
        return found

    def with_source_columns(self, schemas: tuple[Schema, ...]) -> tuple[Schema, ...]:
        """`schemas` with every table's columns read from its source kept on the table, so
        that whoever reads the model later (the rewriter, the suggester) knows the columns of
        CSV, Parquet and catalog tables without asking Spark again."""
        if self.fallback is None:
            return schemas
        # Tables no lattice reads too (queries may join them), except Delta tables: those are
        # read from their logs when needed, and a missing one need not start Spark here.
        for t in (t for s in schemas for t in s.tables if t.format != "delta"):
            self(t.schema, t.name)
        return tuple(
            replace(s, tables=tuple(self._with_columns(t) for t in s.tables)) for s in schemas
        )

    def _with_columns(self, table: Table) -> Table:
        found = self.from_source.get((table.schema.lower(), table.name.lower()))
        return table if found is None else replace(table, source_columns=found)


def known_columns(table: Table) -> tuple[str, ...] | None:
    """A table's columns: declared, else from its local Delta log (read now: a Delta table's
    schema may have evolved since loading), else as read from its source when loading."""
    if table.declared_columns is not None:
        return table.declared_columns
    if table.location is not None:
        found = delta_log_columns(table.location)
        if found is not None:
            return found
    return table.source_columns


def _default_schema(root: Mapping[str, Any], problems: Problems) -> str | None:
    if "defaultSchema" not in root:
        return None
    return problems.string(root["defaultSchema"], "defaultSchema", "defaultSchema")


def _spark_settings(value: Any, problems: Problems) -> SparkSettings:
    if value is None:
        return SparkSettings()
    section = problems.mapping(value, "spark", "the spark section")
    if section is None:
        return SparkSettings()
    problems.check_keys(section, "spark", ("master", "conf"))
    master = problems.string(section["master"], "spark.master") if "master" in section else None
    conf: list[tuple[str, str]] = []
    raw = section.get("conf", {})
    if problems.mapping(raw, "spark.conf", "spark.conf") is not None:
        for k, v in raw.items():
            if isinstance(v, Mapping | list) or v is None:
                problems.add(f"spark.conf.{k}", "must be a string, number or boolean")
            else:
                conf.append((str(k), str(v).lower() if isinstance(v, bool) else str(v)))
    return SparkSettings(master, tuple(conf))


def _schemas(value: Any, warehouse: str, problems: Problems) -> tuple[Schema, ...]:
    if not isinstance(value, list):
        problems.add("schemas", "must be a list of schema elements")
        return ()
    out = []
    for i, item in enumerate(value):
        schema = _schema(item, child("schemas", i), warehouse, problems)
        if schema is not None:
            out.append(schema)
    names = [s.name.lower() for s in out]
    for name in {n for n in names if names.count(n) > 1}:
        problems.add("schemas", f"schema '{name}' is declared more than once")
    return tuple(out)


def _schema(item: Any, path: str, warehouse: str, problems: Problems) -> Schema | None:
    element = problems.mapping(item, path, "a schema")
    if element is None:
        return None
    problems.check_keys(element, path, SCHEMA_KEYS, required=("name",))
    name = problems.string(element.get("name"), child(path, "name"), "name")
    kind = element.get("type")
    if kind is not None and kind not in SCHEMA_TYPES:
        problems.add(
            child(path, "type"),
            f"unknown schema type '{kind}'; expected one of "
            f"{', '.join(SCHEMA_TYPES)}" + suggest(str(kind), SCHEMA_TYPES),
        )
        kind = None
    if name is None:
        return None
    location = _schema_location(element, kind, name, warehouse, path, problems)
    database = element.get("database", name) if kind == "catalog" else None
    # mvlattice registers the schema in Spark's catalog unless it IS a database there.
    own = kind == "catalog" and database == name
    reason = path_name_problem(name, dotted=False) if own else catalog_name_problem(name)
    _check_name(name, child(path, "name"), "schema name", problems, reason)
    tables = _tables(element.get("tables", []), name, kind, location, database, path, problems)
    if kind is None and tables:
        problems.add(
            child(path, "type"), f"a schema with tables needs a type ({', '.join(SCHEMA_TYPES)})"
        )
    return Schema(name, kind, location, database, tables)


def _schema_location(
    element: Mapping[str, Any],
    kind: str | None,
    name: str,
    warehouse: str,
    path: str,
    problems: Problems,
) -> str | None:
    if kind in (None, "catalog"):
        if "location" in element:
            problems.add(
                child(path, "location"), f"a {kind or 'table-less'} schema has no location"
            )
        return None
    raw = element.get("location", name)
    text = problems.string(raw, child(path, "location"), "location")
    return under(warehouse, text) if text else None


def _tables(
    value: Any,
    schema: str,
    kind: str | None,
    location: str | None,
    database: str | None,
    path: str,
    problems: Problems,
) -> tuple[Table, ...]:
    if not isinstance(value, list):
        problems.add(child(path, "tables"), "must be a list of table elements")
        return ()
    out = []
    for i, item in enumerate(value):
        table = _table(
            item, child(child(path, "tables"), i), schema, kind, location, database, problems
        )
        if table is not None:
            out.append(table)
    return tuple(out)


def _table(
    item: Any,
    path: str,
    schema: str,
    kind: str | None,
    location: str | None,
    database: str | None,
    problems: Problems,
) -> Table | None:
    element = problems.mapping(item, path, "a table")
    if element is None:
        return None
    problems.check_keys(element, path, TABLE_KEYS, required=("name",))
    name = problems.string(element.get("name"), child(path, "name"), "name")
    if name is None:
        return None
    where = None
    # Registered in Spark's catalog as schema.table, except the tables of a catalog schema
    # that is itself the database (they are read under the catalog's own names).
    registered = kind != "catalog" or database != schema
    reason = catalog_name_problem(name) if registered else sql_name_problem(name)
    _check_name(name, child(path, "name"), "table name", problems, reason)
    if kind in ("delta", "parquet", "csv"):
        raw = element.get("path")
        base = location or ""
        where = under(base, raw) if isinstance(raw, str) and raw else join_location(base, name)
    columns = None
    if "columns" in element:
        columns = _column_names(element["columns"], child(path, "columns"), problems)
    fks = _foreign_keys(
        element.get("foreignKeys", []), schema, child(path, "foreignKeys"), problems
    )
    unique = element.get("uniqueKeys", [])
    unique_keys: tuple[tuple[str, ...], ...] = ()
    if isinstance(unique, list):
        unique_keys = tuple(
            problems.string_list(u, child(child(path, "uniqueKeys"), i), "column")
            for i, u in enumerate(unique)
        )
    else:
        problems.add(child(path, "uniqueKeys"), "must be a list of column lists")
    options = element.get("options", {})
    if problems.mapping(options, child(path, "options"), "options") is None:
        options = {}
    time_travel = element.get("timeTravel", False)
    if not isinstance(time_travel, bool):
        problems.add(child(path, "timeTravel"), "must be true or false")
        time_travel = False
    table = Table(
        schema=schema,
        name=name,
        location=where,
        format=kind if kind != "catalog" else None,
        declared_columns=columns,
        primary_key=problems.string_list(
            element.get("primaryKey", []), child(path, "primaryKey"), "column"
        ),
        unique_keys=unique_keys,
        foreign_keys=fks,
        not_null=problems.string_list(element.get("notNull", []), child(path, "notNull"), "column"),
        options=tuple(
            (str(k), str(v).lower() if isinstance(v, bool) else str(v)) for k, v in options.items()
        ),
        doc_path=path,
        catalog_name=f"{database}.{name}" if kind == "catalog" else None,
        time_travel=time_travel,
    )
    return table


def _check_name(name: str, path: str, what: str, problems: Problems, reason: str | None) -> None:
    """Record `reason` (from `names`) as a problem with the name, when there is one."""
    if reason is not None:
        problems.add(path, f"{what} '{name}' {reason}")


def _column_names(value: Any, path: str, problems: Problems) -> tuple[str, ...]:
    if not isinstance(value, list):
        problems.add(path, "must be a list of column names (or {name: …} elements)")
        return ()
    out = []
    for i, item in enumerate(value):
        if isinstance(item, Mapping) and isinstance(item.get("name"), str):
            out.append(item["name"])
        else:
            text = problems.string(item, child(path, i), "column")
            if text:
                out.append(text)
    return tuple(out)


def _foreign_keys(value: Any, schema: str, path: str, problems: Problems) -> tuple[ForeignKey, ...]:
    if not isinstance(value, list):
        problems.add(path, "must be a list of foreign key elements")
        return ()
    out = []
    for i, item in enumerate(value):
        p = child(path, i)
        element = problems.mapping(item, p, "a foreign key")
        if element is None:
            continue
        problems.check_keys(
            element,
            p,
            ("columns", "references", "referencedColumns"),
            required=("columns", "references"),
        )
        cols = problems.string_list(element.get("columns", []), child(p, "columns"), "column")
        ref = problems.string(element.get("references"), child(p, "references"), "references")
        ref_cols = problems.string_list(
            element.get("referencedColumns", list(cols)), child(p, "referencedColumns"), "column"
        )
        if len(cols) != len(ref_cols):
            problems.add(p, "columns and referencedColumns must have the same length")
        if ref and cols:
            ref_schema, _, ref_table = ref.rpartition(".")
            out.append(ForeignKey(cols, (ref_schema or schema, ref_table), ref_cols))
    return tuple(out)


def _check_constraints(
    schemas: tuple[Schema, ...], columns: _ColumnIndex, problems: Problems
) -> None:
    """Key and foreign-key columns must exist; foreign keys must reference declared tables."""
    for table in (t for s in schemas for t in s.tables):
        known = columns(table.schema, table.name)
        if known is None:
            where = table.location or f"database '{table.schema}'"
            problems.add(
                table.doc_path,
                f"table '{table.qualified_name}' not found at {where} "
                "(no data there yet? `mvlattice datasets` loads the bundled data sets)",
            )
            continue
        _check_key_columns(table, known, problems)
        for i, fk in enumerate(table.foreign_keys):
            target = columns.table(*fk.references)
            path = child(child(table.doc_path, "foreignKeys"), i)
            if target is None:
                problems.add(
                    child(path, "references"),
                    "unknown table "
                    f"'{'.'.join(fk.references)}'"
                    + suggest(fk.references[1], (t.name for t in columns.tables.values())),
                )
                continue
            ref_known = columns(target.schema, target.name) or ()
            for col in fk.referenced_columns:
                if ref_known and col.lower() not in (k.lower() for k in ref_known):
                    problems.add(
                        child(path, "referencedColumns"),
                        f"unknown column '{col}' in "
                        f"table '{target.qualified_name}'" + suggest(col, ref_known),
                    )


def _check_key_columns(table: Table, known: tuple[str, ...], problems: Problems) -> None:
    path = table.doc_path
    named = [("primaryKey", c) for c in table.primary_key] + [
        ("notNull", c) for c in table.not_null
    ]
    named += [("uniqueKeys", c) for key in table.unique_keys for c in key]
    named += [("foreignKeys", c) for fk in table.foreign_keys for c in fk.columns]
    for where, col in named:
        if col.lower() not in (k.lower() for k in known):
            problems.add(
                child(path, where),
                f"unknown column '{col}' in table '{table.qualified_name}'" + suggest(col, known),
            )
