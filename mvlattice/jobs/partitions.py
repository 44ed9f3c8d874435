"""Refreshing a tile partition by partition (the `partitions` path). Pure.

When the fact table is partitioned (by date, say) and a tile groups by its partition columns,
each of the tile's groups lies inside one partition. A change that touched some partitions —
any change: appends, deletes, updates, merges, a partition overwritten, with or without the
change data feed — changed only the groups of those partitions. So the tile is refreshed by
keeping its rows of the other partitions as they are and recomputing the rows of the touched
ones from the star, reading only those partitions of the fact table (Spark prunes the rest).
Every measure is recomputed, so MIN, MAX and distinct counts take deletes as SUM and COUNT do.

The touched partitions are those of every file the fact table's commits since the tile's
version added or removed (`delta.commits`). The path is not offered when a commit changed the
table's metadata (its schema or its partitioning), when another table of the star changed, or
when the tile does not group by every partition column — by the fact table's own column or by
a dimension key the star joins it to.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from mvlattice.delta.commits import Commit, Partition
from mvlattice.jobs.tilesql import Relations, output_columns, q, sql_string, star_tile_sql
from mvlattice.lattice.lattice import Lattice, TileSpec
from mvlattice.lattice.measures import column_name

# Partition column types whose values the log's text gives exactly (CAST back from it).
SUPPORTED = frozenset({"TINYINT", "SMALLINT", "INT", "BIGINT", "STRING", "DATE", "BOOLEAN"})


@dataclass(frozen=True, slots=True)
class PartitionScope:
    """The partitions a change touched, and how the tile sees them."""

    columns: tuple[str, ...]  # the fact table's partition columns
    types: tuple[str, ...]  # their Spark SQL types
    stored: tuple[str, ...]  # the tile's dimension column holding each
    values: tuple[tuple[str | None, ...], ...]  # each touched partition's values, in order

    def describe(self) -> str:
        count = len(self.values)
        return f"{count} partition{'s' if count != 1 else ''} of {', '.join(self.columns)}"


@dataclass(frozen=True, slots=True)
class Touched:
    """What commits changed: the partitions of the files they added, and the files they
    removed with the partition values their actions give (maybe not all: see `complete`)."""

    partitions: tuple[Partition, ...]
    removed: tuple[tuple[str, Partition], ...]


def touched(commits: Sequence[Commit], old: int, new: int) -> Touched | None:
    """What the commits after version `old` up to `new` changed; None when they are not all
    there or one changed the table's metadata (schema, partitioning)."""
    if [c.version for c in commits] != list(range(old + 1, new + 1)):
        return None
    if any(set(c.other_actions) - {"cdc"} for c in commits):
        return None
    changing = [c for c in commits if c.changes_data]
    found = {p for c in changing for p in c.partitions}
    removed = tuple(dict.fromkeys(r for c in changing for r in c.removed))
    return Touched(tuple(sorted(found, key=_order)), removed)


def complete(
    change: Touched,
    columns: Sequence[str],
    before: Mapping[str, Partition] | None,
) -> tuple[Partition, ...] | None:
    """Every partition the change touched. A removed file whose action lacks a partition
    column takes its values from `before` (the files of the version the tile holds, by path);
    a file not there was added within the change, so its partition is counted already. None
    when one cannot be told (`before` unknown)."""
    found = set(change.partitions)
    for path, values in change.removed:
        if {name for name, _ in values} >= set(columns):
            found.add(values)
        elif before is None:
            return None
        elif path in before:
            found.add(before[path])
    return tuple(sorted(found, key=_order))


