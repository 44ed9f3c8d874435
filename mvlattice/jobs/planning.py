"""The tiles HRU96 chooses for a lattice (`algorithm: true`), as build targets; the plan is
remembered so the catalog can list planned tiles not built yet and `gc` can find dropped ones."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from mvlattice.jobs.context import JobContext
from mvlattice.jobs.record import spec_json
from mvlattice.jobs.targets import Target, tile_target
from mvlattice.lattice.lattice import Lattice

if TYPE_CHECKING:
    from mvlattice.plan.budget import Budget, Limits
    from mvlattice.plan.planner import LatticePlan, WorkloadInput

# Planning profiles single columns only, then the planner counts exactly the sets it needs: all
# pairs of a wide lattice cost a sketch each per row (SSB's 60 columns: 1,830 sketches, over
# 30 min at SF 1 on two cores), most of them for tiles nobody asks for.
PLAN_PROFILE_SIZE = 1


def planned_tiles(
    ctx: JobContext,
    lattice: Lattice,
    *,
    max_tiles: int | None = None,
    workload: WorkloadInput = None,
    progress: Callable[[str], None] | None = None,
    limits: Limits | None = None,
) -> tuple[Target, ...]:
    """The lattice's planned tiles (declared ones included, as declared); none unless the
    lattice asks for the algorithm. Statistics come from the lattice's provider (cached by the
    sources' Delta versions, so unchanged data is not profiled twice)."""
    if not lattice.algorithm:
        return ()
    from mvlattice.plan.planner import load_workload, plan_lattice
    from mvlattice.statistics.factory import provider_for

    stats = provider_for(
        ctx.spark, ctx.model, lattice, warehouse=ctx.warehouse, max_size=PLAN_PROFILE_SIZE,
        progress=progress,
    )  # fmt: skip
    from mvlattice.plan.columns import fact_keys

    plan = plan_lattice(
        lattice,
        stats,
        max_tiles=max_tiles,
        max_rows=limits.max_rows if limits is not None else None,
        workload=load_workload(workload, lattice),
        keys=fact_keys(ctx.model, lattice),
        budget=budget_for(ctx, lattice, limits),
    )
    if progress is not None:
        current = [spec_json(t.spec) for t in plan.tiles]
        change = plan_change(lattice.name, ctx.store.plan(lattice.name), current)
        if change:
            progress(change)
    return plan_targets(ctx, plan)


def plan_change(lattice: str, previous: list[dict] | None, current: list[dict]) -> str | None:
    """One line when a lattice's new plan is not its last one (a plan weighted by the query log
    moves as the log grows, and `gc` removes the tiles it drops); None when it is the same or
    there was none."""
    if previous is None:
        return None
    before = {json.dumps(t, sort_keys=True) for t in previous}
    after = {json.dumps(t, sort_keys=True) for t in current}
    added, dropped = len(after - before), len(before - after)
    if not added and not dropped:
        return None
    return (
        f"lattice '{lattice}': the plan changed since the last one: "
        f"{_tiles(added)} added, {_tiles(dropped)} dropped"
        + (" (`gc` removes dropped tiles)" if dropped else "")
    )


def _tiles(n: int) -> str:
    return f"{n} tile" if n == 1 else f"{n} tiles"


def budget_for(ctx: JobContext, lattice: Lattice, limits: Limits | None) -> Budget:
    """The byte budget of `limits` for `lattice`: bytes per value measured on its built tiles
    (Delta sizes over rows × stored columns), the fact table's bytes from Delta when a share
    is asked for (`plan.budget`)."""
    from mvlattice.jobs.catalog import catalog
    from mvlattice.plan.budget import measured_bytes_per_value, resolve

    built = [  # a measure is about one stored column (AVG: two; close enough for a budget)
        (e.size_bytes, e.rows, len(e.dimensions) + len(e.measures))
        for e in catalog(ctx, lattice.name)
        if e.kind == "tile" and e.size_bytes and e.rows
    ]
    wants_share = limits is not None and limits.max_share is not None
    return resolve(
        limits, measured_bytes_per_value(built), fact_bytes(ctx, lattice) if wants_share else None
    )


def fact_bytes(ctx: JobContext, lattice: Lattice) -> float | None:
    """The Delta size of the lattice's fact table (DESCRIBE DETAIL), None when not Delta."""
    from mvlattice.jobs.sources import read_name

    root = lattice.root
    table = ctx.model.table(root.schema, root.table)
    if table is None:
        return None
    try:
        row = ctx.spark.sql(f"DESCRIBE DETAIL {read_name(table)}").first()
    except Exception:  # noqa: BLE001 - not a Delta table: no size, so no share of it
        return None
    size = row["sizeInBytes"] if row is not None else None
    return float(size) if size else None


def plan_targets(ctx: JobContext, plan: LatticePlan) -> tuple[Target, ...]:
    """A plan's tiles as build targets, the plan remembered as its lattice's."""
    ctx.store.save_plan(plan.lattice.name, [spec_json(t.spec) for t in plan.tiles], ctx.clock())
    return tuple(
        tile_target(t.spec, ctx.warehouse, "declared" if t.declared else "planned", t.rows)
        for t in plan.tiles
    )
