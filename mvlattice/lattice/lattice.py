"""The Lattice: a star or snowflake join, its labelled columns, measures and declared tiles."""

from __future__ import annotations

from dataclasses import dataclass, field

from mvlattice.document import suggest
from mvlattice.errors import NotFoundError
from mvlattice.sql.quote import identifier, qualified


@dataclass(frozen=True, slots=True)
class Node:
    """One occurrence of a table in the star; the root has no parent."""

    alias: str
    schema: str
    table: str
    parent: str | None = None

    @property
    def qualified_table(self) -> str:
        return f"{self.schema}.{self.table}"


@dataclass(frozen=True, slots=True)
class Edge:
    """A many-to-one join from `source` (earlier in FROM) to `target` on equal key columns."""

    source: str
    target: str
    source_columns: tuple[str, ...]
    target_columns: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.source_columns) != len(self.target_columns) or not self.source_columns:
            raise ValueError("an edge needs the same, non-zero number of columns on both sides")


@dataclass(frozen=True, slots=True)
class LatticeColumn:
    """A column of the star: a table column (`alias`.`column`) or a derived expression."""

    label: str
    alias: str | None
    column: str | None
    expression: str  # Spark SQL over the star's aliases, e.g. year(`t`.`the_date`)

    @property
    def derived(self) -> bool:
        return self.column is None


@dataclass(frozen=True, slots=True)
class Measure:
    """An aggregate function applied to zero or more lattice columns (by label)."""

    agg: str
    args: tuple[str, ...] = ()
    distinct: bool = False
    approximate: bool = False  # COUNT(DISTINCT x) kept as an HLL sketch: APPROX_COUNT_DISTINCT

    def __post_init__(self) -> None:
        object.__setattr__(self, "agg", self.agg.lower())

    @property
    def name(self) -> str:
        """A stable column name for the measure in a tile, e.g. sum_unit_sales, count."""
        head = (self.agg, "distinct") if self.distinct else (self.agg,)
        if self.approximate:
            head = ("approx", *head)
        return "_".join((*head, *self.args)).replace(".", "_")

    def __str__(self) -> str:
        inner = ", ".join(self.args) or "*"
        if self.approximate:
            return f"approx_count_distinct({inner})"
        return f"{self.agg}({'DISTINCT ' if self.distinct else ''}{inner})"


@dataclass(frozen=True, slots=True)
class TileSpec:
    """A tile: the lattice grouped by `dimensions` (labels) with `measures`; `name`: the
    model's `name:` for a declared tile (its table is then `<lattice>__<name>`)."""

    lattice: str
    dimensions: tuple[str, ...]
    measures: tuple[Measure, ...]
    # Not part of equality or hash: a tile read back from a plan or a build record (which keep
    # no name) is the same tile as the declared one, so matching and de-duplication still meet.
    name: str | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class RefreshPolicy:
    """Our addition: when to refresh (`cron`), how stale a tile may be when used, and how long
    a refresh keeps the files of replaced versions (`vacuum: {retention}`; None: the model's
    or DEFAULT_VACUUM_RETENTION)."""

    cron: str | None = None
    max_staleness_seconds: float | None = None
    vacuum_retention_seconds: float | None = None


# A refresh vacuums the files its table's replaced versions no longer need once they are this
# old: a query, a tile read by the serving engine or a rollup reading an older version must
# finish within it. Never below MIN_VACUUM_RETENTION (and the service's query timeout).
DEFAULT_VACUUM_RETENTION = 7 * 86400.0
MIN_VACUUM_RETENTION = 3600.0


@dataclass(frozen=True, slots=True)
class Lattice:
    name: str
    schema: str
    sql: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    columns: tuple[LatticeColumn, ...]
    default_measures: tuple[Measure, ...] = (Measure("count"),)
    tiles: tuple[TileSpec, ...] = ()
    auto: bool = True
    algorithm: bool = False
    algorithm_max_millis: int = -1
    row_count_estimate: float = 1000.0
    statistic_provider: str | None = None
    refresh: RefreshPolicy = field(default_factory=RefreshPolicy)
    # Our addition: columns the planner may group by although they look like measures, and
    # columns it never groups by (`dimensions:` / `measures:` of the lattice; see plan.columns)
    dimension_labels: tuple[str, ...] = ()
    measure_labels: tuple[str, ...] = ()

    @property
    def root(self) -> Node:
        return self.nodes[0]

    def node(self, alias: str) -> Node:
        for node in self.nodes:
            if node.alias == alias:
                return node
        raise NotFoundError(f"lattice '{self.name}' has no table alias '{alias}'")

    def column(self, label: str) -> LatticeColumn:
        for col in self.columns:
            if col.label == label:
                return col
        raise NotFoundError(
            f"lattice '{self.name}' has no column '{label}'"
            + suggest(label, (c.label for c in self.columns))
        )

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(c.label for c in self.columns)

    def star_sql(self, labels: tuple[str, ...] | None = None) -> str:
        """SELECT of the given columns (default: all), each AS its label, over the star join."""
        chosen = self.columns if labels is None else tuple(self.column(x) for x in labels)
        items = [f"{c.expression} AS {identifier(c.label)}" for c in chosen]
        select = ",\n  ".join(items) or "1 AS `one`"
        return f"SELECT\n  {select}\n{self.from_sql()}"

    def from_sql(self, aliases: tuple[str, ...] | None = None) -> str:
        """FROM … JOIN … of the star, limited to `aliases` and what links them to the root."""
        needed = self._closure(aliases) if aliases is not None else {n.alias for n in self.nodes}
        root = self.root
        parts = [f"FROM {qualified(root.schema, root.table)} AS {identifier(root.alias)}"]
        for edge in self.edges:
            if edge.target not in needed:
                continue
            target = self.node(edge.target)
            cond = " AND ".join(
                f"{qualified(edge.source, s)} = {qualified(edge.target, t)}"
                for s, t in zip(edge.source_columns, edge.target_columns, strict=True)
            )
            parts.append(
                f"JOIN {qualified(target.schema, target.table)} AS {identifier(target.alias)} "
                f"ON {cond}"
            )
        return "\n".join(parts)

    def _closure(self, aliases: tuple[str, ...]) -> set[str]:
        needed: set[str] = set()
        for alias in aliases:
            node: Node | None = self.node(alias)
            while node is not None and node.alias not in needed:
                needed.add(node.alias)
                node = self.node(node.parent) if node.parent else None
        return needed
