"""Stars from many queries into lattices (Calcite's LatticeSuggester, with and without evolve).

- Without merging, one lattice per distinct join graph (shape): queries with the same tables
  joined the same way share a lattice, whatever their aliases.
- With merging ("evolve"), stars on the same root table merge into one lattice whose shape is
  the union of their paths: a lattice grows as queries arrive. A table reached along different
  paths (a self-join, two roles of one dimension) stays two nodes.

Measures are the aggregate calls seen, each with the summed weight of the queries using it.
Existing lattices of a model are *seeds*: a star merges into the seed on its root (evolve) or
with its shape (no evolve) before a new lattice is made, so the model evolves in place.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from mvlattice.suggest.graph import BlockStar, MeasureCall
from mvlattice.suggest.star_shape import Path, Shape


@dataclass(frozen=True, slots=True)
class Seed:
    """An existing lattice the log may evolve."""

    name: str
    shape: Shape
    measures: tuple[MeasureCall, ...] = ()


@dataclass(frozen=True, slots=True)
class Contribution:
    """A star of a block of one logged query."""

    query: str
    weight: float
    star: BlockStar


@dataclass(frozen=True, slots=True)
class SuggestedLattice:
    shape: Shape
    measures: tuple[tuple[MeasureCall, float], ...]  # measure, summed weight of its queries
    queries: tuple[str, ...]  # ids of the queries behind it, first seen first
    weight: float = 0.0  # summed weight of those queries
    graphs: int = 0  # distinct join graphs merged into it
    decided: Mapping[Path, str] = field(default_factory=dict)  # node -> direction source
    seed: str | None = None  # the existing lattice it evolves
    query_nodes: Mapping[str, frozenset[tuple]] = field(default_factory=dict)  # path keys read
    unheld: tuple[tuple[str, int], ...] = ()  # aggregate calls no measure holds, with counts

    def __post_init__(self) -> None:
        object.__setattr__(self, "decided", MappingProxyType(dict(self.decided)))
        object.__setattr__(self, "query_nodes", MappingProxyType(dict(self.query_nodes)))

    def describe(self) -> str:
        return self.shape.describe()

    def describe_measures(self) -> str:
        """Calcite's notation: [COUNT(), SUM(emp.sal)] (lower-case function names)."""
        return "[" + ", ".join(describe_measure(self.shape, m) for m, _ in self.measures) + "]"


def describe_measure(shape: Shape, measure: MeasureCall) -> str:
    args = ", ".join(f"{shape.table(path)[1]}.{column}" for path, column in measure.args)
    return f"{measure.agg}({'DISTINCT ' if measure.distinct else ''}{args})"


def merge_stars(
    contributions: Iterable[Contribution], *, evolve: bool = True, seeds: tuple[Seed, ...] = ()
) -> tuple[SuggestedLattice, ...]:
    """Lattices from stars, seeds first (whether or not the log touched them), then new ones
    in order of their first query."""
    groups: dict[tuple, _Group] = {}
    for seed in seeds:
        groups.setdefault(_key(seed.shape, evolve), _Group(seed.shape, seed))
    for c in contributions:
        group = groups.setdefault(_key(c.star.shape, evolve), _Group(c.star.shape))
        group.add(c)
    return tuple(g.freeze() for g in groups.values())


def _key(shape: Shape, evolve: bool) -> tuple:
    root = tuple(x.lower() for x in shape.root)
    return ("root", root) if evolve else ("shape", shape.identity())


class _Group:
    """A lattice being built (mutable while the log is read; frozen at the end)."""

    def __init__(self, shape: Shape, seed: Seed | None = None) -> None:
        self.shape = shape
        self.seed = seed
        self.measures: dict[MeasureCall, float] = {m: 0.0 for m in (seed.measures if seed else ())}
        self.queries: dict[str, float] = {}
        self.graphs: set[tuple] = set()
        self.decided: dict[tuple, tuple[Path, str]] = {}
        self.nodes: dict[str, set[tuple]] = {}
        self.unheld: dict[str, int] = {}

    def add(self, c: Contribution) -> None:
        star = c.star
        self.shape = self.shape.union(star.shape)
        self.graphs.add(star.shape.identity())
        if c.query not in self.queries:
            self.queries[c.query] = c.weight
            for measure in star.measures:
                self.measures[measure] = self.measures.get(measure, 0.0) + c.weight
        else:
            for measure in star.measures:
                self.measures.setdefault(measure, c.weight)
        self.nodes.setdefault(c.query, set()).update(_path_key(p) for p in star.aliases.values())
        for text in star.skipped_measures:
            self.unheld[text] = self.unheld.get(text, 0) + 1
        for join in star.joins:
            path = star.aliases[join.one]
            self.decided.setdefault(_path_key(path), (path, join.source))

    def freeze(self) -> SuggestedLattice:
        canonical = {_path_key(p): p for p in self.shape.paths}
        decided = {canonical[k]: source for k, (_, source) in self.decided.items()}
        measures = tuple((_canonical_measure(m, canonical), w) for m, w in self.measures.items())
        return SuggestedLattice(
            self.shape,
            _merge_measures(measures),
            tuple(self.queries),
            sum(self.queries.values()),
            len(self.graphs),
            decided,
            self.seed.name if self.seed else None,
            {q: frozenset(keys) for q, keys in self.nodes.items()},
            tuple(sorted(self.unheld.items(), key=lambda kv: (-kv[1], kv[0]))),
        )


def _path_key(path: Path) -> tuple:
    return tuple(step.key() for step in path)


def _canonical_measure(measure: MeasureCall, canonical: Mapping[tuple, Path]) -> MeasureCall:
    args = tuple((canonical.get(_path_key(p), p), c) for p, c in measure.args)
    return MeasureCall(measure.agg, args, measure.distinct)


def _merge_measures(
    measures: tuple[tuple[MeasureCall, float], ...],
) -> tuple[tuple[MeasureCall, float], ...]:
    """Measures equal up to the case of names, summed, in order first seen."""
    out: dict[tuple, tuple[MeasureCall, float]] = {}
    for measure, weight in measures:
        key = (
            measure.agg,
            measure.distinct,
            tuple((_path_key(p), c.lower()) for p, c in measure.args),
        )
        if key in out:
            out[key] = (out[key][0], out[key][1] + weight)
        else:
            out[key] = (measure, weight)
    return tuple(out.values())
