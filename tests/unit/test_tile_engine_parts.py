"""The tile engine's parts that need no Spark: the model's fast_path, the transpiler's
allow-list and its translations to Spark's meaning, result typing, the tile cache's budget and
batched hit counters."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from mvlattice.engine.results import spark_rows
from mvlattice.engine.tile_cache import TileCache
from mvlattice.errors import ModelError
from mvlattice.jobs.hits import HitCounter
from mvlattice.jobs.state import StateStore, Usage
from mvlattice.model.fast_path import FastPath
from mvlattice.model.loader import load_model
from mvlattice.sql.refusal import Refusal
from mvlattice.sql.transpile import Source, Transpiled, to_duckdb

TILE = "mvlattice.star__the_year__abc123"
SOURCES = {
    TILE: Source(
        "tile_0",
        {"the_year": "INT", "units": "DECIMAL(20, 2)", "c": "BIGINT", "name": "STRING",
         "x": "DOUBLE", "day": "DATE"},
    )
}  # fmt: skip


def duck(sql: str) -> str:
    found = to_duckdb(sql, SOURCES)
    assert isinstance(found, Transpiled), found
    return found.sql


def test_tables_are_read_under_their_registered_names_only() -> None:
    assert duck(f"SELECT mv.c FROM {TILE} AS mv") == 'SELECT "mv"."c" FROM "tile_0" AS "mv"'
    refused = to_duckdb("SELECT s.units FROM shop.sales AS s", SOURCES)
    assert isinstance(refused, Refusal) and "shop.sales" in refused.reason


def test_spark_meanings_are_written_out_for_duckdb() -> None:
    # ASC sorts NULLs first in Spark; DESC last (DuckDB's own defaults differ)
    assert 'ORDER BY "mv"."c" NULLS FIRST' in duck(f"SELECT mv.c FROM {TILE} AS mv ORDER BY mv.c")
    # CAST fails on bad values under ANSI: never DuckDB's TRY_CAST
    cast = duck(f"SELECT CAST(mv.c AS DECIMAL(20, 0)) AS d FROM {TILE} AS mv")
    assert "TRY_CAST" not in cast and 'CAST("mv"."c" AS DECIMAL(20, 0))' in cast
    # division by zero fails in Spark: DuckDB is made to fail too (then Spark answers)
    assert "ERROR('DIVIDE_BY_ZERO')" in duck(f"SELECT mv.c / mv.the_year AS q FROM {TILE} AS mv")
    # AVG of a non-decimal: a sum of DOUBLEs over the count, as Spark's Average
    avg = duck(f"SELECT AVG(mv.c) AS a FROM {TILE} AS mv")
    assert 'SUM(CAST("mv"."c" AS DOUBLE)) / NULLIF(COUNT("mv"."c"), 0)' in avg
    # NULL-safe equality: one NULL matches another in both
    joined = duck(f"SELECT a.c FROM {TILE} AS a LEFT JOIN {TILE} AS b ON a.name <=> b.name")
    assert '"a"."name" IS NOT DISTINCT FROM "b"."name"' in joined
    # an ISO date literal against a date is a DATE in both
    assert "CAST('1997-01-01' AS DATE)" in duck(
        f"SELECT mv.c FROM {TILE} AS mv WHERE mv.day >= '1997-01-01'"
    )


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        (f"SELECT mv.units / mv.c AS q FROM {TILE} AS mv", "division of DECIMALs"),
        (f"SELECT AVG(mv.units) AS a FROM {TILE} AS mv", "AVG of a DECIMAL"),
        (f"SELECT CAST(mv.x AS DECIMAL(10, 2)) AS d FROM {TILE} AS mv", "CAST from DOUBLE"),
        (f"SELECT CAST(mv.units AS INT) AS d FROM {TILE} AS mv", "CAST from DECIMAL"),
        (f"SELECT mv.name FROM {TILE} AS mv WHERE mv.name = 1", "different kinds"),
        (f"SELECT mv.name FROM {TILE} AS mv WHERE mv.name <=> 1", "different kinds"),
        (f"SELECT mv.c FROM {TILE} AS mv WHERE mv.day = '1997-1-1'", "different kinds"),
        (f"SELECT mv.c FROM {TILE} AS mv LIMIT 1", "LIMIT"),
        (f"SELECT mv.c, mv.name FROM {TILE} AS mv ORDER BY mv.c LIMIT 1", "LIMIT"),
        (f"SELECT UPPER(mv.name) AS u FROM {TILE} AS mv", "UPPER"),
        (f"SELECT mv.name FROM {TILE} AS mv WHERE mv.name LIKE 'a%'", "LIKE"),
        (f"SELECT ROUND(mv.x, 1) AS r FROM {TILE} AS mv", "ROUND"),
        (f"SELECT (SELECT MAX(t.c) FROM {TILE} AS t) AS m FROM {TILE} AS mv", "a subquery"),
        (f"SELECT mv.nope FROM {TILE} AS mv", "type the tile engine does not serve"),
        (f"SELECT SUM(mv.c) OVER () AS w FROM {TILE} AS mv", "WINDOW"),
        ("SELECT read_csv('/etc/passwd') AS x", "READ_CSV"),
        (f"SELECT a.c FROM {TILE} AS a JOIN {TILE} AS b ON a.c < b.c", "ON equalities"),
        (f"SELECT a.c FROM {TILE} AS a CROSS JOIN {TILE} AS b", "ON equalities"),
    ],
)
def test_what_is_not_proven_identical_is_refused(sql: str, why: str) -> None:
    refused = to_duckdb(sql, SOURCES)
    assert isinstance(refused, Refusal), refused
    assert why in refused.reason


def test_a_limit_under_an_order_of_every_output_is_served() -> None:
    sql = f"SELECT mv.c, mv.name AS n FROM {TILE} AS mv ORDER BY mv.name, mv.c DESC LIMIT 2"
    assert duck(sql).endswith("LIMIT 2")


def test_results_take_spark_types_or_are_refused() -> None:
    from pyspark.sql.types import DecimalType, LongType, StructField, StructType

    schema = StructType([StructField("s", LongType()), StructField("d", DecimalType(20, 2))])
    rows = [(3, Decimal("1.25")), (None, None)]
    assert spark_rows(rows, ["HUGEINT", "DECIMAL(38,2)"], schema) == rows
    beyond = spark_rows([(2**63, Decimal("1.25"))], ["HUGEINT", "DECIMAL(38,2)"], schema)
    assert isinstance(beyond, Refusal) and "beyond Spark's type" in beyond.reason
    scale = spark_rows(rows, ["HUGEINT", "DECIMAL(38,3)"], schema)
    assert isinstance(scale, Refusal) and "DECIMAL(38,3)" in scale.reason
    double = spark_rows(rows, ["HUGEINT", "DOUBLE"], schema)
    assert isinstance(double, Refusal)


def test_the_tile_cache_keeps_one_version_per_tile_within_its_budget(tmp_path: Path) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake

    small = str(tmp_path / "small")
    write_deltalake(small, pa.table({"v": list(range(100))}))
    write_deltalake(small, pa.table({"v": list(range(200))}), mode="overwrite")
    big = str(tmp_path / "big")
    write_deltalake(big, pa.table({"v": list(range(10_000))}))
    cache = TileCache(budget_bytes=2_000)
    assert cache.table(small, 0).num_rows == 100
    assert cache.table(small, 1).num_rows == 200  # the new version replaces the old
    assert list(cache._tables) == [(small, 1)] and cache.bytes <= cache.budget_bytes
    assert cache.table(big, 0).num_rows == 10_000  # beyond the budget: read, not kept
    assert list(cache._tables) == [(small, 1)]
    assert cache.table(small, 1).num_rows == 200 and cache.hits == 1
    assert cache.peak_bytes <= cache.budget_bytes


def test_hits_are_written_in_batches(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "catalog.sqlite")
    counter = HitCounter(store, interval=3600, clock=lambda: 42.0)
    for _ in range(3):
        counter.add("mvlattice.t")
    counter.add("shop.by_year")
    assert store.usage("mvlattice.t") is None  # not written yet
    counter.flush()
    assert store.usage("mvlattice.t") == Usage(3, 42.0)
    assert store.usage("shop.by_year") == Usage(1, 42.0)
    counter.add("mvlattice.t")
    counter.flush()
    assert store.usage("mvlattice.t") == Usage(4, 42.0)


MODEL = """
version: "1.0"
defaultSchema: s
schemas:
  - name: s
    type: delta
    location: /tmp/nowhere
    tables:
      - name: t
        columns: [a]
