"""The one rollup table (Calcite's SqlAggFunction.getRollup), shared by tile building, tile
selection and the rewriter.

A measure is stored in a tile as one or more *stored columns*; re-aggregating a finer tile to a
coarser grouping applies each stored column's rollup function; the measure's value is then an
expression over its stored columns.

    SUM(x)   -> sum_x  (SUM)            rollup SUM      value sum_x
    COUNT(*) -> count  (COUNT)          rollup SUM      value count
    COUNT(x) -> count_x                 rollup SUM      value count_x
    MIN(x)   -> min_x                   rollup MIN      value min_x
    MAX(x)   -> max_x                   rollup MAX      value max_x
    AVG(x)   -> sum_x, count_x          rollup SUM,SUM  value sum_x / count_x
    COUNT(DISTINCT x) -> count_distinct_x; cannot roll up, unless x is a grouping column of
                         the finer tile (then it is COUNT(DISTINCT x) over that tile's rows)
    APPROX_COUNT_DISTINCT(x)  (measure {agg: count, distinct: true, approximate: true})
             -> hll_sketch_x = HLL_SKETCH_AGG(CASE WHEN x IS NOT NULL THEN XXHASH64(x) END)
                rollup HLL_UNION_AGG   (`aggregates.sketch_input_sql`: any column type)
                value HLL_SKETCH_ESTIMATE(hll_sketch_x)   (`sketch_estimate`)

The sketch answers only APPROX_COUNT_DISTINCT: one estimate for another (DataSketches HLL, not
Spark's HyperLogLog++, so the numbers may differ slightly within the error bounds). An exact
COUNT(DISTINCT x) is never answered from a sketch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from mvlattice.lattice.lattice import Measure
from mvlattice.sql.aggregates import sketch_input_sql
from mvlattice.sql.quote import identifier

SKETCH_UNION = "hll_union_agg"  # the rollup of an HLL sketch column
SKETCH_ESTIMATE = "hll_sketch_estimate"  # sketch -> BIGINT, as APPROX_COUNT_DISTINCT returns


@dataclass(frozen=True, slots=True)
class StoredColumn:
    """A column a tile stores for a measure: its name, how it is computed from base rows
    (`agg` over `args`), and the function that rolls it up to a coarser grouping."""

    name: str
    agg: str
    args: tuple[str, ...]
    distinct: bool
    rollup: str | None  # None: cannot be re-aggregated


def column_name(label: str) -> str:
    """A Delta-safe column name for a lattice label ('t.quarter' -> 't__quarter')."""
    name = re.sub(r"[^0-9A-Za-z_]", "_", label.replace(".", "__"))
    return name.lower()


def stored_columns(measure: Measure) -> tuple[StoredColumn, ...]:
    agg, args = measure.agg, measure.args
    suffix = "_".join(column_name(a) for a in args)
    if measure.approximate or agg == "approx_count_distinct":
        return (StoredColumn(f"hll_sketch_{suffix}", "hll_sketch_agg", args, False, SKETCH_UNION),)
    if measure.distinct:
        return (StoredColumn(f"count_distinct_{suffix}", "count", args, True, None),)
    if agg == "avg":
        return (
            StoredColumn(f"sum_{suffix}", "sum", args, False, "sum"),
            StoredColumn(f"count_{suffix}", "count", args, False, "sum"),
        )
    name = f"{agg}_{suffix}" if args else agg
    rollup = {"sum": "sum", "count": "sum", "min": "min", "max": "max"}[agg]
    return (StoredColumn(name, agg, args, False, rollup),)


def base_aggregate_sql(column: StoredColumn, expressions: dict[str, str]) -> str:
    """SQL computing a stored column from base rows; `expressions` maps label -> SQL."""
    if not column.args:
        return "count(*)"
    inner = ", ".join(expressions[a] for a in column.args)
    if column.agg == "hll_sketch_agg":
        inner = sketch_input_sql(inner)
    return f"{column.agg}({'DISTINCT ' if column.distinct else ''}{inner})"


def rollup_sql(column: StoredColumn, quote: Callable[[str], str] = identifier) -> str:
    """SQL re-aggregating a stored column of a finer tile."""
    if column.rollup is None:
        raise ValueError(f"{column.name} cannot be rolled up")
    return f"{column.rollup}({quote(column.name)})"
