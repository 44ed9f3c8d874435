"""The tile catalog: every tile and materialization of a model with its status, and the
freshness interface the rewriter reads (`CatalogAvailability`).

The catalog is not a table of its own: what a tile holds comes from its Delta table (record in
the properties, committed with the data), attempts and hits from the state store, current
versions from the source tables' logs. So it can never disagree with the data.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mvlattice.delta import log as deltalog
from mvlattice.delta import storage
from mvlattice.errors import MvlatticeError, NotFoundError, UsageError
from mvlattice.jobs.availability import ViewCode, ViewState
from mvlattice.jobs.build import definition_of
from mvlattice.jobs.context import JobContext
from mvlattice.jobs.freshness import Assessment, Facts, assess, attempt_running, interrupted
from mvlattice.jobs.hits import HitCounter
from mvlattice.jobs.lease import Leases
from mvlattice.jobs.naming import TILE_DATABASE, is_tile_table_name, lattice_prefix
from mvlattice.jobs.nested import through_inners
from mvlattice.jobs.record import Version, iso, spec_from_json
from mvlattice.jobs.registration import ensure_registered
from mvlattice.jobs.sources import current_snapshot, stale_since, target_sources
from mvlattice.jobs.state import StateStore
from mvlattice.jobs.status import TileStatus
from mvlattice.jobs.tables import TableReader, TableState
from mvlattice.jobs.targets import (
    TILE,
    Target,
    declared_spec,
    declared_targets,
    lattices_of,
    policy_for,
    tile_location_of,
    tile_target,
    unique,
)
from mvlattice.settings import join_location

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from mvlattice.lattice.lattice import TileSpec
    from mvlattice.model.loader import Model


# -- what exists -------------------------------------------------------------------------------
def tiles_on_disk(
    spark: SparkSession | None, warehouse: str, lattices: Iterable[str]
) -> tuple[tuple[str, str], ...]:
    """(qualified name, location) of every tile directory of the given lattices."""
    prefixes = tuple(lattice_prefix(name) for name in lattices)
    if not prefixes:
        return ()
    names = storage.child_names(spark, join_location(warehouse, "_mvlattice", "tiles"))
    return tuple(
        (f"{TILE_DATABASE}.{n}", tile_location_of(warehouse, n))
        for n in names
        if n.startswith(prefixes) and is_tile_table_name(n)  # a stray folder is no tile
    )


def built_targets(ctx: JobContext, lattice: str | None = None) -> tuple[Target, ...]:
    """Tiles built earlier (planned, auto or declared) for the model's lattices."""
    names = [lat.name for lat in lattices_of(ctx.model, lattice)]
    found = []
    for name, location in tiles_on_disk(ctx.spark, ctx.warehouse, names):
        state = ctx.reader.state(location)
        record = state.record if state else None
        if record is None or record.spec is None or record.lattice not in names:
            continue
        if not _fits(ctx.model, record.spec):
            continue  # a same-named lattice of another model sharing the warehouse built it
        found.append(
            Target(
                name=name,
                kind=TILE,
                location=location,
                spec=record.spec,
                materialization=None,
                origin=record.origin,
                estimated_rows=record.rows,
            )
        )
    return tuple(found)


def _fits(model: Model, spec: TileSpec) -> bool:
    """Whether this model's lattice of the spec's name has the spec's columns and measures."""
    try:
        definition_of(model, Target(name="", kind=TILE, location="", spec=spec))
    except MvlatticeError:
        return False
    return True


def planned_targets(ctx: JobContext, lattice: str | None = None) -> tuple[Target, ...]:
    """The tiles of each lattice's last recorded plan."""
    found = []
    for lat in lattices_of(ctx.model, lattice):
        for item in ctx.store.plan(lat.name) or ():
            try:
                spec = spec_from_json(item)
            except (KeyError, TypeError, ValueError):
                continue
            spec = declared_spec(ctx.model, spec)
            found.append(tile_target(spec, ctx.warehouse, "planned"))
    return tuple(found)


