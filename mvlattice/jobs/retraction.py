"""Taking rows back out of a tile: what a delete or an update's old values do to its measures.

With the change data feed a refresh knows the rows added and the rows retracted (`delete`,
`update_preimage`). The tile is re-aggregated with the added rows (`merge_tile_sql`), then each
group's retracted aggregate is subtracted: COUNT(*) and COUNT(x) minus theirs, SUM(x) minus
theirs (AVG is kept as those two). A group whose COUNT(*) reaches 0 is gone — so a tile needs a
COUNT(*) to take retractions. A SUM whose group has no non-null value left is NULL, not 0: the
tile must know that count (a COUNT(x) or AVG(x) measure), or x must be declared NOT NULL.
MIN, MAX and distinct counts cannot be taken back from an aggregate: such a tile is rebuilt
(rolled up from a finer current tile when there is one).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from mvlattice.jobs.tilesql import dimension_columns, q, tile_columns
from mvlattice.lattice.lattice import TileSpec
from mvlattice.lattice.measures import SKETCH_UNION, StoredColumn


def retraction_blocker(spec: TileSpec, not_null: Collection[str]) -> str | None:
    """Why the tile cannot take retracted rows; None when it can. `not_null`: lattice labels
    whose values are never NULL."""
    columns = tile_columns(spec)
    if _count_star(columns) is None:
        return "deletes/updates need a COUNT(*) measure to know when a group empties"
    for column in columns:
        if column.distinct or column.rollup == SKETCH_UNION:
            return f"{column.name}: a distinct count cannot take deleted rows back"
        if column.agg in ("min", "max"):
            return f"{column.name}: {column.agg.upper()} cannot take deleted rows back"
        nullable = not set(column.args) <= set(not_null)
        if column.agg == "sum" and nullable and _count_of(columns, column) is None:
            arg = ", ".join(column.args)
            return (
                f"{column.name}: SUM over nullable {arg} without COUNT({arg}) cannot tell an "
                "emptied sum from 0"
            )
    return None


def retract_tile_sql(
    spec: TileSpec,
    merged_sql: str,
    minus_sql: str,
    types: Mapping[str, str] | None = None,
) -> str:
    """`merged_sql` (the tile with added rows merged in) minus `minus_sql` (the retracted
    rows' aggregate, same columns), per group; groups left without rows dropped. Every
    retracted row was counted in the tile or among the added rows, so a LEFT JOIN keeps all."""
    columns = tile_columns(spec)
    count = _count_star(columns)
    assert count is not None, "retraction_blocker first"
    dims = dimension_columns(spec)

    def left(name: str) -> str:
        return f"{q('m')}.{q(name)} - coalesce({q('d')}.{q(name)}, 0)"

    select = [f"{q('m')}.{q(d)} AS {q(d)}" for d in dims]
    for column in columns:
        expr = left(column.name)
        if column.agg == "sum":
            basis = _count_of(columns, column) or count
            expr = f"CASE WHEN {left(basis.name)} = 0 THEN NULL ELSE {expr} END"
        kind = (types or {}).get(column.name)
        select.append(f"{f'CAST({expr} AS {kind})' if kind else expr} AS {q(column.name)}")
    on = " AND ".join(f"{q('m')}.{q(d)} <=> {q('d')}.{q(d)}" for d in dims)
    # A tile without dimensions keeps its one row even when empty, as GROUP BY () gives it.
    where = f"\nWHERE {left(count.name)} > 0" if dims else ""
    if not dims:  # one row each side: joined on a constant key, an equi-join like the others
        merged_sql, minus_sql = (_keyed(sql) for sql in (merged_sql, minus_sql))
        on = f"{q('m')}.{q(ONE_ROW_KEY)} = {q('d')}.{q(ONE_ROW_KEY)}"
    body = ",\n  ".join(select)
    return (
        f"SELECT\n  {body}\nFROM (\n{merged_sql}\n) AS {q('m')}\n"
        f"LEFT JOIN (\n{minus_sql}\n) AS {q('d')} ON {on}{where}"
    )


ONE_ROW_KEY = "mvlattice_one_row"


def _keyed(sql: str) -> str:
    return f"SELECT 1 AS {q(ONE_ROW_KEY)}, {q('k')}.* FROM (\n{sql}\n) AS {q('k')}"


def _count_star(columns: tuple[StoredColumn, ...]) -> StoredColumn | None:
    return next((c for c in columns if c.agg == "count" and not c.args and not c.distinct), None)


def _count_of(columns: tuple[StoredColumn, ...], of: StoredColumn) -> StoredColumn | None:
    return next(
        (c for c in columns if c.agg == "count" and c.args == of.args and not c.distinct), None
    )
