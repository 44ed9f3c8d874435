"""Which chosen tile answers a workload query, and the measures tiles carry for the queries
they are chosen for.

A tile answers a query when it groups by every column the query needs (join-equal columns
count as one) and stores every column its aggregates need (AVG as SUM and COUNT; COUNT(*) as
`count`): compared by stored column names (`lattice.measures`), as tiles are built and matched.
A query goes to the smallest tile that answers it; when none does, the smallest planned (not
declared) tile with its columns takes the query's measures — the measures the workload
aggregates, so that the plan's tiles answer what they were chosen for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from mvlattice.lattice.lattice import Lattice, Measure
from mvlattice.lattice.measures import stored_columns
from mvlattice.plan.candidates import canonical, canonical_labels
from mvlattice.plan.workload import WorkloadQuery


@dataclass(frozen=True, slots=True)
class TileFacts:
    """What answering needs of a tile: its dimensions, measures, rows, whether declared."""

    dimensions: tuple[str, ...]
    measures: tuple[Measure, ...]
    rows: float
    declared: bool = False


def stored_names(measures: Iterable[Measure]) -> frozenset[str]:
    return frozenset(c.name for m in measures for c in stored_columns(m))


def answers(tile: TileFacts, query: WorkloadQuery, canon: Mapping[str, str]) -> bool:
    if query.measures is None:
        return False
    if not canonical(query.columns, canon) <= canonical(tile.dimensions, canon):
        return False
    return stored_names(query.measures) <= stored_names(tile.measures)


def answering(
    tiles: Sequence[TileFacts], query: WorkloadQuery, canon: Mapping[str, str]
) -> TileFacts | None:
    """The smallest tile answering the query, or None (the query reads the star)."""
    fits = [t for t in tiles if answers(t, query, canon)]
    return min(fits, key=lambda t: t.rows, default=None)


def with_workload_measures(
    lattice: Lattice, tiles: Sequence[TileFacts], queries: Iterable[WorkloadQuery]
) -> tuple[TileFacts, ...]:
    """`tiles` with the measures of the queries each is chosen for added (module docstring)."""
    canon = canonical_labels(lattice)
    out = list(tiles)
    ordered = sorted(queries, key=lambda q: -q.weight)
    for query in ordered:
        if query.measures is None or answering(out, query, canon) is not None:
            continue
        wanted = canonical(query.columns, canon)
        room = [
            i
            for i, t in enumerate(out)
            if not t.declared and wanted <= canonical(t.dimensions, canon)
        ]
        if not room:
            continue
        i = min(room, key=lambda j: out[j].rows)
        added = tuple(dict.fromkeys((*out[i].measures, *sorted(query.measures, key=str))))
        out[i] = replace(out[i], measures=added)
    return tuple(out)
