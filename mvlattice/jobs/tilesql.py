"""The SQL that fills a tile: from the star, as a rollup of a finer tile, or as a merge.

Every measure is stored as the columns the shared rollup table gives it (`measures.py`);
dimension columns are named `column_name(label)`. A tile is the GROUP BY of the FULL star join
(every lattice table, inner joins, as Calcite defines a lattice), so the rewriter can describe
any tile by its lattice alone.

Relations are table references with their Delta version pinned (`… VERSION AS OF n`), so a
tile holds exactly the data of the versions recorded with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mvlattice.lattice.lattice import Lattice, TileSpec
from mvlattice.lattice.measures import (
    StoredColumn,
    base_aggregate_sql,
    column_name,
    rollup_sql,
    stored_columns,
)
from mvlattice.sql.quote import identifier, string

Relations = Mapping[str, str]  # lattice alias -> SQL table reference (maybe version-pinned)


# The one quoting of `mvlattice.sql.quote`, under the short names jobs modules import.
q = identifier
sql_string = string


def tile_columns(spec: TileSpec) -> tuple[StoredColumn, ...]:
    """The stored columns of a tile's measures, each once (AVG and SUM share `sum_x`)."""
    seen: dict[str, StoredColumn] = {}
    for measure in spec.measures:
        for column in stored_columns(measure):
            seen.setdefault(column.name, column)
    return tuple(seen.values())


def dimension_columns(spec: TileSpec) -> tuple[str, ...]:
    return tuple(column_name(d) for d in spec.dimensions)


def output_columns(spec: TileSpec) -> tuple[str, ...]:
    """The tile's columns in table order: dimensions, then stored measure columns."""
    return dimension_columns(spec) + tuple(c.name for c in tile_columns(spec))


def mergeable(spec: TileSpec) -> bool:
    """Whether appended rows can be merged in: every stored column re-aggregates
    (SUM, COUNT, MIN, MAX; AVG as SUM and COUNT). COUNT(DISTINCT …) cannot."""
    return all(c.rollup is not None for c in tile_columns(spec))


def table_relation(name_sql: str, version: int | None) -> str:
    return f"{name_sql} VERSION AS OF {version}" if version is not None else name_sql


def appended_relation(name_sql: str, version: int, files: Sequence[str]) -> str:
    """Only the rows of the data files `files` of the table at `version` (appended files)."""
    where = "false"
    if files:
        where = "_metadata.file_name IN (" + ", ".join(sql_string(f) for f in files) + ")"
    return f"(SELECT * FROM {name_sql} VERSION AS OF {version} WHERE {where})"


def default_relations(lattice: Lattice) -> dict[str, str]:
    return {n.alias: f"{q(n.schema)}.{q(n.table)}" for n in lattice.nodes}


def star_from(lattice: Lattice, relations: Relations | None = None) -> str:
    """FROM … JOIN … of the whole star, each table read through `relations`."""
    rel = {**default_relations(lattice), **(relations or {})}
    root = lattice.root
    parts = [f"FROM {rel[root.alias]} AS {q(root.alias)}"]
    for edge in lattice.edges:
        cond = " AND ".join(
            f"{q(edge.source)}.{q(s)} = {q(edge.target)}.{q(t)}"
            for s, t in zip(edge.source_columns, edge.target_columns, strict=True)
        )
        parts.append(f"JOIN {rel[edge.target]} AS {q(edge.target)} ON {cond}")
    return "\n".join(parts)


def star_tile_sql(lattice: Lattice, spec: TileSpec, relations: Relations | None = None) -> str:
    """GROUP BY the tile's dimensions over the star, computing every stored column."""
    expressions = {c.label: c.expression for c in lattice.columns}
    dims = [(lattice.column(d).expression, column_name(d)) for d in spec.dimensions]
    select = [f"{expr} AS {q(name)}" for expr, name in dims]
    select += [f"{base_aggregate_sql(c, expressions)} AS {q(c.name)}" for c in tile_columns(spec)]
    group = "\nGROUP BY " + ", ".join(expr for expr, _ in dims) if dims else ""
    return "SELECT\n  " + ",\n  ".join(select) + "\n" + star_from(lattice, relations) + group


def can_build_from(spec: TileSpec, ancestor: TileSpec) -> bool:
    """Whether `ancestor` answers `spec`: same lattice, at least its dimensions, and every
    measure rolls up (COUNT DISTINCT only when its arguments are ancestor dimensions)."""
    if spec.lattice != ancestor.lattice or not set(spec.dimensions) <= set(ancestor.dimensions):
        return False
    have = {c.name for c in tile_columns(ancestor) if not c.distinct}
    for column in tile_columns(spec):
        if column.distinct:
            if not set(column.args) <= set(ancestor.dimensions):
                return False
        elif column.name not in have:
            return False
    return True


def rollup_tile_sql(
    spec: TileSpec,
    ancestor: TileSpec,
    relation: str,
    types: Mapping[str, str] | None = None,
) -> str:
    """Re-aggregate the finer tile `ancestor` (read through `relation`) to `spec`."""
    grouping = {label: q(column_name(label)) for label in ancestor.dimensions}
    dims = [q(name) for name in dimension_columns(spec)]
    select = list(dims)
    for column in tile_columns(spec):
        expr = base_aggregate_sql(column, grouping) if column.distinct else rollup_sql(column)
        select.append(f"{_cast(expr, column.name, types)} AS {q(column.name)}")
    group = "\nGROUP BY " + ", ".join(dims) if dims else ""
    body = ",\n  ".join(select)
    return f"SELECT\n  {body}\nFROM {relation} AS {q('finer')}{group}"


def merge_tile_sql(
    spec: TileSpec,
    tile_relation: str,
    delta_sql: str,
    types: Mapping[str, str] | None = None,
) -> str:
    """The tile with the aggregate of appended rows (`delta_sql`, same columns) merged in:
    SUM+SUM, COUNT+COUNT, MIN of MINs, MAX of MAXes — the rollup table applied to both."""
    if not mergeable(spec):
        raise ValueError("a tile with COUNT(DISTINCT …) cannot merge appended rows")
    columns = ", ".join(q(c) for c in output_columns(spec))
    dims = [q(name) for name in dimension_columns(spec)]
    select = list(dims) + [
        f"{_cast(rollup_sql(c), c.name, types)} AS {q(c.name)}" for c in tile_columns(spec)
    ]
    group = "\nGROUP BY " + ", ".join(dims) if dims else ""
    union = f"SELECT {columns} FROM {tile_relation}\nUNION ALL\n{delta_sql}"
    body = ",\n  ".join(select)
    return f"SELECT\n  {body}\nFROM (\n{union}\n) AS {q('merged')}{group}"


def _cast(expr: str, name: str, types: Mapping[str, str] | None) -> str:
    """Keep the type the star build gives (SUM of DECIMAL(20,4) would otherwise widen)."""
    kind = (types or {}).get(name)
    return f"CAST({expr} AS {kind})" if kind else expr