def check_target_name(model: Model, warehouse: str, name: str, lattice: str | None) -> None:
    """NotFoundError (with the closest name) when no declared, built or last-planned target of
    a local warehouse goes by `name`, as `targets.find_target` would say after Spark's
    start-up; a remote warehouse is not listed here, so it is left to `find_target`."""
    if storage.local_path(warehouse) is None:
        return
    names: list[str] = []
    for target in declared_targets(model, warehouse, lattice):
        names += [target.name, target.table]
        if target.materialization is not None:
            names.append(target.materialization.name)
        if target.spec is not None and target.spec.name is not None:
            names.append(target.spec.name)
    lattices = [lat.name for lat in lattices_of(model, lattice)]
    names += [qualified for qualified, _ in tiles_on_disk(None, warehouse, lattices)]
    store = StateStore.for_warehouse(warehouse)
    for lat in lattices:
        for item in store.plan(lat) or ():
            with contextlib.suppress(KeyError, TypeError, ValueError):
                names.append(tile_target(spec_from_json(item), warehouse, "planned").name)
    known = {n.lower() for n in names} | {
        n.lower().removeprefix(f"{TILE_DATABASE}.") for n in names
    }
    if name.lower() not in known:
        from mvlattice.document import suggest

        raise NotFoundError(
            f"no tile or materialization '{name}'" + suggest(name, sorted(set(names)))
        )


def model_targets(ctx: JobContext, lattice: str | None = None) -> tuple[Target, ...]:
    """Declared materializations and tiles, then tiles on storage, then last-planned tiles."""
    return unique(
        (
            *declared_targets(ctx.model, ctx.warehouse, lattice),
            *built_targets(ctx, lattice),
            *planned_targets(ctx, lattice),
        )
    )


def register_tiles(spark: SparkSession, model: Model, warehouse: str | None = None) -> int:
    """Register every built tile and materialization of the model in this session's catalog
    (as `mvlattice.<tile>` and `schema.table`); returns how many. Called at session start;
    tiles built later, by another process too, are registered when a rewrite first uses them
    (`registration.ensure_registered`)."""
    from mvlattice.jobs.targets import materialization_target

    where = warehouse or model.warehouse
    views = (materialization_target(m, where) for m in model.materializations)
    found = [(t.name, t.location) for t in views]
    with contextlib.suppress(Exception):  # an unlistable warehouse offers no tiles
        found += tiles_on_disk(spark, where, [lat.name for lat in model.lattices])
    count = 0
    for name, location in found:
        try:
            if deltalog.latest_version(spark, location) is not None:
                ensure_registered(spark, name, location, where)
                count += 1
        except UsageError:
            raise  # its name stands for another warehouse's table: refuse, never share
        except Exception:  # noqa: BLE001 - an unreadable tile is simply not offered
            continue
    return count


# -- status ------------------------------------------------------------------------------------
@dataclass(kw_only=True, frozen=True, slots=True)
class CatalogEntry:
    name: str
    kind: str
    lattice: str | None
    dimensions: tuple[str, ...]
    measures: tuple[str, ...]
    origin: str
    status: TileStatus
    usable: bool
    code: ViewCode
    message: str
    rows: int | None
    size_bytes: int | None
    source_versions: dict[str, Version] = field(default_factory=dict)
    current_versions: dict[str, Version] = field(default_factory=dict)
    last_refresh: float | None = None
    refresh_path: str | None = None
    built_from: str | None = None
    last_error: str | None = None
    hits: int = 0
    last_used: float | None = None
    location: str = ""
    # Stored column name -> the output as written, for outputs stored under another name
    # (unnamed expressions, repeated names: `mvlattice.sql.stored_names`).
    renamed: dict[str, str] = field(default_factory=dict)
    # Why `gc` would remove this built tile (dropped from its lattice's plan, no longer
    # declared); None when it stays.
    dropped: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__slots__}  # type: ignore[attr-defined]
        out["dimensions"], out["measures"] = list(self.dimensions), list(self.measures)
        out["last_refresh"], out["last_used"] = iso(self.last_refresh), iso(self.last_used)
        return out


