"""The aggregate functions mvlattice reasons about — the ONE list.

A lattice measure, a rewritable aggregate call and a measure the suggester proposes are all one
of these five: each rolls up from a finer tile (AVG through SUM and COUNT), which is what makes
a tile answer a coarser query. The order is the documented one (Calcite's measures), used in
messages.
"""

from __future__ import annotations

from types import MappingProxyType

from sqlglot import exp

AGGREGATE_NAMES: tuple[str, ...] = ("count", "sum", "min", "max", "avg")

# name -> the sqlglot node that spells it, and back
AGGREGATE_NODES: MappingProxyType[str, type[exp.AggFunc]] = MappingProxyType(
    {"count": exp.Count, "sum": exp.Sum, "min": exp.Min, "max": exp.Max, "avg": exp.Avg}
)
AGGREGATE_OF_NODE: MappingProxyType[type[exp.Expr], str] = MappingProxyType(
    {node: name for name, node in AGGREGATE_NODES.items()}
)
