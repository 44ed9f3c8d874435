"""Filling one target's table: a tile from the star or from a finer tile, a tile by merging the
change to its fact table, a materialization from its query. Each writes one commit,
which also sets the table's vacuum retention (see `vacuum`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from mvlattice.errors import MvlatticeError
from mvlattice.jobs.changerows import ChangeRows
from mvlattice.jobs.context import JobContext
from mvlattice.jobs.local_merge import merge_locally
from mvlattice.jobs.order import Ancestor
from mvlattice.jobs.partitions import PartitionScope
from mvlattice.jobs.partitions import refresh_sql as partition_refresh_sql
from mvlattice.jobs.record import Snapshot, TileRecord
from mvlattice.jobs.registration import ensure_registered
from mvlattice.jobs.retraction import retract_tile_sql
from mvlattice.jobs.sources import materialization_source, pinnable, pinned_relations
from mvlattice.jobs.tables import column_types, write_table
from mvlattice.jobs.targets import Target
from mvlattice.jobs.tilesql import (
    dimension_columns,
    merge_tile_sql,
    q,
    rollup_tile_sql,
    star_tile_sql,
    table_relation,
)
from mvlattice.jobs.vacuum import retention
from mvlattice.model.loader import Model
from mvlattice.sql.query_tables import pin_versions
from mvlattice.sql.refusal import Refusal

if TYPE_CHECKING:
    import pyarrow as pa

    from mvlattice.lattice.lattice import TileSpec


def definition_of(model: Model, target: Target) -> str:
    """The defining SQL recorded with the table; a table built from another definition is
    out of date whatever its versions say."""
    if target.spec is None:
        assert target.materialization is not None
        return target.materialization.sql
    # Freshness compares it on every query: made once per (model object, tile spec).
    key = (id(model), target.spec)
    found = _DEFINITIONS.get(key)
    if found is not None and found[0] is model:
        return found[1]
    sql = star_tile_sql(model.lattice(target.spec.lattice), target.spec)
    if len(_DEFINITIONS) >= _DEFINITIONS_LIMIT:
        _DEFINITIONS.clear()
    _DEFINITIONS[key] = (model, sql)
    return sql


_DEFINITIONS: dict[tuple[int, TileSpec], tuple[Model, str]] = {}
_DEFINITIONS_LIMIT = 4096


def build_tile(
    ctx: JobContext,
    target: Target,
    sources: Snapshot,
    ancestor: Ancestor | None,
    started: float,
) -> TileRecord:
    """The whole tile at `sources`: a rollup of `ancestor` when given, else from the star."""
    assert target.spec is not None
    lattice = ctx.model.lattice(target.spec.lattice)
    if ancestor is not None:
        relation = table_relation(f"delta.{q(ancestor.location)}", ancestor.version)
        types = column_types(ctx.spark, ancestor.location, ancestor.version)
        sql = rollup_tile_sql(target.spec, ancestor.spec, relation, types)
        how = (ancestor.name, "rollup")
    else:
        sql = star_tile_sql(
            lattice, target.spec, pinned_relations(ctx.model, lattice, dict(sources.versions))
        )
        how = ("star", "full")
    return _write_tile(ctx, target, sql, _recorder(ctx, target, sources, started, *how))


def merge_changes(
    ctx: JobContext,
    target: Target,
    sources: Snapshot,
    tile_version: int,
    change: ChangeRows,
    started: float,
) -> TileRecord:
    """The tile with the change to its fact table merged in (the incremental path): the
    added rows' aggregate merged, the retracted rows' one subtracted (see `retraction`).
    `change` is the batch's aggregate of the change (see `changerows`); this tile's delta is
    its rollup, so the new rows are read and joined once for all tiles of the lattice."""
    assert target.spec is not None
    plus_sql, minus_sql = change.delta_sql(target.spec)
    tile = table_relation(f"delta.{q(target.location)}", tile_version)
    types = column_types(ctx.spark, target.location, tile_version)
    sql = merge_tile_sql(target.spec, tile, plus_sql, types)
    if minus_sql is not None:
        sql = retract_tile_sql(target.spec, sql, minus_sql, types)
    recorder = _recorder(ctx, target, sources, started, target.name, "incremental")
    return _write_tile(ctx, target, sql, recorder)


def build_partitions(
    ctx: JobContext,
    target: Target,
    sources: Snapshot,
    tile_version: int,
    scope: PartitionScope,
    started: float,
) -> TileRecord:
    """The tile with the groups of the fact table's touched partitions recomputed from the
    star (only those partitions read) and its other rows kept (the partitions path)."""
    assert target.spec is not None
    lattice = ctx.model.lattice(target.spec.lattice)
    relations = pinned_relations(ctx.model, lattice, dict(sources.versions))
    tile = table_relation(f"delta.{q(target.location)}", tile_version)
    types = column_types(ctx.spark, target.location, tile_version)
    sql = partition_refresh_sql(lattice, target.spec, relations, tile, scope, types)
    recorder = _recorder(ctx, target, sources, started, f"star ({scope.describe()})", "partitions")
    return _write_tile(ctx, target, sql, recorder)


def merge_in_process(
    ctx: JobContext,
    target: Target,
    sources: Snapshot,
    tile_version: int,
    change: ChangeRows,
    change_rows: Mapping[str, pa.Table],
    started: float,
) -> TileRecord | Refusal:
    """`merge_changes` without Spark, where identity with Spark's merge is proven (see
    `local_merge`); else why not, nothing written."""
    assert target.spec is not None
    return merge_locally(
        target.spec,
        target.location,
        tile_version,
        change,
        change_rows,
        retention(ctx.spark, ctx.model, target),
        _recorder(ctx, target, sources, started, target.name, "incremental"),
    )


def build_materialization(
    ctx: JobContext, target: Target, sources: Snapshot, started: float
) -> TileRecord:
    """A declared materialization from its own SQL, its Delta sources read at `sources`."""
    m = target.materialization
    assert m is not None
    pins: dict[str, int | None] = {}
    for name, version in sources.versions.items():
        schema, _, table_name = name.partition(".")
        table = ctx.model.table(schema, table_name)
        if name.lower() in m.reads:  # another materialization: read by its catalog name
            table = materialization_source(ctx.model, name.lower(), ctx.warehouse)
            assert table is not None and table.location is not None
            if version is None:
                raise MvlatticeError(f"it reads materialization {name}, which is not built")
            ensure_registered(ctx.spark, name, table.location, ctx.warehouse)
        if table is not None and table.location is not None and pinnable(table):
            pins[name] = version if isinstance(version, int) else None
    sql = pin_versions(m.sql, m.schema, pins)
    recorder = _recorder(ctx, target, sources, started, "query", "full")
    return write_table(
        ctx.spark, target.location, sql, recorder, (), retention(ctx.spark, ctx.model, target)
    )


def _write_tile(
    ctx: JobContext, target: Target, sql: str, recorder: Callable[[int], TileRecord]
) -> TileRecord:
    """The tile's rows replaced by `sql`'s in one commit carrying the record `recorder` makes."""
    assert target.spec is not None
    return write_table(
        ctx.spark,
        target.location,
        sql,
        recorder,
        dimension_columns(target.spec),
        retention(ctx.spark, ctx.model, target),
    )


def _recorder(
    ctx: JobContext,
    target: Target,
    sources: Snapshot,
    started: float,
    built_from: str,
    path: str,
):  # (rows) -> TileRecord
    spec = target.spec
    definition = definition_of(ctx.model, target)

    def record(rows: int) -> TileRecord:
        return TileRecord(
            target.kind,
            target.name,
            definition,
            tuple(sorted(sources.versions.items())),
            rows,
            started,
            ctx.clock() - started,
            built_from,
            path,
            target.origin,
            spec.lattice if spec else None,
            spec.dimensions if spec else (),
            spec.measures if spec else (),
            tuple(sorted(sources.ids.items())),
        )

    return record
