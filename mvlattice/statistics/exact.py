"""Exact distinct counts over the star: a batch of column sets per Spark job.

Calcite's SQL statistic provider runs one query per column set. Here the star's needed columns
are cached once and each Spark job counts a batch of sets (`batch_size`, default 64) in a single
aggregate, so n sets take ⌈n / batch_size⌉ jobs over cached data instead of n scans of the
join. NULL is a value, exactly as in GROUP BY (see `counting_sql`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from mvlattice.errors import JobError
from mvlattice.lattice.lattice import Lattice
from mvlattice.lattice.statistic_provider import ColumnSet, Counts, ordered
from mvlattice.sql.quote import format_safe
from mvlattice.statistics.counting_sql import ROWS, exact_select, key_expression

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

Progress = Callable[[str], None]


class ExactCounter:
    """`SetCounter` with exact counts (NULL is a value, as in GROUP BY)."""

    exact = True
    description = "exact (batched GROUP BY)"

    def __init__(
        self,
        spark: SparkSession,
        lattice: Lattice,
        *,
        batch_size: int = 64,
        progress: Progress | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.spark = spark
        self.lattice = lattice
        self.batch_size = batch_size
        self.progress = progress or (lambda _line: None)
        self.jobs = 0  # Spark aggregate jobs run, for tests and benchmarks

    def count(self, column_sets: Sequence[ColumnSet]) -> Counts:
        sets = [ordered(s, self.lattice.labels) for s in dict.fromkeys(column_sets) if s]
        needed = tuple(c for c in self.lattice.labels if any(c in s for s in sets))
        star = run_job(lambda: self.spark.sql(self.lattice.star_sql(needed or None)))
        if len(sets) > self.batch_size:
            star = star.persist()
        try:
            if sets:
                rows, distinct = self._batches(star, sets)
            else:
                rows, distinct = int(run_job(star.count)), {}
                self.jobs += 1
        finally:
            star.unpersist()
        distinct[frozenset()] = min(1.0, rows)
        return Counts(rows, distinct, exact=True)

    def _batches(self, star: DataFrame, sets: list[tuple[str, ...]]) -> tuple[int, dict]:
        rows, distinct = 0, {}
        types = {f.name: f.dataType.simpleString() for f in star.schema.fields}
        batches = [sets[i : i + self.batch_size] for i in range(0, len(sets), self.batch_size)]
        for n, batch in enumerate(batches, start=1):
            if len(batches) > 1:
                self.progress(f"exact counts: batch {n}/{len(batches)} ({len(batch)} sets)")
            columns = tuple(c for c in self.lattice.labels if any(c in s for s in batch))
            # spark.sql(text, star=…) runs str.format on the text: braces in a label stay text.
            keys = {c: format_safe(key_expression(c, types[c])) for c in columns}
            text = exact_select("{star}", columns, batch, keys)
            result = run_job(partial(_collect, self.spark, text, star))
            self.jobs += 1
            by_sid = {int(r["sid"]): r for r in result}
            rows = max([rows] + [int(r[ROWS]) for r in result])
            for sid, s in enumerate(batch):
                found = by_sid.get(sid)
                distinct[frozenset(s)] = float(found["n"]) if found is not None else 0.0
        return rows, distinct


def _collect(spark: SparkSession, text: str, star: DataFrame) -> list:
    """Run `text` with `{star}` bound to the star's DataFrame (`spark.sql`'s arguments)."""
    return spark.sql(text, star=star).collect()


def run_job(action: Callable[[], Any]) -> Any:
    """Spark failures become one-line JobErrors."""
    from mvlattice.errors import MvlatticeError

    try:
        return action()
    except MvlatticeError:
        raise
    except Exception as exc:  # noqa: BLE001 - the JVM's failures arrive as many types
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise JobError(f"counting distinct values failed: {first}") from None
