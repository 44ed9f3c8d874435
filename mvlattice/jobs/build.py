"""Filling one target's table: a tile from the star or from a finer tile, a tile by merging the
rows appended to its fact table, a materialization from its query. Each writes one commit,
which also sets the table's vacuum retention (see `vacuum`)."""

from __future__ import annotations

from mvlattice.delta.appended import appended_view
from mvlattice.errors import MvlatticeError
from mvlattice.jobs.changes import RefreshDecision
from mvlattice.jobs.context import JobContext
from mvlattice.jobs.order import Ancestor
from mvlattice.jobs.record import Snapshot, TileRecord
from mvlattice.jobs.registration import ensure_registered
from mvlattice.jobs.sources import materialization_source, pinnable, pinned_relations, read_name
from mvlattice.jobs.tables import column_types, write_table
from mvlattice.jobs.targets import Target
from mvlattice.jobs.tilesql import (
    appended_relation,
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


def definition_of(model: Model, target: Target) -> str:
    """The defining SQL recorded with the table; a table built from another definition is
    out of date whatever its versions say."""
    if target.spec is not None:
        return star_tile_sql(model.lattice(target.spec.lattice), target.spec)
    assert target.materialization is not None
    return target.materialization.sql


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
    return write_table(
        ctx.spark,
        target.location,
        sql,
        _recorder(ctx, target, sources, started, *how),
        dimension_columns(target.spec),
        retention(ctx.spark, ctx.model, target),
    )


def merge_appends(
    ctx: JobContext,
    target: Target,
    sources: Snapshot,
    tile_version: int,
    decision: RefreshDecision,
    started: float,
) -> TileRecord:
    """The tile with the aggregate of the appended fact rows merged in (the incremental path).
    The appended rows are read from their own files when the fact table's layout allows
    (see `appended`), else through Delta with a filter on their file names."""
    assert target.spec is not None and decision.fact_version is not None
    lattice = ctx.model.lattice(target.spec.lattice)
    fact = ctx.model.table(lattice.root.schema, lattice.root.table)
    assert fact is not None and fact.location is not None
    view = appended_view(ctx.spark, fact.location, decision.fact_version, decision.added)
    relations = pinned_relations(ctx.model, lattice, dict(sources.versions))
    relations[lattice.root.alias] = (
        q(view)
        if view is not None
        else appended_relation(read_name(fact), decision.fact_version, decision.added_files)
    )
    try:
        delta_sql = star_tile_sql(lattice, target.spec, relations)
        tile = table_relation(f"delta.{q(target.location)}", tile_version)
        types = column_types(ctx.spark, target.location, tile_version)
        sql = merge_tile_sql(target.spec, tile, delta_sql, types)
        recorder = _recorder(ctx, target, sources, started, target.name, "incremental")
        return write_table(
            ctx.spark,
            target.location,
            sql,
            recorder,
            dimension_columns(target.spec),
            retention(ctx.spark, ctx.model, target),
        )
    finally:
        if view is not None:
            ctx.spark.catalog.dropTempView(view)


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
