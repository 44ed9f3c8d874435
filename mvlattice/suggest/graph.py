"""A block's join graph as stars: direct every join, then hang tables off their roots.

Each table with no many-to-one join out of it toward another is a root (a fact table); the
tables reachable from it form its star. A block whose joins form a cycle (e -> m -> m2 -> e),
or reach a table from two others (a diamond, not a tree), makes no star. Measures and columns
go to every star holding all the tables they read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from mvlattice.sql.aggregates import AGGREGATE_NAMES
from mvlattice.suggest.catalog_blocks import (
    AggCall,
    ColumnRef,
    QueryBlock,
    Skip,
)
from mvlattice.suggest.direction import DirectedJoin, Undecided, Uniqueness, direct
from mvlattice.suggest.star_shape import Path, Shape, Step
from mvlattice.suggest.table_catalog import Catalog

CYCLIC = "cyclic join"
NOT_A_TREE = "not a star (a table joined from two others)"

NodeColumn = tuple[Path, str]  # (node path, column)


@dataclass(frozen=True, slots=True)
class MeasureCall:
    """An aggregate over star columns; `args` empty for COUNT(*)."""

    agg: str
    args: tuple[NodeColumn, ...] = ()
    distinct: bool = False


@dataclass(frozen=True, slots=True)
class BlockStar:
    """One star of one block: its shape, where the block's aliases sit, what it computes."""

    shape: Shape
    aliases: Mapping[str, Path]
    measures: tuple[MeasureCall, ...]
    joins: tuple[DirectedJoin, ...]
    skipped_measures: tuple[str, ...] = ()  # aggregate calls no lattice measure can hold

    def __post_init__(self) -> None:
        object.__setattr__(self, "aliases", MappingProxyType(dict(self.aliases)))


def block_stars(
    block: QueryBlock, catalog: Catalog, uniqueness: Uniqueness | None = None
) -> tuple[BlockStar, ...] | Skip:
    """The stars of a usable block, or why it makes none."""
    if block.skip is not None:
        return block.skip
    joins = []
    for pair in block.joins:
        verdict = direct(pair, block.tables, catalog, uniqueness)
        if isinstance(verdict, Undecided):
            return Skip(verdict.reason, verdict.detail)
        joins.append(verdict)
    parent = _parents(block, joins)
    if isinstance(parent, Skip):
        return parent
    roots = [t.alias for t in block.tables if t.alias not in parent]
    return tuple(_star(block, root, joins) for root in dict.fromkeys(roots))


def _parents(block: QueryBlock, joins: list[DirectedJoin]) -> dict[str, DirectedJoin] | Skip:
    parent: dict[str, DirectedJoin] = {}
    for join in joins:
        if join.one in parent:
            tables = f"{join.one} from {parent[join.one].many} and {join.many}"
            return Skip(NOT_A_TREE, tables)
        parent[join.one] = join
    for alias in parent:
        seen = {alias}
        at = parent[alias].many
        while at in parent:
            if at in seen:
                return Skip(CYCLIC, " -> ".join(sorted(seen)))
            seen.add(at)
            at = parent[at].many
        if at == alias:
            return Skip(CYCLIC, alias)
    return parent


def _star(block: QueryBlock, root: str, joins: list[DirectedJoin]) -> BlockStar:
    aliases: dict[str, Path] = {root: ()}
    used: list[DirectedJoin] = []
    frontier = [root]
    while frontier:
        at = frontier.pop(0)
        for join in (j for j in joins if j.many == at and j.one not in aliases):
            table = block.table(join.one).key
            aliases[join.one] = aliases[at] + (Step.of(table, join.many_columns, join.one_columns),)
            used.append(join)
            frontier.append(join.one)
    shape = Shape(block.table(root).key, frozenset(p for p in aliases.values() if p))
    measures, skipped = _measures(block.aggregates, aliases)
    return BlockStar(shape, aliases, measures, tuple(used), skipped)


def _measures(
    calls: tuple[AggCall, ...], aliases: Mapping[str, Path]
) -> tuple[tuple[MeasureCall, ...], tuple[str, ...]]:
    measures, skipped = [], []
    for call in calls:
        if call.agg not in AGGREGATE_NAMES or call.args is None:
            skipped.append(call.text)
        elif all(a.alias in aliases for a in call.args):
            args = tuple(node_column(a, aliases) for a in call.args)
            measures.append(MeasureCall(call.agg, args, call.distinct))
    return tuple(dict.fromkeys(measures)), tuple(skipped)


def node_column(ref: ColumnRef, aliases: Mapping[str, Path]) -> NodeColumn:
    return (aliases[ref.alias], ref.column)
