"""The jobs' entry points, as the Workspace, the CLI, the scheduler and the service call them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from mvlattice.delta import storage
from mvlattice.errors import first_line
from mvlattice.jobs import trash
from mvlattice.jobs.batch import BatchResult, BuildResult, Progress, run_batch
from mvlattice.jobs.catalog import CatalogEntry, built_targets, catalog, model_targets
from mvlattice.jobs.context import JobContext
from mvlattice.jobs.garbage import BuiltTile, Garbage, choose_garbage
from mvlattice.jobs.lease import LeaseHeld
from mvlattice.jobs.nested import with_inners
from mvlattice.jobs.planning import plan_targets, planned_tiles
from mvlattice.jobs.record import TileRecord
from mvlattice.jobs.status import BuildStatus, RefreshPath
from mvlattice.jobs.targets import (
    Target,
    declared_targets,
    find_target,
    lattices_of,
    tile_target,
    unique,
)
from mvlattice.sql.query_tables import query_tables

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from mvlattice.model.loader import Model
    from mvlattice.plan.budget import Limits
    from mvlattice.plan.planner import LatticePlan, WorkloadInput


def materialize(
    spark: SparkSession,
    model: Model,
    warehouse: str | None = None,
    *,
    lattice: str | None = None,
    full: bool = False,
    max_tiles: int | None = None,
    workload: WorkloadInput | Mapping[str, WorkloadInput] = None,
    progress: Progress | None = None,
    say: Callable[[str], None] | None = None,
    trigger: str = "api",
    limits: Limits | None = None,
) -> BatchResult:
    """Build every declared materialization and the declared and planned tiles of every lattice
    (or of one), skipping what is already fresh and refreshing what is stale. The plan weighs
    `workload` (a file, entries or a Workload — see `lattice.planner.load_workload` — or a
    mapping from lattice name to one); without one, by the lattice's hierarchies. `limits`:
    rows, bytes or a share of the fact table the planned tiles may take."""
    ctx = JobContext.open(spark, model, warehouse, trigger)
    targets: list[Target] = list(declared_targets(model, ctx.warehouse, lattice))
    failures: list[BuildResult] = []
    for lat in lattices_of(model, lattice):
        try:
            weights = workload.get(lat.name) if isinstance(workload, Mapping) else workload
            targets.extend(
                planned_tiles(
                    ctx, lat, max_tiles=max_tiles, workload=weights, progress=say, limits=limits
                )
            )
        except Exception as exc:  # noqa: BLE001 - a failed plan must not stop other builds
            reason = "planning failed; only its declared tiles are built"
            failures.append(
                BuildResult(
                    f"plan of lattice '{lat.name}'",
                    "plan",
                    BuildStatus.FAILED,
                    RefreshPath.NONE,
                    reason,
                    error=first_line(exc),
                )
            )
    batch = run_batch(ctx, unique(targets), full=full, progress=progress)
    return BatchResult(tuple(failures) + batch.results, batch.notes)


def materialize_plan(
    spark: SparkSession,
    model: Model,
    plan: LatticePlan,
    warehouse: str | None = None,
    *,
    full: bool = False,
    progress: Progress | None = None,
) -> BatchResult:
    """Build exactly the tiles of an existing plan (no planning again), skipping fresh ones,
    and remember it as its lattice's plan."""
    ctx = JobContext.open(spark, model, warehouse, "api")
    return run_batch(ctx, plan_targets(ctx, plan), full=full, progress=progress)


def refresh(
    spark: SparkSession,
    model: Model,
    warehouse: str | None = None,
    *,
    lattice: str | None = None,
    tile: str | None = None,
    full: bool = False,
    progress: Progress | None = None,
    trigger: str = "api",
    dry_run: bool = False,
) -> BatchResult:
    """Bring every tile and materialization (or those of a lattice, or one) up to date:
    incrementally where only the fact table changed (appends; deletes and updates with its
    change data feed) and that is the cheaper path, else in full. `dry_run`: only say what
    each would do, with the estimates (status `planned`)."""
    ctx = JobContext.open(spark, model, warehouse, trigger)
    targets = model_targets(ctx, lattice)
    if tile is not None:  # a materialization's inner ones first (see `nested`)
        targets = with_inners(find_target(targets, tile), targets)
    return run_batch(ctx, targets, full=full, progress=progress, dry_run=dry_run)


def tiles(
    spark: SparkSession, model: Model, warehouse: str | None = None, lattice: str | None = None
) -> tuple[CatalogEntry, ...]:
    """The catalog: every tile and materialization with status, rows, versions, hits."""
    if lattice is not None:
        model.lattice(lattice)  # an unknown name is a NotFoundError, not an empty list
    ctx = JobContext.open(spark, model, warehouse)
    # A tile a plan dropped still answers queries until `gc` removes it: the catalog says so.
    dropped = {g.name: g.reason for g in _garbage(ctx, unused_seconds=None)}
    return tuple(replace(e, dropped=dropped.get(e.name)) for e in catalog(ctx, lattice))


