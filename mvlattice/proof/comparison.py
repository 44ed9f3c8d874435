"""A query on the base tables versus rewritten onto tiles, the rewrite run on Spark and by the
default path (the tile engine when it can answer): times, the engine that answered, the tiles
used, and whether all give the same rows (as multisets, floats to a relative tolerance).

Every time is end to end through `Workspace.query`: rewriting, freshness and execution, as a
user waits for it. The benchmark (`bench/ssb.py`) and `mvlattice demo` print these; the tests
check them.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mvlattice.proof.compare import as_multiset, difference

if TYPE_CHECKING:
    from mvlattice.mvrewrite.rewriter import QueryResult
    from mvlattice.workspace import Workspace


@dataclass(kw_only=True, frozen=True, slots=True)
class Comparison:
    name: str
    base_s: float  # median over the runs, on Spark, not rewritten
    rewritten_s: float  # median over the runs, rewritten, the default engine ("auto")
    rewritten: bool
    same_result: bool  # base, rewritten on Spark and rewritten by default: the same rows
    tiles: tuple[str, ...]  # the materializations the rewritten query reads
    rows: int
    rewritten_spark_s: float = math.nan  # median over the runs, rewritten, run on Spark
    engine: str = "spark"  # who answered the default path: local (the tile engine) | spark
    engine_reason: str = ""  # why Spark answered the default path ("" when local did)
    # The first run of each (cold: Spark's first plan, the tile engine's first read of a tile)
    base_cold_s: float = math.nan
    rewritten_cold_s: float = math.nan
    rewritten_spark_cold_s: float = math.nan
    # Median over the runs of the default path with a new text each run (a numbering comment),
    # so no answer kept for an earlier text serves it: rewritten and run every time.
    rewritten_new_text_s: float = math.nan

    @property
    def speedup(self) -> float:
        return _ratio(self.base_s, self.rewritten_s)

    @property
    def speedup_new_text(self) -> float:
        return _ratio(self.base_s, self.rewritten_new_text_s)

    @property
    def speedup_spark(self) -> float:
        return _ratio(self.base_s, self.rewritten_spark_s)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "base_s": round(self.base_s, 4),
            "rewritten_s": round(self.rewritten_s, 4),
            "rewritten": self.rewritten,
            "same_result": self.same_result,
            "rewritten_spark_s": round(self.rewritten_spark_s, 4),
            "engine": self.engine,
            "engine_reason": self.engine_reason,
            "base_cold_s": round(self.base_cold_s, 4),
            "rewritten_cold_s": round(self.rewritten_cold_s, 4),
            "rewritten_spark_cold_s": round(self.rewritten_spark_cold_s, 4),
            "rewritten_new_text_s": round(self.rewritten_new_text_s, 4),
            "tiles": list(self.tiles),
            "rows": self.rows,
        }


def compare(ws: Workspace, name: str, sql: str, runs: int = 3) -> Comparison:
    """Run `sql` `runs` times each on the base tables, rewritten on Spark and rewritten by
    default (`engine="auto"`: after its first run, a kept answer), then by default under a new
    text each run (rewritten and run each time), in `ws`'s session and in that order."""
    last: dict[str, QueryResult] = {}

    def run(key: str, **options: Any) -> Callable[[], None]:
        def once() -> None:
            last[key] = ws.query(sql, **options)

        return once

    base_cold, base_s = cold_and_median(run("base", rewrite=False, engine="spark"), runs)
    spark_cold, spark_s = cold_and_median(run("spark", engine="spark"), runs)
    auto_cold, auto_s = cold_and_median(run("auto", engine="auto"), runs)
    texts = iter(range(1, 1 + max(1, runs)))

    def new_text() -> None:
        last["new"] = ws.query(f"/* run {next(texts)} */ {sql}", engine="auto")

    new_s = median_seconds(new_text, runs)
    base, spark, auto, new = last["base"], last["spark"], last["auto"], last["new"]
    same = all(same_rows(base.rows, r.rows) for r in (spark, auto, new))
    return Comparison(
        name=name,
        base_s=base_s,
        rewritten_s=auto_s,
        rewritten=auto.rewrite.rewritten,
        same_result=same,
        tiles=auto.rewrite.materializations,
        rows=len(base.rows),
        rewritten_spark_s=spark_s,
        engine=str(auto.engine),
        engine_reason=auto.engine_reason,
        base_cold_s=base_cold,
        rewritten_cold_s=auto_cold,
        rewritten_spark_cold_s=spark_cold,
        rewritten_new_text_s=new_s,
    )


def cold_and_median(run: Callable[[], object], runs: int) -> tuple[float, float]:
    """The first run's seconds, and the median of `runs` runs after it (the warm time)."""
    cold = median_seconds(run, 1)
    return cold, median_seconds(run, runs)


def median_seconds(run: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(max(1, runs)):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def same_rows(a: Iterable[Iterable[Any]], b: Iterable[Iterable[Any]]) -> bool:
    """Equal as multisets of rows, numbers within the differential tester's tolerance (sums in
    another order round differently)."""
    return difference(as_multiset(a), as_multiset(b)) == ""


def geomean(values: Iterable[float]) -> float:
    logs = [math.log(v) for v in values if v > 0]
    return math.exp(sum(logs) / len(logs)) if logs else math.nan


def _ratio(base: float, other: float) -> float:
    return base / other if other > 0 else math.inf
