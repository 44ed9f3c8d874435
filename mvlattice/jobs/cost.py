"""Incremental or full: the estimated cost of each, in rows read (the linear cost model of
HRU96 §3.1 that `order` uses to pick an ancestor).

An incremental refresh reads the tile and its share of the change (the change is aggregated
once per lattice and batch; each tile's delta is rolled up from that); a full one reads its
cheapest source, a current finer tile or the star. Both write the whole tile, so the writing
cancels out. The change's rows come from the added files' statistics or the commits'
operationMetrics; unknown, the incremental path is taken (it was decided correct, and changes
are usually small). Full is chosen only when it reads at least MIN_SAVING fewer rows: below
that both paths cost Spark's fixed per-job work, whatever their rows. A merge that runs
in-process (`local_merge`) pays none of that work — a rollup on Spark costs about a second
before it reads a row — so against it full must save LOCAL_MIN_SAVING rows, about what Spark
reads in that second.
"""

from __future__ import annotations

from dataclasses import dataclass

from mvlattice.jobs.status import RefreshPath

MIN_SAVING = 100_000  # rows a full refresh must save to be chosen over an incremental one
LOCAL_MIN_SAVING = 2_000_000  # the same, against a merge run in-process


@dataclass(frozen=True, slots=True, kw_only=True)
class Estimate:
    """The two costs of bringing one tile up to date, and the path chosen."""

    incremental_rows: int | None  # the tile + the change's rows; None: not known
    full_rows: int | None  # the rows of the full path's source; None: not known
    full_from: str  # "star" or the finer tile a full refresh rolls up
    choice: RefreshPath  # INCREMENTAL or FULL
    why: str

    def describe(self) -> str:
        return (
            f"incremental ~{_rows(self.incremental_rows)} rows read, "
            f"full ~{_rows(self.full_rows)} from {self.full_from}: {self.choice}"
        )


def choose(
    *,
    tile_rows: int | None,
    change_rows: int | None,
    full_rows: int | None,
    full_from: str,
    blocker: str | None = None,
    min_saving: int = MIN_SAVING,
) -> Estimate:
    """The cheaper path for a tile an incremental refresh could bring up to date; `blocker`
    says why its measures cannot take this change (then full, whatever the costs);
    `min_saving`: the rows full must save to be chosen (LOCAL_MIN_SAVING when the merge
    would run in-process)."""
    incremental = None if tile_rows is None or change_rows is None else tile_rows + change_rows
    if blocker is not None:
        return Estimate(
            incremental_rows=incremental,
            full_rows=full_rows,
            full_from=full_from,
            choice=RefreshPath.FULL,
            why=blocker,
        )
    if incremental is not None and full_rows is not None and full_rows + min_saving <= incremental:
        choice, why = RefreshPath.FULL, "a full refresh reads fewer rows"
    else:
        choice, why = RefreshPath.INCREMENTAL, "an incremental refresh reads fewer rows"
        if incremental is None or full_rows is None:
            why = "the change's size is not known: incremental"
    return Estimate(
        incremental_rows=incremental,
        full_rows=full_rows,
        full_from=full_from,
        choice=choice,
        why=why,
    )


def _rows(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"
