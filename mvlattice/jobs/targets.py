"""What the jobs build: tiles of lattices and the model's declared materializations.

A `Target` names the Delta table it lives in (`mvlattice.<tile>` or `schema.table`), where its
files are, and what defines it. Pure values; nothing here touches Spark.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mvlattice.document import suggest
from mvlattice.errors import NotFoundError
from mvlattice.jobs.naming import (
    TILE_DATABASE,
    TILES,
    inside_warehouse,
    materialization_location,
    tile_location,
    tile_table_name,
)
from mvlattice.lattice.lattice import Lattice, RefreshPolicy, TileSpec
from mvlattice.model.loader import Materialization, Model

TILE = "tile"
MATERIALIZATION = "materialization"
ORIGINS = ("declared", "planned", "auto")


@dataclass(kw_only=True, frozen=True, slots=True)
class Target:
    """A tile (`spec` set) or a declared materialization (`materialization` set)."""

    name: str  # qualified table name, e.g. mvlattice.star__the_year__1a2b3c or adhoc.mv
    kind: str
    location: str
    spec: TileSpec | None = None
    materialization: Materialization | None = None
    origin: str = "declared"
    estimated_rows: float | None = None

    def __post_init__(self) -> None:
        if (self.kind == TILE) != (self.spec is not None):
            raise ValueError("a tile target needs a TileSpec, a materialization none")
        if self.origin not in ORIGINS:
            raise ValueError(f"unknown origin '{self.origin}'")

    @property
    def lattice(self) -> str | None:
        return self.spec.lattice if self.spec is not None else None

    @property
    def table(self) -> str:
        """The unqualified table name."""
        return self.name.rpartition(".")[2]


def tile_target(
    spec: TileSpec, warehouse: str, origin: str = "declared", rows: float | None = None
) -> Target:
    name = f"{TILE_DATABASE}.{tile_table_name(spec)}"
    return Target(
        name=name,
        kind=TILE,
        location=tile_location(warehouse, spec),
        spec=spec,
        materialization=None,
        origin=origin,
        estimated_rows=rows,
    )


def materialization_target(m: Materialization, warehouse: str) -> Target:
    location = materialization_location(warehouse, m.schema, m.table)
    return Target(
        name=f"{m.schema}.{m.table}",
        kind=MATERIALIZATION,
        location=location,
        spec=None,
        materialization=m,
    )


def tile_location_of(warehouse: str, table: str) -> str:
    """Where the tile table `table` (unqualified) lives; the inverse of naming's location."""
    return inside_warehouse(warehouse, TILES, (table,))


def declared_targets(
    model: Model, warehouse: str, lattice: str | None = None
) -> tuple[Target, ...]:
    """Declared materializations (unless a lattice is named) and every declared tile."""
    # Freshness asks on every query; a model never changes once loaded, so its targets are
    # made once per (model object, warehouse, lattice).
    key = (id(model), warehouse, lattice)
    found = _DECLARED.get(key)
    if found is not None and found[0] is model:
        return found[1]
    targets = _declared_targets(model, warehouse, lattice)
    if len(_DECLARED) >= _DECLARED_LIMIT:
        _DECLARED.clear()
    _DECLARED[key] = (model, targets)
    return targets


_DECLARED: dict[tuple[int, str, str | None], tuple[Model, tuple[Target, ...]]] = {}
_DECLARED_LIMIT = 256


def _declared_targets(model: Model, warehouse: str, lattice: str | None) -> tuple[Target, ...]:
    found: list[Target] = []
    if lattice is None:
        found.extend(materialization_target(m, warehouse) for m in model.materializations)
    for lat in lattices_of(model, lattice):
        found.extend(tile_target(spec, warehouse) for spec in lat.tiles)
    return unique(found)


def declared_spec(model: Model, spec: TileSpec) -> TileSpec:
    """The model's declared tile equal to `spec` (so with its `name:`), else `spec`: a plan
    keeps no names, and a declared tile read back from it must keep its table."""
    for lat in model.lattices:
        if lat.name == spec.lattice:
            return next((tile for tile in lat.tiles if tile == spec), spec)
    return spec


def lattices_of(model: Model, lattice: str | None) -> tuple[Lattice, ...]:
    """All lattices, or the one named (NotFoundError with a suggestion when unknown)."""
    return model.lattices if lattice is None else (model.lattice(lattice),)


def unique(targets: Iterable[Target]) -> tuple[Target, ...]:
    """Targets without repeats; the first occurrence wins (declared before planned)."""
    seen: dict[str, Target] = {}
    for target in targets:
        seen.setdefault(target.name, target)
    return tuple(seen.values())


def find_target(targets: Iterable[Target], name: str) -> Target:
    """A target by qualified or unqualified table name, or by materialization name."""
    pool = tuple(targets)
    wanted = name.lower()
    for target in pool:
        names = {target.name.lower(), target.table.lower()}
        if target.materialization is not None:
            names.add(target.materialization.name.lower())
        if target.spec is not None and target.spec.name is not None:
            names.add(target.spec.name)  # a tile's `name:` (unique in the model)
        if wanted in names:
            return target
    known = [t.name for t in pool]
    raise NotFoundError(f"no tile or materialization '{name}'" + suggest(name, known))


def policy_for(model: Model, target: Target) -> RefreshPolicy:
    """When to refresh and how stale the target may be: its lattice's or its own."""
    if target.materialization is not None:
        m = target.materialization
        return RefreshPolicy(m.cron, m.max_staleness_seconds, m.vacuum_retention_seconds)
    assert target.spec is not None
    return model.lattice(target.spec.lattice).refresh
