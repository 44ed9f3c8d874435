"""An existing lattice as the suggester's starting point: its shape, aliases and measures."""

from __future__ import annotations

from dataclasses import dataclass

from mvlattice.lattice.lattice import Lattice, LatticeColumn
from mvlattice.suggest.graph import MeasureCall
from mvlattice.suggest.merge import Seed
from mvlattice.suggest.star_shape import Path, Shape, Step
from mvlattice.suggest.stated_lattice import Derived, PathKey, path_key


@dataclass(frozen=True, slots=True)
class SeedInfo:
    seed: Seed
    lattice: Lattice
    aliases: dict[PathKey, str]
    derived: tuple[Derived, ...]
    columns: tuple[LatticeColumn, ...]


def seed_from_lattice(lattice: Lattice) -> SeedInfo:
    paths: dict[str, Path] = {lattice.root.alias: ()}
    for node in lattice.nodes[1:]:
        edge = next(e for e in lattice.edges if e.target == node.alias)
        step = Step.of((node.schema, node.table), edge.source_columns, edge.target_columns)
        paths[node.alias] = paths[edge.source] + (step,)
    root = lattice.root
    shape = Shape((root.schema, root.table), frozenset(p for p in paths.values() if p))
    measures = []
    for m in lattice.default_measures:
        columns = [lattice.column(a) for a in m.args]
        if all(c.alias is not None and c.column is not None for c in columns):
            args = tuple((paths[c.alias], c.column) for c in columns if c.alias and c.column)
            measures.append(MeasureCall(m.agg, args, m.distinct))
    derived = tuple(Derived(c.label, c.expression) for c in lattice.columns if c.derived)
    return SeedInfo(
        Seed(lattice.name, shape, tuple(measures)),
        lattice,
        {path_key(p): alias for alias, p in paths.items()},
        derived,
        lattice.columns,
    )
