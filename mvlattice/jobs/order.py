"""In which order to build, and from what: the smallest finer tile that answers a tile, when
reading it is cheaper than reading the star (the linear cost model of HRU96 §3.1: the cost of
computing a view is the number of rows read)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mvlattice.jobs.targets import MATERIALIZATION, Target
from mvlattice.jobs.tilesql import can_build_from
from mvlattice.lattice.lattice import TileSpec
from mvlattice.model.nesting import dependency_order


@dataclass(frozen=True, slots=True)
class Ancestor:
    """A built tile that is current at the batch's source versions."""

    name: str  # qualified table name
    location: str
    spec: TileSpec
    rows: int
    version: int  # the tile table's own Delta version to read


def build_order(targets: Iterable[Target], lattices: Sequence[str] = ()) -> tuple[Target, ...]:
    """Materializations first (as declared, but each after the materializations it reads),
    then per lattice the tiles with more dimensions before those with fewer (an ancestor always
    has more), larger estimates first, then name."""
    pool = tuple(targets)
    rank = {name: i for i, name in enumerate(lattices)}
    views = _dependency_order([t for t in pool if t.kind == MATERIALIZATION])
    tiles = sorted(
        (t for t in pool if t.kind != MATERIALIZATION),
        key=lambda t: (
            rank.get(t.lattice or "", len(rank)),
            t.lattice or "",
            -len(t.spec.dimensions) if t.spec else 0,
            -(t.estimated_rows or 0.0),
            t.name,
        ),
    )
    return tuple(views + tiles)


def _dependency_order(views: list[Target]) -> list[Target]:
    by_key = {t.materialization.key: t for t in views if t.materialization is not None}
    reads = {key: t.materialization.reads for key, t in by_key.items() if t.materialization}
    ordered = [by_key[key] for key in dependency_order(reads)]  # the model refuses cycles
    return ordered + [t for t in views if t.materialization is None]


def cheapest_ancestor(
    spec: TileSpec, candidates: Iterable[Ancestor], star_rows: float | None
) -> Ancestor | None:
    """The smallest candidate that answers `spec`, if it has fewer rows than the star."""
    fits = [c for c in candidates if c.spec != spec and can_build_from(spec, c.spec)]
    best = min(fits, key=lambda c: (c.rows, c.name), default=None)
    if best is None or (star_rows is not None and best.rows >= star_rows):
        return None
    return best
