"""The source tables of a target, their current identities, and how to read them pinned.

A source's identity (Delta version and table id, a Parquet/CSV file-listing fingerprint, a
catalog table's version) is `delta.sources.source_versions`: the same one the statistics cache
keys on. A tile over an unknown version is never fresh; a source whose log cannot be read is
reported as unreadable (stale with its reason; a build fails naming it), never taken for absent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mvlattice.delta import log as deltalog
from mvlattice.delta.sources import quoted, source_versions
from mvlattice.errors import TableUnreadable
from mvlattice.jobs.naming import materialization_location
from mvlattice.jobs.record import Snapshot, TableId, Version
from mvlattice.jobs.targets import Target
from mvlattice.jobs.tilesql import q, table_relation
from mvlattice.model.loader import Table
from mvlattice.sql.query_tables import query_tables

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from mvlattice.lattice.lattice import Lattice
    from mvlattice.model.loader import Model


def target_sources(
    model: Model, target: Target, warehouse: str | None = None
) -> tuple[tuple[Table, ...], tuple[str, ...]]:
    """The model tables a target reads, and names it reads that the model does not declare.
    Another materialization it reads is a source like a base table (`materialization_source`):
    its Delta version and table id are recorded, so rebuilding it makes this one stale."""
    if target.spec is not None:
        return model.lattice_tables(target.spec.lattice), ()
    assert target.materialization is not None
    m = target.materialization
    tables, unknown = [], []
    for key in query_tables(m.sql, m.schema):
        schema, _, name = key.partition(".")
        table = model.table(schema, name)
        if key in m.reads:
            table = materialization_source(model, key, warehouse or model.warehouse)
        if table is None:
            unknown.append(key)
        else:
            tables.append(table)
    return tuple(tables), tuple(unknown)


def materialization_source(model: Model, key: str, warehouse: str) -> Table | None:
    """The declared materialization stored as `key` (schema.table) as a Delta source table."""
    for m in model.materializations:
        if m.key == key:
            location = materialization_location(warehouse, m.schema, m.table)
            return Table(schema=m.schema, name=m.table, location=location, format="delta")
    return None


def current_snapshot(
    spark: SparkSession, tables: tuple[Table, ...], unknown: tuple[str, ...] = ()
) -> Snapshot:
    """Each source's current version and, for Delta tables, its table id at that version."""
    found = source_versions(spark, tables)
    versions: dict[str, Version] = {name: s.version for name, s in found.items()}
    ids: dict[str, TableId] = {name: s.table_id for name, s in found.items()}
    unreadable = {name: s.unreadable for name, s in found.items() if s.unreadable is not None}
    for name in unknown:
        versions[name], ids[name] = None, None
    return Snapshot(versions, ids, unreadable)


def require_readable(snapshot: Snapshot) -> None:
    """Raise `TableUnreadable` naming the first source whose log could not be read."""
    for name, why in sorted(snapshot.unreadable.items()):
        raise TableUnreadable(f"source table {name}", why)


def read_name(table: Table) -> str:
    """How SQL names the table to read it (the catalog's own name for catalog schemas)."""
    if table.location is None and table.catalog_name:
        return quoted(table.catalog_name)
    return f"{q(table.schema)}.{q(table.name)}"


def pinnable(table: Table) -> bool:
    """Whether the table can be read VERSION AS OF (Delta, by location or in the catalog)."""
    return table.location is None or (table.format or "delta") == "delta"


def pinned_relations(model: Model, lattice: Lattice, versions: dict[str, Version]) -> dict:
    """alias -> table reference read at its recorded Delta version."""
    out = {}
    for node in lattice.nodes:
        table = model.table(node.schema, node.table)
        if table is None:
            continue
        version = versions.get(table.qualified_name)
        pin = version if isinstance(version, int) and pinnable(table) else None
        out[node.alias] = table_relation(read_name(table), pin)
    return out


def stale_since(
    spark: SparkSession,
    tables: tuple[Table, ...],
    recorded: dict[str, Version],
    current: dict[str, Version],
) -> float | None:
    """When the first change not reflected by `recorded` happened; None if unknowable."""
    times = []
    for table in tables:
        old, new = recorded.get(table.qualified_name), current.get(table.qualified_name)
        if old == new and old is not None:
            continue
        when = _change_time(spark, table, old, new)
        if when is None:
            return None
        times.append(when)
    return min(times, default=None)


def _change_time(spark: SparkSession, table: Table, old: Version, new: Version) -> float | None:
    if isinstance(old, int) and isinstance(new, int) and table.location is not None:
        return deltalog.commit_time(spark, table.location, old + 1)
    if isinstance(new, str) and "mtime=" in new:
        return float(new.rsplit("mtime=", 1)[1])
    return None