def collect_garbage(
    spark: SparkSession,
    model: Model,
    warehouse: str | None = None,
    *,
    unused_seconds: float | None = None,
    dry_run: bool = False,
) -> tuple[Garbage, ...]:
    """Remove tiles dropped from the plan, no longer declared, or (with `unused_seconds`)
    unused that long, and what an interrupted gc left in the trash; `dry_run` only lists
    them. Each tile is moved aside before it is deleted (see `trash`); an item whose removal
    failed comes back with its `error`."""
    ctx = JobContext.open(spark, model, warehouse)
    leftover = tuple(
        Garbage(f"trash/{path.rstrip('/').rpartition('/')[2]}", path, "left by an interrupted gc")
        for path in trash.leftovers(spark, ctx.warehouse)
    )
    garbage = _garbage(ctx, unused_seconds)
    if dry_run:
        return leftover + garbage
    return tuple(_delete(ctx, item) for item in leftover) + tuple(
        _remove(ctx, item) for item in garbage
    )


def _garbage(ctx: JobContext, unused_seconds: float | None) -> tuple[Garbage, ...]:
    """The built tiles `gc` would remove, each with its reason."""
    return choose_garbage(
        (_built_tile(ctx, t) for t in built_targets(ctx)),
        keep=_kept(ctx),
        plans={lat.name: _plan_names(ctx, lat.name) for lat in ctx.model.lattices},
        unused_seconds=unused_seconds,
        now=ctx.clock(),
    )


def _remove(ctx: JobContext, item: Garbage) -> Garbage:
    """Under the tile's lease (a build of it is never deleted under the builder, nor is one
    started on a half-removed tile): move it aside (it reads as missing from then on), forget
    it, delete it."""
    assert ctx.leases is not None
    try:
        lease = ctx.leases.acquire(item.name, "gc")
    except LeaseHeld as held:
        return replace(item, error=f"{held}, so left in place (the next gc tries again)")
    with lease:
        return _remove_leased(ctx, item)


def _remove_leased(ctx: JobContext, item: Garbage) -> Garbage:
    try:
        moved = trash.move_aside(ctx.spark, ctx.warehouse, item.location)
    except Exception as exc:  # noqa: BLE001 - reported; the tile stays whole where it was
        return replace(item, error=f"not moved aside, so left in place: {first_line(exc)}")
    problems = []
    unregister = lambda: trash.unregister(ctx.spark, item.name)  # noqa: E731
    for forget in (unregister, lambda: ctx.store.forget(item.name)):
        try:
            forget()
        except Exception as exc:  # noqa: BLE001 - reported; its files are gone from its location
            problems.append(f"not forgotten: {first_line(exc)}")
    if moved is not None:
        problems.extend(filter(None, [_delete(ctx, replace(item, location=moved)).error]))
    return replace(item, error="; ".join(problems) or None)


def _delete(ctx: JobContext, item: Garbage) -> Garbage:
    try:
        storage.remove_tree(ctx.spark, item.location)
    except Exception as exc:  # noqa: BLE001 - reported; the next gc tries again
        error = f"{item.location} not deleted (the next gc tries again): {first_line(exc)}"
        return replace(item, error=error)
    return item


def _kept(ctx: JobContext) -> frozenset[str]:
    names = {t.name for t in declared_targets(ctx.model, ctx.warehouse)}
    for m in ctx.model.materializations:
        names.update(query_tables(m.sql, m.schema))
    return frozenset(n.lower() for n in names) | frozenset(names)


def _plan_names(ctx: JobContext, lattice: str) -> frozenset[str] | None:
    from mvlattice.jobs.record import spec_from_json

    plan = ctx.store.plan(lattice)
    if plan is None:
        return None
    return frozenset(tile_target(spec_from_json(p), ctx.warehouse).name for p in plan)


def _built_tile(ctx: JobContext, target: Target) -> BuiltTile:
    table = ctx.reader.state(target.location)
    record: TileRecord | None = table.record if table else None
    usage = ctx.store.usage(target.name)
    return BuiltTile(
        target.name,
        target.location,
        target.lattice or "",
        target.origin,
        record.built_at if record else 0.0,
        usage.last_used if usage else None,
    )


def scheduled_runner(
    spark: SparkSession, model: Model, warehouse: str | None = None
) -> Callable[[str, str], tuple[bool, str]]:
    """What the scheduler runs: refresh a lattice's tiles or one materialization."""

    def run(kind: str, name: str) -> tuple[bool, str]:
        lattice, tile = (name, None) if kind == "lattice" else (None, name)
        result = refresh(spark, model, warehouse, lattice=lattice, tile=tile, trigger="schedule")
        return result.ok, summarize(result)

    return run


def summarize(result: BatchResult) -> str:
    """'2 built, 1 refreshed (1 incremental), 3 fresh, 1 busy, 1 failed: <first error>'
    (busy: another builder held its lease)."""
    counts: dict[str, int] = {}
    for r in result.results:
        counts[r.status] = counts.get(r.status, 0) + 1
    parts = [
        f"{counts[s]} {'fresh' if s == 'skipped' else s}"
        for s in ("built", "refreshed", "skipped", "busy", "failed")
        if counts.get(s)
    ]
    incremental = sum(r.path == "incremental" and r.status != "failed" for r in result.results)
    if incremental:
        parts.append(f"{incremental} incremental")
    text = ", ".join(parts) or "nothing to do"
    if result.failed:
        first = result.failed[0]
        text += f"; {first.target}: {first.error}"
    return text
