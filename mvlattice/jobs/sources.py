"""The source tables of a target, their current versions and ids, and how to read them pinned.

- Delta tables: the commit version (exact), and the table id at that version (a table deleted
  and recreated restarts its versions; see `identity`).
- Parquet/CSV tables: a fingerprint of their file listing (count, bytes, newest modification
  time). LIMITATION: a rewrite that keeps the same file names, sizes and times, or a clock that
  goes backwards, goes unnoticed; such tables also cannot be read "as of" the fingerprint, so a
  change during a build makes the tile look stale, never wrongly fresh.
- Tables of `catalog` schemas: their Delta version when DESCRIBE HISTORY works (and their id
  from DESCRIBE DETAIL), else unknown — and a tile over an unknown version is never fresh.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mvlattice.delta import log as deltalog
from mvlattice.delta import storage
from mvlattice.jobs.record import Snapshot, TableId, Version
from mvlattice.jobs.targets import Target
from mvlattice.jobs.tilesql import q, table_relation
from mvlattice.sql.query_tables import query_tables

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from mvlattice.lattice.lattice import Lattice
    from mvlattice.model.loader import Model, Table


def target_sources(model: Model, target: Target) -> tuple[tuple[Table, ...], tuple[str, ...]]:
    """The model tables a target reads, and names it reads that the model does not declare."""
    if target.spec is not None:
        return model.lattice_tables(target.spec.lattice), ()
    assert target.materialization is not None
    m = target.materialization
    tables, unknown = [], []
    for key in query_tables(m.sql, m.schema):
        schema, _, name = key.partition(".")
        table = model.table(schema, name)
        if table is None:
            unknown.append(key)
        else:
            tables.append(table)
    return tuple(tables), tuple(unknown)


def current_snapshot(
    spark: SparkSession, tables: tuple[Table, ...], unknown: tuple[str, ...] = ()
) -> Snapshot:
    """Each source's current version and, for Delta tables, its table id at that version."""
    versions: dict[str, Version] = {}
    ids: dict[str, TableId] = {}
    for table in tables:
        version = table_version(spark, table)
        versions[table.qualified_name] = version
        ids[table.qualified_name] = table_id(spark, table, version)
    for name in unknown:
        versions[name], ids[name] = None, None
    return Snapshot(versions, ids)


def table_version(spark: SparkSession, table: Table) -> Version:
    if table.location is None:
        return _catalog_version(spark, table.catalog_name or table.qualified_name)
    if (table.format or "delta") == "delta":
        return deltalog.latest_version(spark, table.location)
    return fingerprint(spark, table.location)


def table_id(spark: SparkSession, table: Table, version: Version) -> TableId:
    """The Delta table id of `table` at `version`, just read as its latest; None when the
    table has no Delta version (its fingerprint or unknown version says all there is)."""
    if not isinstance(version, int):
        return None
    if table.location is None:
        from mvlattice.delta.versions import table_id as described_id

        return described_id(spark, _quoted(table.catalog_name or table.qualified_name))
    return deltalog.table_id(spark, table.location, version)


def fingerprint(spark: SparkSession | None, location: str) -> str:
    files = storage.data_files(spark, location)
    newest = max((f.mtime for f in files), default=0.0)
    return f"files={len(files)};bytes={sum(f.size for f in files)};mtime={newest:.3f}"


def _catalog_version(spark: SparkSession, name: str) -> int | None:
    try:
        row = spark.sql(f"DESCRIBE HISTORY {_quoted(name)} LIMIT 1").first()
    except Exception:  # noqa: BLE001 - not a Delta table: its version is unknown
        return None
    return int(row["version"]) if row is not None else None


def _quoted(name: str) -> str:
    return ".".join(q(part) for part in name.split("."))


def read_name(table: Table) -> str:
    """How SQL names the table to read it (the catalog's own name for catalog schemas)."""
    if table.location is None and table.catalog_name:
        return _quoted(table.catalog_name)
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
