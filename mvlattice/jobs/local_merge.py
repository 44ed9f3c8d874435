"""Merging the change into a small tile in-process: the same merge SQL Spark would run
(`merge_tile_sql`, `retract_tile_sql`), run by DuckDB over the tile read with delta-rs at the
version the decision saw and the batch's aggregate of the change (collected from Spark once per
lattice), and written back with delta-rs in one commit carrying the record (`record.commit_tag`).

Why: a Spark merge of a small tile is mostly fixed cost — Delta loading the tile's snapshot,
planning, a job, a commit — about a second per tile whatever its rows; this path costs tens of
milliseconds. It must not change a single value, so it is taken only where identity with Spark
is proven, and every other tile merges on Spark as before:

- the SQL passes the tile engine's allow-list (`sql.transpile`: what DuckDB computes as Spark
  does; CASTs back to the tile's types are strict in both, so an overflow fails here and the
  tile is merged by Spark, which says what Spark says);
- the tile's columns are integers, DECIMALs, strings, dates or booleans: no DOUBLE (the rollup
  of the change would sum in another order), no timestamp (zones), no sketch (binary);
- the result has the tile's Arrow schema exactly (a safe cast: nothing truncated or wrapped);
- the tile is local, of at most MAX_ROWS rows, and its vacuum retention is already the one a
  build would write (delta-rs leaves table properties as they are);
- the commit is made over exactly the version read, without retry (`delta.writer`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from mvlattice.delta import reader, storage
from mvlattice.delta.writer import overwrite
from mvlattice.errors import first_line
from mvlattice.jobs.changerows import ChangeRows
from mvlattice.jobs.record import TileRecord, commit_tag
from mvlattice.jobs.retraction import retract_tile_sql
from mvlattice.jobs.tables import SORT_MIN_ROWS
from mvlattice.jobs.tilesql import dimension_columns, merge_tile_sql, q
from mvlattice.jobs.vacuum import RETENTION_PROPERTY, retention_property
from mvlattice.sql.refusal import Refusal
from mvlattice.sql.transpile import Source, arrow_types, to_duckdb

if TYPE_CHECKING:
    import pyarrow as pa

    from mvlattice.lattice.lattice import TileSpec

MAX_ROWS = 1_000_000  # tile rows (and change rows) merged in-process at most
TILE = "mvlattice_tile"  # the tile's name in the merge SQL
_SAFE = ("TINYINT", "SMALLINT", "INT", "BIGINT", "STRING", "DATE", "BOOLEAN")


def likely(location: str, tile_rows: int | None, change_rows: int | None) -> bool:
    """Whether a merge into this tile would run in-process, as far as its size and place
    tell before reading it (its column types may still send it to Spark)."""
    return (
        storage.local_path(location) is not None
        and tile_rows is not None
        and tile_rows <= MAX_ROWS
        and (change_rows is None or change_rows <= MAX_ROWS)
    )


def merge_locally(
    spec: TileSpec,
    location: str,
    version: int,
    change: ChangeRows,
    change_rows: Mapping[str, pa.Table],
    retention_seconds: float,
    record_for: Callable[[int], TileRecord],
) -> TileRecord | Refusal:
    """The tile at `location`, read at `version`, with `change` merged in, committed as
    `version` + 1; or why it must merge on Spark (nothing written then). `change_rows`: the
    change's aggregates (`change.plus`, `change.minus`) as Arrow tables."""
    if storage.local_path(location) is None:
        return Refusal("the tile is not on a local file system")
    detail = reader.detail(location, version)
    if detail is None:
        return Refusal("delta-rs cannot read the tile")
    wanted = retention_property(retention_seconds)
    if detail.configuration.get(RETENTION_PROPERTY) != wanted[1]:
        return Refusal("its vacuum retention changes (a table property: Spark writes it)")
    try:
        tile = reader.rows(location, version)
    except Exception as exc:  # noqa: BLE001 - a table feature delta-rs cannot read: Spark can
        return Refusal(f"delta-rs cannot read the tile ({first_line(exc)})")
    if tile.num_rows > MAX_ROWS:
        return Refusal(f"the tile has more than {MAX_ROWS:,} rows")
    unsafe = _unsafe_column(tile)
    if unsafe is not None:
        return Refusal(unsafe)
    merged = _merge(spec, tile, change, change_rows)
    if isinstance(merged, Refusal):
        return merged
    record = record_for(merged.num_rows)
    overwrite(location, version, merged, commit_tag(record))
    return record