@dataclass(frozen=True, slots=True)
class Inspection:
    target: Target
    table: TableState | None
    assessment: Assessment
    current: dict[str, Version]
    error: str | None


def inspect(ctx: JobContext, target: Target, *, usable_only: bool = False) -> Inspection:
    """Everything the catalog knows about one target, right now. `usable_only`: whether it
    may be read is all that is asked (the rewriter, on every query) — the build attempt and
    its lease, which change only the status and the message of a view that may not be read
    (`freshness.assess`), are not looked up: no state-store read on the query path."""
    now = ctx.clock()
    table = ctx.reader.state(target.location)
    record = table.record if table else None
    tables, unknown = target_sources(ctx.model, target, ctx.warehouse)
    current = current_snapshot(ctx.spark, tables, unknown)
    attempt, running = None, False
    if not usable_only:
        attempt = ctx.store.attempt(target.name)
        assert ctx.leases is not None
        running = attempt_running(attempt, ctx.leases.holder(target.name) is not None)
        if attempt is not None and attempt.status == "building" and not running:
            attempt = interrupted(attempt)
    policy = policy_for(ctx.model, target)
    since = None
    if record is not None and policy.max_staleness_seconds is not None:
        since = stale_since(ctx.spark, tables, record.versions, dict(current.versions))
    facts = Facts(
        record,
        current,
        definition_of(ctx.model, target),
        table.tile_change if table else None,
        attempt,
        running,
        policy.max_staleness_seconds,
        since,
        now,
    )
    error = attempt.error if attempt is not None and attempt.status == "failed" else None
    assessment = assess(facts)
    if target.materialization is not None and target.materialization.reads:
        inners = [
            (t.name, inspect(ctx, t, usable_only=usable_only).assessment)
            for t in _inners(ctx, target)
        ]
        assessment = through_inners(assessment, inners, policy.max_staleness_seconds)
    return Inspection(target, table, assessment, dict(current.versions), error)


def decided_locally(ctx: JobContext, target: Target) -> bool:
    """Whether `inspect(ctx, target, usable_only=True)` reads nothing but the local Delta logs
    of the target and its sources: no Spark job, no remote store, no walk of a Parquet/CSV
    table's files. The service decides such a freshness on its event loop, as fast as a
    request is parsed; any other goes to a worker thread."""
    if storage.local_path(target.location) is None:
        return False
    tables, unknown = target_sources(ctx.model, target, ctx.warehouse)
    local_delta = all(
        t.location is not None
        and (t.format or "delta") == "delta"
        and storage.local_path(t.location) is not None
        for t in tables
    )
    if unknown or not local_delta:
        return False
    if target.materialization is not None and target.materialization.reads:
        return all(decided_locally(ctx, inner) for inner in _inners(ctx, target))
    return True


def _inners(ctx: JobContext, target: Target) -> tuple[Target, ...]:
    """The materializations `target` reads directly (the model refuses cycles)."""
    from mvlattice.jobs.targets import materialization_target

    assert target.materialization is not None
    reads = target.materialization.reads
    return tuple(
        materialization_target(m, ctx.warehouse)
        for m in ctx.model.materializations
        if m.key in reads
    )


def entry(ctx: JobContext, target: Target) -> CatalogEntry:
    seen = inspect(ctx, target)
    record = seen.table.record if seen.table else None
    usage = ctx.store.usage(target.name)
    spec = target.spec
    return CatalogEntry(
        name=target.name,
        kind=target.kind,
        lattice=target.lattice,
        dimensions=spec.dimensions if spec else (),
        measures=tuple(str(m) for m in spec.measures) if spec else (),
        origin=target.origin,
        status=seen.assessment.status,
        usable=seen.assessment.view.usable,
        code=seen.assessment.view.code,
        message=seen.assessment.view.message,
        rows=record.rows if record else None,
        size_bytes=seen.table.size_bytes if seen.table else None,
        source_versions=record.versions if record else {},
        current_versions=seen.current,
        last_refresh=record.built_at if record else None,
        refresh_path=record.refresh_path if record else None,
        built_from=record.built_from if record else None,
        last_error=seen.error,
        hits=usage.hits if usage else 0,
        last_used=usage.last_used if usage else None,
        location=target.location,
        renamed=dict(record.renamed) if record else {},
    )


