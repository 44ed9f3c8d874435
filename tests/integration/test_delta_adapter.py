"""The Delta adapter on tables delta-spark writes: delta-rs and Spark agree on versions, ids and
schema; a log delta-rs cannot read goes to Spark, and is unreadable only when Spark cannot read
it either; an unreadable source makes tiles stale and builds fail naming it (never a silent
full rebuild), an absent one stays absent; Parquet sources cache their statistics."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from mvlattice.delta import reader
from mvlattice.delta.columns import delta_log_columns, delta_log_types
from mvlattice.delta.sources import source_version
from mvlattice.errors import TableUnreadable
from mvlattice.statistics.factory import provider_for
from mvlattice.workspace import Workspace
from tests.integration.test_jobs_support import SALES_DDL, make_shop, sales, tile_name, write

pytestmark = pytest.mark.spark

TILES = "- dimensions: [the_year]\n"


def test_delta_rs_and_spark_agree_on_tables_delta_spark_writes(spark, warehouse: Path) -> None:
    for name, props in (
        ("plain", ""),
        ("dv", "TBLPROPERTIES ('delta.enableDeletionVectors'=true)"),
    ):
        location = warehouse / "adapter" / name
        spark.sql(
            f"CREATE TABLE delta.`{location}` (id INT, price DECIMAL(10,2)) USING delta {props}"
        )
        spark.sql(f"INSERT INTO delta.`{location}` VALUES (1, 2.5), (2, 3.5)")
        spark.sql(f"DELETE FROM delta.`{location}` WHERE id = 1")  # a deletion vector for dv
        fast = reader.snapshot(spark, str(location))
        slow = reader.spark_snapshot(spark, str(location))
        assert fast is not None and slow is not None
        assert (fast.reader, slow.reader) == (reader.DELTA_RS, reader.SPARK)
        assert (fast.version, fast.table_id) == (slow.version, slow.table_id) == (2, slow.table_id)
        assert delta_log_columns(str(location)) == ("id", "price")
        assert delta_log_types(str(location)) == {"id": "integer", "price": "decimal(10,2)"}


def test_a_log_delta_rs_refuses_is_read_by_spark_or_unreadable(spark, warehouse: Path) -> None:
    location = warehouse / "adapter" / "checkpointed"
    spark.range(3).write.format("delta").save(str(location))
    log = location / "_delta_log"
    # A damaged checkpoint beside complete JSON commits: delta-rs stops at it, so Spark is
    # asked; it fails too here, and the message carries both answers.
    (log / f"{0:020d}.checkpoint.parquet").write_bytes(b"PAR1 damaged PAR1")
    (log / "_last_checkpoint").write_text('{"version":0,"size":3}')
    both = r"cannot be read: Kernel error: .*; Spark: .*corrupted file"
    with pytest.raises(TableUnreadable, match=both) as caught:
        reader.snapshot(spark, str(location))
    assert "\n" not in str(caught.value)
    with pytest.raises(TableUnreadable, match=r"; Spark: "):
        reader.spark_snapshot(spark, str(location), "delta-rs failed")
    (log / f"{0:020d}.checkpoint.parquet").unlink()
    (log / "_last_checkpoint").unlink()
    found = reader.snapshot(spark, str(location))
    assert found is not None and found.reader == reader.DELTA_RS and found.version == 0


def test_an_unreadable_source_is_reported_and_an_absent_one_stays_absent(
    spark, warehouse: Path
) -> None:
    schema = "adapter_unreadable"
    ws = Workspace(make_shop(spark, warehouse, schema, TILES), warehouse=str(warehouse))
    assert ws.materialize().ok
    year = tile_name(ws, ("the_year",))
    location = warehouse / "jobs" / schema / "sales"
    write(spark, location, sales(900, 5), SALES_DDL, mode="append")
    commit = location / "_delta_log" / f"{1:020d}.json"
    good = commit.read_text()
    commit.write_text(good[: len(good) // 2])  # a damaged commit

    table = ws.model.table(schema, "sales")
    assert table is not None
    state = source_version(spark, table)
    assert state.version is None and state.unreadable
    entries = {e.name: e for e in ws.tiles()}
    assert entries[year].status == "stale" and not entries[year].usable
    assert entries[year].message.startswith(f"{schema}.sales cannot be read (")
    results = {r.target: r for r in ws.refresh().results}
    assert results[year].status == "failed"
    assert f"source table {schema}.sales cannot be read" in (results[year].error or "")

    commit.write_text(good)  # readable again: an append since the build, merged
    done = {r.target: r for r in ws.refresh().results}
    assert done[year].status == "refreshed" and done[year].path == "incremental"

    shutil.rmtree(location)  # absent: no error from the adapter, the source simply changed
    assert reader.snapshot(spark, str(location)) is None
    assert source_version(spark, table).unreadable is None
    assert "changed since it was built" in {e.name: e for e in ws.tiles()}[year].message


PARQUET_MODEL = """
version: "1.0"
schemas:
  - name: {schema}
    type: parquet
    location: {location}
    tables:
      - name: fact
      - name: dim
        primaryKey: [d]
    lattices:
      - name: pq
        sql: select 1 from {schema}.fact as f join {schema}.dim as m using (d)
"""


def test_parquet_sources_cache_their_statistics(spark, warehouse: Path, tmp_path: Path) -> None:
    location = warehouse / "adapter_parquet"
    spark.createDataFrame([(1, 1, "x"), (2, 2, "y"), (3, 2, "y")], "id INT, d INT, b STRING") \
        .write.mode("overwrite").parquet(str(location / "fact"))  # fmt: skip
    spark.createDataFrame([(1, "low"), (2, "high")], "d INT, g STRING").write.mode(
        "overwrite"
    ).parquet(str(location / "dim"))
    model = tmp_path / "pq.yaml"
    text = PARQUET_MODEL.format(schema=location.name, location=location)
    model.write_text(textwrap.dedent(text))
    ws = Workspace(str(model))
    first = provider_for(ws.spark, ws.model, "pq", warehouse=str(tmp_path), max_size=2)
    assert first.row_count() == 3 and first.counter.misses > 0
    assert list((tmp_path / "_mvlattice" / "statistics" / "pq").glob("*.json"))
    second = provider_for(ws.spark, ws.model, "pq", warehouse=str(tmp_path), max_size=2)
    assert second.profile.counts == first.profile.counts
    assert second.counter.misses == 0 and second.counter.inner.jobs == 0
    spark.createDataFrame([(4, 1, "z")], "id INT, d INT, b STRING").write.mode("append").parquet(
        str(location / "fact")
    )
    spark.sql(f"REFRESH TABLE {location.name}.fact")  # Spark's own cached file listing
    third = provider_for(ws.spark, ws.model, "pq", warehouse=str(tmp_path), max_size=2)
    assert third.counter.hits == 0  # a new file listing: a new key, counted again
    assert third.row_count() == 4
