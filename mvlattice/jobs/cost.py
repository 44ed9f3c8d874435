"""Incremental, partitions or full: the estimated cost of each, in rows read (the linear cost
model of HRU96 §3.1 that `order` uses to pick an ancestor).

An incremental refresh reads the tile and its share of the change (the change is aggregated
once per lattice and batch; each tile's delta is rolled up from that); a full one reads its
cheapest source, a current finer tile or the star. Both write the whole tile, so the writing
cancels out. The change's rows come from the added files' statistics or the commits'
operationMetrics; unknown, the incremental path is taken (it was decided correct, and changes
are usually small). Full is chosen only when it reads at least MIN_SAVING fewer rows: below
that both paths cost Spark's fixed per-job work, whatever their rows. A merge that runs
in-process (`local_merge`) pays none of that work — a rollup on Spark costs about a second
before it reads a row — so against it full must save LOCAL_MIN_SAVING rows, about what Spark
reads in that second. The partitions path (`partitions`) reads the tile and the fact table's
touched partitions; it is the way a change incremental refresh cannot take (deletes without the
change data feed, MIN/MAX or distinct counts under deletes) avoids reading the whole star.
"""

from __future__ import annotations

from dataclasses import dataclass

from mvlattice.jobs.status import RefreshPath

MIN_SAVING = 100_000  # rows a full refresh must save to be chosen over an incremental one
LOCAL_MIN_SAVING = 2_000_000  # the same, against a merge run in-process


@dataclass(frozen=True, slots=True, kw_only=True)
class Estimate:
    """The costs of bringing one tile up to date by each correct path, and the path chosen."""

    incremental_rows: int | None  # the tile + the change's rows; None: not known
    full_rows: int | None  # the rows of the full path's source; None: not known
    full_from: str  # "star" or the finer tile a full refresh rolls up
    choice: RefreshPath  # INCREMENTAL, FULL or PARTITIONS
    why: str
    # The tile + the rows of the fact table's touched partitions, when the partitions path is
    # correct (see `partitions`); None: it is not, or the rows are not known.
    partition_rows: int | None = None
    partitions: bool = False  # whether the partitions path is correct

    def describe(self) -> str:
        parts = []
        if self.incremental_rows is not None or self.choice == RefreshPath.INCREMENTAL:
            parts.append(f"incremental ~{_rows(self.incremental_rows)} rows read")
        if self.partitions:
            parts.append(f"partitions ~{_rows(self.partition_rows)}")
        parts.append(f"full ~{_rows(self.full_rows)} from {self.full_from}")
        return ", ".join(parts) + f": {self.choice}"


def choose(
    *,
    tile_rows: int | None,
    change_rows: int | None,
    full_rows: int | None,
    full_from: str,
    blocker: str | None = None,
    min_saving: int = MIN_SAVING,
    partitions: bool = False,
    partition_rows: int | None = None,
) -> Estimate:
    """The cheapest correct path for a tile. `blocker` says why an incremental refresh cannot
    take this change (then full or partitions, whatever the change costs); `min_saving`: the
    rows another path must save to be chosen over incremental (LOCAL_MIN_SAVING when the merge
    would run in-process); `partitions`: the partitions path is correct, reading
    `partition_rows` rows of the fact table's touched partitions (None: not known)."""
    incremental = None if tile_rows is None or change_rows is None else tile_rows + change_rows
    by_partitions = None
    if tile_rows is not None and partition_rows is not None:
        by_partitions = tile_rows + partition_rows
    choice, why = _choice(incremental, full_rows, full_from, blocker, min_saving,
                          partitions, by_partitions)  # fmt: skip
    return Estimate(
        incremental_rows=incremental,
        full_rows=full_rows,
        full_from=full_from,
        choice=choice,
        why=why,
        partition_rows=by_partitions,
        partitions=partitions,
    )


def _choice(
    incremental: int | None,
    full_rows: int | None,
    full_from: str,
    blocker: str | None,
    min_saving: int,
    partitions: bool,
    by_partitions: int | None,
) -> tuple[RefreshPath, str]:
    full, by_parts = RefreshPath.FULL, RefreshPath.PARTITIONS
    if blocker is not None:
        if not partitions:
            return full, blocker
        if by_partitions is not None and full_rows is not None:
            if by_partitions < full_rows:
                return by_parts, f"{blocker}; recomputing the touched partitions reads fewer rows"
            return full, f"{blocker}; a full refresh reads fewer rows than the touched partitions"
        if full_from == "star":  # the touched partitions are at most the whole star
            return by_parts, f"{blocker}; the touched partitions are read, not the whole star"
        return full, f"{blocker}; the touched partitions' size is not known: full"
    others = [(rows, path) for rows, path in ((full_rows, full), (by_partitions, by_parts))
              if rows is not None]  # fmt: skip
    if incremental is not None and others:
        rows, path = min(others, key=lambda item: item[0])
        if rows + min_saving <= incremental:
            return path, f"a {path} refresh reads fewer rows"
    if incremental is None or full_rows is None:
        return RefreshPath.INCREMENTAL, "the change's size is not known: incremental"
    return RefreshPath.INCREMENTAL, "an incremental refresh reads fewer rows"


def _rows(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"
