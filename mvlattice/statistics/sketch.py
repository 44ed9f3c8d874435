"""The profiler's counter: one scan of the star sketches every requested column set.

Each column is hashed once (`counting_sql.column_hashes`, NULL-aware); every set then feeds the
64-bit hash of its columns' hashes into a HyperLogLog sketch — all in one aggregate, so a whole
level of the profile costs a single scan of the star, however many sets it holds.

Precision: DataSketches HLL (`hll_sketch_agg`) with lgConfigK = 16 (65,536 buckets) has a
relative standard error of about 1.04/√65536 ≈ 0.41 %, so ±2 % is about five standard errors
(lgConfigK 12, Spark's default, gives 1.6 % — too coarse for ±2 % on hundreds of sets). Small
cardinalities (up to a few thousand) are held as lists of coupons and come out nearly exact.
Measured: within 2 % of exact on FoodMart (tests/integration/test_profile.py) and on the
synthetic star of bench/profile.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from mvlattice.lattice.lattice import Lattice
from mvlattice.lattice.statistic_provider import ColumnSet, Counts, ordered
from mvlattice.statistics.counting_sql import ROWS, column_hashes, distinct_alias, sketch_select
from mvlattice.statistics.exact import run_job

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LG_CONFIG_K = 16
TOLERANCE = 0.02  # counts this close are "equal" when looking for keys and FDs in sketches


class SketchCounter:
    """`SetCounter` with HyperLogLog estimates; one Spark job per `count` call."""

    exact = False

    def __init__(
        self,
        spark: SparkSession,
        lattice: Lattice,
        *,
        lg_config_k: int = LG_CONFIG_K,
    ) -> None:
        if not 4 <= lg_config_k <= 21:
            raise ValueError("lgConfigK must be between 4 and 21")
        self.spark = spark
        self.lattice = lattice
        self.lg_config_k = lg_config_k
        self.jobs = 0

    @property
    def description(self) -> str:
        return f"HLL sketch (hll_sketch_agg), lgConfigK={self.lg_config_k}"

    def count(self, column_sets: Sequence[ColumnSet]) -> Counts:
        labels = self.lattice.labels
        sets = [ordered(s, labels) for s in dict.fromkeys(column_sets) if s]
        needed = tuple(c for c in labels if any(c in s for s in sets))
        star = "(" + self.lattice.star_sql(needed or None) + ") AS star"
        hashed = "(" + column_hashes(star, needed) + ") AS hashed"
        text = sketch_select(hashed, needed, sets, self.lg_config_k)
        row = run_job(lambda: self.spark.sql(text).first())
        self.jobs += 1
        rows = int(row[ROWS])
        distinct = {
            frozenset(s): _bounded(row[distinct_alias(i)], rows) for i, s in enumerate(sets)
        }
        distinct[frozenset()] = min(1.0, rows)
        return Counts(rows, distinct, exact=False)


def _bounded(estimate: float, rows: int) -> float:
    """A sketch can overshoot; no set has more distinct values than the star has rows."""
    return float(min(max(float(estimate), 1.0 if rows else 0.0), rows))
