"""A star as the query generator sees it: its tables (nodes), how they join, and the columns
a query may group by, filter on and aggregate, each with values seen in the data.

Pure values, no Spark: `mvlattice.proof.stars` reads them from a star's data once.
"""

from __future__ import annotations

from dataclasses import dataclass

DIM, MEASURE = "dim", "measure"
INT, NUM, STRING, DATE, BOOL, TS = "int", "num", "string", "date", "bool", "timestamp"


@dataclass(frozen=True, slots=True)
class Node:
    alias: str
    table: str  # schema.table
    parent: str | None  # the alias it joins to; None for the fact table
    on: tuple[tuple[str, str], ...] = ()  # (parent's column, own column) pairs
    in_lattice: bool = True  # tables outside the lattice are joined back by compensation


@dataclass(kw_only=True, frozen=True, slots=True)
class Col:
    alias: str  # the node it belongs to (derived columns: the fact's)
    name: str
    label: str  # its lattice label ("" when tiles cannot hold it)
    kind: str  # DIM or MEASURE
    type: str  # INT, NUM, STRING, DATE, TS or BOOL
    values: tuple[str, ...]  # SQL literals seen in the data, for filters; never empty
    expr: str = ""  # a derived column: its expression over node aliases
    # A column derived from another one (`of`): a time grain of it (`grain`: "day", "year",
    # ...), or a lossless cast of it (grain ""). Queries near a view may ask for `of` itself.
    of: Col | None = None
    grain: str = ""

    @property
    def sql(self) -> str:
        return f"({self.expr})" if self.expr else f"{self.alias}.{self.name}"

    def nodes(self) -> tuple[str, ...]:
        """The aliases the column reads (a derived column may read several)."""
        return (self.alias,)


@dataclass(frozen=True, slots=True)
class Shape:
    name: str
    lattice: str  # the lattice's name in the generated model
    nodes: tuple[Node, ...]  # the fact table first
    columns: tuple[Col, ...]
    big: bool = False  # ungrouped queries get ORDER BY … LIMIT (results stay small)

    def __post_init__(self) -> None:
        aliases = {n.alias for n in self.nodes}
        if self.nodes[0].parent is not None:
            raise ValueError("the first node must be the fact table")
        for col in self.columns:
            if col.alias not in aliases or not col.values:
                raise ValueError(f"column {col.alias}.{col.name}: unknown alias or no values")

    @property
    def fact(self) -> Node:
        return self.nodes[0]

    def node(self, alias: str) -> Node:
        return next(n for n in self.nodes if n.alias == alias)

    def dims(self) -> tuple[Col, ...]:
        return tuple(c for c in self.columns if c.kind == DIM)

    def measures(self) -> tuple[Col, ...]:
        return tuple(c for c in self.columns if c.kind == MEASURE)

    def closure(self, aliases: set[str]) -> list[Node]:
        """The nodes needed to reach `aliases` from the fact, in declaration order."""
        needed = {self.fact.alias}
        for start in aliases:
            alias: str | None = start
            while alias is not None and alias not in needed:
                needed.add(alias)
                alias = self.node(alias).parent
        return [n for n in self.nodes if n.alias in needed]
