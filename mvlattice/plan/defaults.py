"""Weights for a plan without a workload: what users ask of a star, by its hierarchies.

HRU96's default weighs every group-by alike, so a plan for nobody in particular builds tiles
such as (recyclable_package, low_fat). Without a workload we weigh instead:

- each level of a hierarchy (a dimension column that determines, or is determined by, another
  one of its dimension: month, quarter, category, family) LEVEL_WEIGHT; other dimension
  columns weigh nothing (they stay candidates, and a workload or a declared tile asks for them);
- each pair of levels from two different dimensions (family by month) PAIR_WEIGHT;
- each declared tile DECLARED_WEIGHT.

The candidate sets are closed under the hierarchies, so (family, month) also holds quarter and
year and answers the coarser questions too.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

from mvlattice.lattice.lattice import Lattice
from mvlattice.plan.candidates import canonical, canonical_labels
from mvlattice.plan.hierarchy import branch_of

LEVEL_WEIGHT = 1.0
PAIR_WEIGHT = 1.0
DECLARED_WEIGHT = 2.0

ColumnSet = frozenset[str]


def hierarchy_levels(
    dims: Sequence[str], determined: Mapping[str, frozenset[str]]
) -> tuple[str, ...]:
    """The dims in a hierarchy with another dim (constants are no level)."""
    known = set(dims)
    below = {d: determined.get(d, frozenset()) & known for d in dims}
    above = {x for d in dims for x in below[d]}
    return tuple(d for d in dims if below[d] or d in above)


def default_weights(
    lattice: Lattice, dims: Sequence[str], determined: Mapping[str, frozenset[str]]
) -> dict[ColumnSet, float]:
    branch = branch_of(lattice)
    levels = hierarchy_levels(dims, determined)
    out: dict[ColumnSet, float] = {}

    def add(columns: ColumnSet, weight: float) -> None:
        out[columns] = out.get(columns, 0.0) + weight

    for d in levels:
        add(frozenset((d,)), LEVEL_WEIGHT)
    for a, b in itertools.combinations(levels, 2):
        if branch[a] != branch[b]:
            add(frozenset((a, b)), PAIR_WEIGHT)
    canon = canonical_labels(lattice)
    for tile in lattice.tiles:
        add(canonical(tile.dimensions, canon), DECLARED_WEIGHT)
    return out
