"""A query on the base tables versus rewritten onto tiles: times, the tiles used, and whether
both give the same rows (as multisets, floats to a relative tolerance).

The benchmark (`bench/ssb.py`) and `mvlattice demo` print these; the tests check them.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mvlattice.workspace import Workspace

REL_TOL = 1e-9


@dataclass(frozen=True, slots=True)
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
    return Comparison(name, base_s, rewritten_s, rewritten, same, tiles, len(base_rows))


def median_seconds(run: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(max(1, runs)):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def same_rows(a: Sequence[Sequence[Any]], b: Sequence[Sequence[Any]], rel: float = REL_TOL) -> bool:
    """Equal as multisets of rows; floats equal to a relative tolerance (sums in another order
    round differently). Rows are sorted on a key with floats rounded, then compared in pairs."""
    if len(a) != len(b):
        return False
    left, right = sorted(a, key=_sort_key), sorted(b, key=_sort_key)
    return all(_same_row(x, y, rel) for x, y in zip(left, right, strict=True))


def _same_row(x: Sequence[Any], y: Sequence[Any], rel: float) -> bool:
    if len(x) != len(y):
        return False
    return all(_same_value(u, v, rel) for u, v in zip(x, y, strict=True))


def _same_value(u: Any, v: Any, rel: float) -> bool:
    if isinstance(u, float) or isinstance(v, float):
        if u is None or v is None:
            return u is v
        return math.isclose(float(u), float(v), rel_tol=rel, abs_tol=rel)
    return bool(u == v)


def _sort_key(row: Sequence[Any]) -> tuple:
    # None first, then numbers (floats rounded so near-equal ones sort alike), then text.
    return tuple(_value_key(v) for v in row)


def _value_key(v: Any) -> tuple:
    if v is None:
        return (0, 0, "")
    if isinstance(v, bool | int | float):
        return (1, float(f"{float(v):.6g}"), "")
    return (2, 0, str(v))


def geomean(values: Iterable[float]) -> float:
    logs = [math.log(v) for v in values if v > 0]
    return math.exp(sum(logs) / len(logs)) if logs else math.nan
