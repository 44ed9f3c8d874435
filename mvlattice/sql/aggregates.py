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

# Approximate distinct counts: a query's APPROX_COUNT_DISTINCT(x), the HLL sketch a tile stores
# for the measure {agg: count, distinct: true, approximate: true} (HLL_SKETCH_AGG(x)) and the
# sketch's rollup (HLL_UNION_AGG(sketch)). Rewritable aggregate calls, not lattice measures.
SKETCH_AGGREGATES: tuple[str, ...] = ("approx_count_distinct", "hll_sketch_agg", "hll_union_agg")
IR_AGGREGATE_NAMES: tuple[str, ...] = AGGREGATE_NAMES + SKETCH_AGGREGATES

# name -> the sqlglot node that spells it, and back
AGGREGATE_NODES: MappingProxyType[str, type[exp.AggFunc]] = MappingProxyType(
    {
        "count": exp.Count,
        "sum": exp.Sum,
        "min": exp.Min,
        "max": exp.Max,
        "avg": exp.Avg,
        "approx_count_distinct": exp.ApproxDistinct,
    }
)
AGGREGATE_OF_NODE: MappingProxyType[type[exp.Expr], str] = MappingProxyType(
    {node: name for name, node in AGGREGATE_NODES.items()}
)


def sketch_function(node: exp.Expr) -> str | None:
    """The name of an HLL sketch aggregate sqlglot parses as an anonymous function."""
    if isinstance(node, exp.Anonymous) and node.name.lower() in SKETCH_AGGREGATES:
        return node.name.lower()
    return None


def is_aggregate_call(node: exp.Expr) -> bool:
    return isinstance(node, exp.AggFunc) or sketch_function(node) is not None
