"""A query on the base tables versus rewritten onto tiles: times, the tiles used, and whether
both give the same rows (as multisets, floats to a relative tolerance).

The benchmark (`bench/ssb.py`) and `mvlattice demo` print these; the tests check them.
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
    from mvlattice.workspace import Workspace


@dataclass(kw_only=True, frozen=True, slots=True)
class Comparison:
    name: str
    base_s: float  # median over the runs
    rewritten_s: float  # median over the runs, rewriting included
    rewritten: bool
    same_result: bool
    tiles: tuple[str, ...]  # the materializations the rewritten query reads
    rows: int

    @property
    def speedup(self) -> float:
        return self.base_s / self.rewritten_s if self.rewritten_s > 0 else math.inf

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "base_s": round(self.base_s, 4),
            "rewritten_s": round(self.rewritten_s, 4),
            "rewritten": self.rewritten,
            "same_result": self.same_result,
        }


def compare(ws: Workspace, name: str, sql: str, runs: int = 3) -> Comparison:
    """Run `sql` `runs` times on the base tables and `runs` times rewritten, in `ws`'s session;
    the rewritten time includes rewriting, as a user of `query` would wait for it."""
    base_rows: list[tuple] = []
    out_rows: list[tuple] = []
    tiles: tuple[str, ...] = ()
    rewritten = False

    def base() -> None:
        base_rows[:] = ws.collect(ws.sql(sql))[1]

    def rewritten_run() -> None:
        nonlocal tiles, rewritten
        result = ws.rewrite(sql, explain=False)
        rewritten, tiles = result.rewritten, result.materializations
        out_rows[:] = ws.collect(ws.sql(result.sql))[1]

    base_s = median_seconds(base, runs)
    rewritten_s = median_seconds(rewritten_run, runs)
    same = same_rows(base_rows, out_rows)
    return Comparison(
        name=name,
        base_s=base_s,
        rewritten_s=rewritten_s,
        rewritten=rewritten,
        same_result=same,
        tiles=tiles,
        rows=len(base_rows),
    )


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
