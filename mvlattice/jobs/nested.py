"""Materializations that read other materializations (`Materialization.reads`), as the jobs
see them. Pure.

- Order: an inner one is built before every one that reads it (`order.build_order`).
- Refreshing one refreshes the inner ones it reads first (`with_inners`): the outer's rows are
  computed from the inner's, so refreshing it alone over a stale inner would only copy the
  staleness. Refreshing an inner leaves its readers stale until they are refreshed too.
- Freshness is transitive (`through_inners`): an outer is recorded with each inner's Delta version
  and table id, like any source, so a rebuilt (or recreated) inner makes it stale; and an outer
  whose inner is itself behind its sources is not used either, whatever its own record says.
- Refresh of an outer is always full (`full_reason`): an inner's refresh rewrites its table (it is
  rebuilt in full, not appended to), so there are no appended rows to merge.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mvlattice.jobs.availability import ViewCode, ViewState
from mvlattice.jobs.changes import FULL, RefreshDecision
from mvlattice.jobs.freshness import Assessment
from mvlattice.jobs.status import TileStatus
from mvlattice.jobs.targets import Target
from mvlattice.model.nesting import closure


def with_inners(chosen: Target, pool: Iterable[Target]) -> tuple[Target, ...]:
    """`chosen` and the materializations of `pool` it reads, directly or not, inner first."""
    by_key = {t.materialization.key: t for t in pool if t.materialization is not None}
    if chosen.materialization is None:
        return (chosen,)
    reads = {key: t.materialization.reads for key, t in by_key.items() if t.materialization}
    keys = closure(reads, (chosen.materialization.key,))
    return tuple(by_key[k] for k in keys if k in by_key and k != chosen.materialization.key) + (
        chosen,
    )


def full_reason(target: Target, decision: RefreshDecision) -> RefreshDecision:
    """The decision for a materialization reading others, its full path explained."""
    m = target.materialization
    if m is None or not m.reads or decision.path != FULL:
        return decision
    why = (
        f"; it reads {', '.join(m.reads)}, whose refresh rewrites its table rather than "
        "appending to it, so nothing can be merged incrementally"
    )
    return RefreshDecision(decision.path, decision.reason + why)


def through_inners(
    own: Assessment,
    inners: Sequence[tuple[str, Assessment]],
    max_staleness: float | None,
) -> Assessment:
    """`own` (the outer's assessment from its own record) as its inner ones allow: usable only
    while each inner is fresh, or stale within the outer's own `maxStaleness`."""
    if not own.view.usable:
        return own
    for name, inner in inners:
        code = inner.view.code
        if code == ViewCode.FRESH and inner.view.usable:
            continue
        age = inner.staleness_seconds
        accepted = max_staleness is not None and age is not None and age <= max_staleness
        if code == ViewCode.STALE_ACCEPTED and accepted:
            message = f"reads {name}, stale {age:.0f}s (≤ {max_staleness:g}s)"
            view = ViewState(True, ViewCode.STALE_ACCEPTED, message)
            own = Assessment(own.status, view, own.changed + (name,), age)
            continue
        status = own.status if own.status == TileStatus.BUILDING else TileStatus.STALE
        message = (
            f"reads {name}, which is not fresh ({inner.view.message}); refreshing this one "
            f"refreshes {name} first"
        )
        return Assessment(
            status, ViewState(False, ViewCode.STALE, message), (name,), inner.staleness_seconds
        )
    return own
