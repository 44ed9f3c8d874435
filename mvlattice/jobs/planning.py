"""The tiles HRU96 chooses for a lattice (`algorithm: true`), as build targets; the plan is
remembered so the catalog can list planned tiles not built yet and `gc` can find dropped ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mvlattice.jobs.context import JobContext
from mvlattice.jobs.record import spec_json
from mvlattice.jobs.targets import Target, tile_target
from mvlattice.lattice.lattice import Lattice

if TYPE_CHECKING:
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
    plan = plan_lattice(
        lattice, stats, max_tiles=max_tiles, workload=load_workload(workload, lattice)
    )
    return plan_targets(ctx, plan)


def plan_targets(ctx: JobContext, plan: LatticePlan) -> tuple[Target, ...]:
    """A plan's tiles as build targets, the plan remembered as its lattice's."""
    ctx.store.save_plan(plan.lattice.name, [spec_json(t.spec) for t in plan.tiles], ctx.clock())
    return tuple(
        tile_target(t.spec, ctx.warehouse, "declared" if t.declared else "planned", t.rows)
        for t in plan.tiles
    )