def catalog(ctx: JobContext, lattice: str | None = None) -> tuple[CatalogEntry, ...]:
    """Every tile and materialization of the model (or of one lattice), with its status."""
    return tuple(entry(ctx, t) for t in model_targets(ctx, lattice))


# -- the rewriter's interface ------------------------------------------------------------------
@dataclass(kw_only=True, frozen=True, slots=True)
class ApprovedSnapshot:
    """The Delta version of a view's table that freshness approved, and its size."""

    location: str
    version: int
    rows: int | None
    size_bytes: int | None


class CatalogAvailability:
    """`mvlattice.jobs.availability.Availability` from the tile catalog: whether the view
    stored in a table may be read now (FRESH, STALE_ACCEPTED within maxStaleness, STALE,
    MISSING, BUILDING, FAILED), and `record_hit` for the tiles a rewrite used."""

    def __init__(
        self,
        spark: SparkSession,
        model: Model,
        warehouse: str | None = None,
        store: StateStore | None = None,
        clock: Callable[[], float] = time.time,
        *,
        reader: TableReader | None = None,
        hits: HitCounter | None = None,
        leases: Leases | None = None,
    ) -> None:
        """`reader`: one kept across requests (it caches tables' states by version); `hits`:
        where hits go in batches (else one store transaction each); `leases`: the warehouse's
        (made once by a caller that asks on every request)."""
        where = warehouse or model.warehouse
        store = store or (hits.store if hits is not None else StateStore.for_warehouse(where))
        reader = reader or TableReader(spark)
        self.ctx = JobContext(spark, model, where, store, reader, clock, leases=leases)
        self.hits = hits
        self._names: dict[str, str] = {}  # table (lower case) -> its target's name
        # table (lower case) -> the snapshot its usable state was decided on: the one version
        # a reader outside Spark (the tile engine) may read.
        self.approved: dict[str, ApprovedSnapshot] = {}

    def state(self, table: str) -> ViewState:
        target = self.target(table)
        if target is None:
            return ViewState(
                False, ViewCode.MISSING, f"{table} is not a tile or materialization here"
            )
        self._names[table.lower()] = target.name
        seen = inspect(self.ctx, target, usable_only=True)
        if not seen.assessment.view.usable:  # why not, in full (building? failed?)
            seen = inspect(self.ctx, target)
        view = seen.assessment.view
        if view.usable and seen.table is not None:
            record = seen.table.record
            self.approved[table.lower()] = ApprovedSnapshot(
                location=target.location,
                version=seen.table.version,
                rows=record.rows if record is not None else None,
                size_bytes=seen.table.size_bytes,
            )
        return view

    def decided_locally(self, table: str) -> bool:
        """Whether `state(table)` reads only local Delta logs (see `decided_locally`)."""
        target = self.target(table)
        return target is not None and decided_locally(self.ctx, target)

    def record_hit(self, table: str) -> None:
        name = self._names.get(table.lower())
        if name is None:
            target = self.target(table)
            name = target.name if target else table
        if self.hits is not None:
            self.hits.add(name)
        else:
            self.ctx.store.record_hit(name, self.ctx.clock())

    def target(self, table: str) -> Target | None:
        wanted = table.lower()
        for target in declared_targets(self.ctx.model, self.ctx.warehouse):
            if target.name.lower() == wanted:
                return target
        database, _, name = wanted.rpartition(".")
        if database != TILE_DATABASE or not is_tile_table_name(name):
            return None  # not a tile (and never a path: `mvlattice./etc` names no location)
        location = tile_location_of(self.ctx.warehouse, name)
        state = self.ctx.reader.state(location)
        record = state.record if state is not None else None
        lattices = {lat.name for lat in self.ctx.model.lattices}
        if record is None or record.spec is None or record.lattice not in lattices:
            return None
        return Target(
            name=f"{TILE_DATABASE}.{name}",
            kind=TILE,
            location=location,
            spec=record.spec,
            materialization=None,
            origin=record.origin,
        )