fast_path: {fast_path}
"""


def test_fast_path_sizes_take_units_and_bad_values_say_where(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(MODEL.format(fast_path="{max_rows: 10, max_bytes: 1MiB, cache_bytes: 2GB}"))
    model = load_model(path, str(tmp_path / "w"))
    assert model.fast_path == FastPath(max_rows=10, max_bytes=2**20, cache_bytes=2 * 10**9)
    path.write_text(MODEL.format(fast_path="{max_rows: -1, max_byte: 5}"))
    with pytest.raises(ModelError) as caught:
        load_model(path, str(tmp_path / "w"))
    message = str(caught.value)
    assert "fast_path.max_rows" in message and "max_byte" in message


def test_reading_a_tile_leaves_the_process_free_to_exit(tmp_path: Path) -> None:
    """A PyArrow dataset scan's threads may outlive the interpreter and abort it at exit
    (exit code 134); the reader must not leave any behind. Run a few times: it was 1 in 2."""
    import subprocess
    import sys

    import pyarrow as pa
    from deltalake import write_deltalake

    rows = pa.table({"k": pa.array([1, 2], pa.int32()), "s": ["a", None]})
    for _ in range(4):  # several files, as a refreshed tile has before a vacuum
        write_deltalake(str(tmp_path / "t"), rows, mode="append")
    script = (
        "from mvlattice.delta import reader; "
        f"t = reader.rows({str(tmp_path / 't')!r}, 3); assert t.num_rows == 8, t"
    )
    root = Path(__file__).resolve().parents[2]
    for _ in range(10):
        done = subprocess.run(
            [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, done.stderr[-500:]