def scope(
    lattice: Lattice,
    spec: TileSpec,
    partitioning: Sequence[tuple[str, str]],
    partitions: Iterable[Partition],
) -> PartitionScope | str:
    """The scope of refreshing `spec`'s tile by the touched `partitions` of the fact table
    partitioned by `partitioning` ((column, type) pairs); or why it cannot be."""
    if not partitioning:
        return "the fact table is not partitioned"
    columns = tuple(name for name, _ in partitioning)
    stored = []
    for column, kind in partitioning:
        if kind not in SUPPORTED:
            return f"its partition column {column} is {kind}"
        label = _label_of(lattice, spec, column)
        if label is None:
            return f"the tile does not group by the fact table's partition column {column}"
        stored.append(column_name(label))
    values = []
    for partition in partitions:
        found = dict(partition)
        if not set(found) >= set(columns):
            return "a commit's files do not carry the table's partition columns"
        values.append(tuple(found[c] for c in columns))
    types = tuple(kind for _, kind in partitioning)
    return PartitionScope(columns, types, tuple(stored), tuple(values))


def refresh_sql(
    lattice: Lattice,
    spec: TileSpec,
    relations: Relations,
    tile: str,
    scope: PartitionScope,
    types: dict[str, str] | None = None,
) -> str:
    """The tile's rows outside the touched partitions, read from `tile` (a relation: the
    tile at its version), and the touched partitions' groups recomputed from the star, whose
    fact table (`relations`, pinned) is read through a filter on its partition columns.
    `types`: the tile's column types, which the result keeps."""
    root = lattice.root.alias
    fact = f"(SELECT * FROM {relations[root]} WHERE {_fact_filter(scope)})"
    recomputed = star_tile_sql(lattice, spec, {**relations, root: fact})
    columns = output_columns(spec)

    def select(source: str) -> str:
        items = [_cast(c, (types or {}).get(c)) for c in columns]
        return f"SELECT {', '.join(items)} FROM {source}"

    kept = f"{select(tile)} WHERE NOT ({_tile_filter(scope)})"
    fresh = select("(\n" + recomputed + "\n) AS " + q("recomputed"))
    return f"{kept}\nUNION ALL\n{fresh}"


def _label_of(lattice: Lattice, spec: TileSpec, column: str) -> str | None:
    """The tile dimension equal to the fact table's `column` on every row of the star: the
    column itself, or the key of a dimension table the fact table joins on it."""
    root = lattice.root.alias
    equal = {(root, column.lower())}
    for edge in lattice.edges:
        if edge.source != root:
            continue
        for source, target in zip(edge.source_columns, edge.target_columns, strict=True):
            if source.lower() == column.lower():
                equal.add((edge.target, target.lower()))
    for label in spec.dimensions:
        found = lattice.column(label)
        if found.column is not None and (found.alias, found.column.lower()) in equal:
            return label
    return None


def _literal(value: str | None, kind: str) -> str:
    if value is None:
        return "NULL"
    text = sql_string(value)
    return text if kind == "STRING" else f"CAST({text} AS {kind})"


def _fact_filter(scope: PartitionScope) -> str:
    """Rows of the touched partitions, as Spark prunes partitions by (`=`, `IS NULL`)."""
    ors = []
    for values in scope.values:
        ands = [
            f"{q(c)} IS NULL" if v is None else f"{q(c)} = {_literal(v, t)}"
            for c, t, v in zip(scope.columns, scope.types, values, strict=True)
        ]
        ors.append("(" + " AND ".join(ands) + ")")
    return " OR ".join(ors) or "false"


def _tile_filter(scope: PartitionScope) -> str:
    """The tile's rows of the touched partitions (NULL-safe: never unknown, so NOT keeps the
    others whatever their values)."""
    ors = []
    for values in scope.values:
        ands = [
            f"{q(s)} <=> {_literal(v, t)}"
            for s, t, v in zip(scope.stored, scope.types, values, strict=True)
        ]
        ors.append("(" + " AND ".join(ands) + ")")
    return " OR ".join(ors) or "false"


def _cast(column: str, kind: str | None) -> str:
    return f"CAST({q(column)} AS {kind}) AS {q(column)}" if kind else q(column)


def _order(partition: Partition) -> tuple:
    return tuple((name, value is None, value or "") for name, value in partition)
