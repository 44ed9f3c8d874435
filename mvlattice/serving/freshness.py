"""Which snapshot of each view a rewrite reads freshness approved, and the views' hits."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mvlattice.sql.refusal import Refusal

if TYPE_CHECKING:
    from mvlattice.jobs.catalog import ApprovedSnapshot, CatalogAvailability
    from mvlattice.serving.host import Host


def approved(
    host: Host, availability: CatalogAvailability, names: tuple[str, ...]
) -> dict[str, ApprovedSnapshot] | Refusal:
    """The snapshot freshness approved of each view the rewrite reads (a reader outside Spark
    reads exactly those), or why one has none."""
    snapshots = availability.approved
    found = {}
    for name in names:
        table = host.serving.catalog.table_of(name).lower()
        if table not in snapshots:
            return Refusal(f"freshness approved no snapshot of {table}")
        found[table] = snapshots[table]
    return found


def count_hits(host: Host, availability: CatalogAvailability, names: tuple[str, ...]) -> None:
    for name in names:
        availability.record_hit(host.serving.catalog.table_of(name))
