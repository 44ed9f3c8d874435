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


# What a tile's sketch hashes: the 64-bit xxhash64 of the value, NULL for NULL. hll_sketch_agg
# takes only INT, BIGINT, STRING and BINARY; xxhash64 takes every type a lattice column can have
# (DATE, TIMESTAMP by its instant so not by the session time zone, DECIMAL at its type's scale,
# DOUBLE with -0.0 as 0.0 as GROUP BY does). Without the CASE a NULL would be hashed (to the
# seed) and counted. The same spelling for every type, so it needs no column types and every
# build, rollup and append of a tile sketches alike (mergeable). A collision of two values'
# hashes (~n²/2⁶⁵) is far below the sketch's own error.
def sketch_input_sql(value: str) -> str:
    return f"CASE WHEN {value} IS NOT NULL THEN xxhash64({value}) END"


def sketched_value(node: exp.Expr) -> exp.Expr:
    """The value whose distinct count HLL_SKETCH_AGG(`node`) sketches: `x` of
    `sketch_input_sql(x)`, else `node` itself (a sketch of the raw column)."""
    if not isinstance(node, exp.Case) or node.this is not None or node.args.get("default"):
        return node
    ifs = node.args.get("ifs") or []
    if len(ifs) != 1:
        return node
    cond, then = ifs[0].this, ifs[0].args.get("true")
    if not (isinstance(cond, exp.Not) and isinstance(cond.this, exp.Is)):
        return node
    value = cond.this.this
    if not isinstance(cond.this.expression, exp.Null):
        return node
    hashed = isinstance(then, exp.Anonymous) and then.name.lower() == "xxhash64"
    if hashed and len(then.expressions) == 1 and then.expressions[0] == value:
        return value
    return node


def is_aggregate_call(node: exp.Expr) -> bool:
    return isinstance(node, exp.AggFunc) or sketch_function(node) is not None