def _unsafe_column(tile: pa.Table) -> str | None:
    types = arrow_types(tile)
    for field in tile.schema:
        kind = types.get(field.name.lower())
        if kind is None or not (kind in _SAFE or kind.startswith("DECIMAL(")):
            return f"column {field.name} is {field.type}: merged on Spark"
    return None


def _merge(
    spec: TileSpec, tile: pa.Table, change: ChangeRows, change_rows: Mapping[str, pa.Table]
) -> pa.Table | Refusal:
    """The merge SQL run by DuckDB, its result cast to the tile's schema."""
    import duckdb
    import pyarrow as pa

    types = arrow_types(tile)
    plus_sql, minus_sql = change.delta_sql(spec)
    sql = merge_tile_sql(spec, q(TILE), plus_sql, types)
    if minus_sql is not None:
        sql = retract_tile_sql(spec, sql, minus_sql, types)
    tables = {TILE: tile, **change_rows}
    sources = {name: Source(name, arrow_types(rows)) for name, rows in tables.items()}
    qualified = _qualified(sql, sources)
    if isinstance(qualified, Refusal):
        return qualified
    transpiled = to_duckdb(qualified, sources)
    if isinstance(transpiled, Refusal):
        return transpiled
    with duckdb.connect(config={"enable_external_access": False, "threads": 1}) as db:
        for name, rows in tables.items():
            db.register(name, rows)
        try:
            result = db.sql(transpiled.sql).arrow().read_all()
        except duckdb.Error as exc:  # an overflow, say: Spark reports it in its own words
            return Refusal(f"DuckDB failed ({first_line(exc)})")
    if [n.lower() for n in result.column_names] != [n.lower() for n in tile.column_names]:
        return Refusal("the merge's columns are not the tile's")
    try:
        result = result.rename_columns(tile.column_names).cast(tile.schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        return Refusal(f"the merge's values do not fit the tile's types ({first_line(exc)})")
    return _clustered(result, dimension_columns(spec))


def _qualified(sql: str, sources: Mapping[str, Source]) -> str | Refusal:
    """Every column named with its relation, so each one's type is known to the allow-list
    (the merge SQL names them bare, as Spark resolves them)."""
    from sqlglot import exp
    from sqlglot.errors import SqlglotError
    from sqlglot.optimizer.qualify import qualify

    schema: dict[str, object] = {name: dict(s.columns) for name, s in sources.items()}
    try:
        tree: exp.Expr = qualify(
            exp.maybe_parse(sql, dialect="spark"), schema=schema, dialect="spark"
        )
        return tree.sql(dialect="spark")
    except SqlglotError as exc:
        return Refusal(f"the merge SQL cannot be qualified ({first_line(exc)})")


def _clustered(rows: pa.Table, dimensions: tuple[str, ...]) -> pa.Table:
    """A large tile sorted as a Spark build sorts it (`tables.clustering_order`: fewest
    distinct values first), for the same compression and file skipping."""
    import pyarrow.compute as pc

    if rows.num_rows < SORT_MIN_ROWS or not dimensions:
        return rows
    counts = {d: pc.count_distinct(rows[d], mode="all").as_py() for d in dimensions}
    order = sorted(dimensions, key=lambda d: counts[d])
    return rows.sort_by([(d, "ascending") for d in order])
