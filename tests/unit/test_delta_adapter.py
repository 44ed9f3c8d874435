"""The Delta adapter without Spark: versions, ids and schema through delta-rs on real Delta
tables (written by delta-rs itself), absent told apart from unreadable, and one source identity
for the statistics cache and freshness (Parquet sources included)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from deltalake import DeltaTable, Field, Schema
from deltalake.schema import PrimitiveType

from mvlattice.delta import reader
from mvlattice.delta.columns import delta_log_columns, delta_log_types
from mvlattice.delta.sources import SourceVersion, source_version, source_versions
from mvlattice.errors import TableUnreadable
from mvlattice.jobs.freshness import Facts, assess
from mvlattice.jobs.record import Snapshot, TileRecord
from mvlattice.jobs.sources import require_readable
from mvlattice.lattice.lattice import Lattice, LatticeColumn, Node
from mvlattice.statistics.store import statistics_store


@dataclass(frozen=True)
class Source:
    qualified_name: str
    location: str | None
    format: str | None = None
    catalog_name: str | None = None


def delta_table(path: Path) -> DeltaTable:
    fields = [Field("id", PrimitiveType("integer")), Field("Price", PrimitiveType("decimal(10,2)"))]
    return DeltaTable.create(str(path), Schema(fields))


def corrupt(path: Path) -> Path:
    """A real table whose newest commit is damaged (half a JSON line)."""
    delta_table(path)
    (path / "_delta_log" / f"{1:020d}.json").write_text('{"commitInfo": {}}\n{"add": {"pa\n')
    return path


def test_version_id_and_schema_come_from_the_log_through_delta_rs(tmp_path: Path) -> None:
    table = delta_table(tmp_path / "t")
    found = reader.snapshot(None, str(tmp_path / "t"))
    assert found == reader.TableSnapshot(0, table.metadata().id, reader.DELTA_RS)
    assert reader.snapshot(None, f"file://{tmp_path / 't'}") == found
    assert delta_log_columns(str(tmp_path / "t")) == ("id", "Price")
    assert delta_log_types(str(tmp_path / "t")) == {"id": "integer", "Price": "decimal(10,2)"}
    assert delta_log_columns("s3a://bucket/t") is None  # remote: Spark answers


def test_absent_is_none_and_never_unreadable(tmp_path: Path) -> None:
    (tmp_path / "empty" / "_delta_log").mkdir(parents=True)  # a log without commits
    (tmp_path / "plain").mkdir()
    for where in ("missing", "plain", "empty"):
        assert reader.snapshot(None, str(tmp_path / where)) is None
        state = source_version(None, Source("s.t", str(tmp_path / where)))
        assert state == SourceVersion(None) and state.unreadable is None
    assert delta_log_columns(str(tmp_path / "missing")) is None


def test_a_damaged_log_is_unreadable_not_absent(tmp_path: Path) -> None:
    location = str(corrupt(tmp_path / "t"))
    with pytest.raises(TableUnreadable, match=r"the Delta table at .*/t cannot be read: "):
        reader.snapshot(None, location)
    state = source_version(None, Source("s.t", location))
    assert state.version is None and state.unreadable and "\n" not in state.unreadable
    assert not state.cacheable
    assert delta_log_columns(location) is None  # the caller's Spark fallback answers


def test_parquet_sources_have_a_cacheable_identity(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "part-0.parquet").write_bytes(b"abc")
    delta_table(tmp_path / "d")
    tables = (Source("s.f", str(tmp_path / "d")), Source("s.p", str(tmp_path / "p"), "parquet"))
    found = source_versions(None, tables)
    assert found["s.f"].version == 0 and found["s.f"].table_id
    assert str(found["s.p"].version).startswith("files=1;bytes=3;")
    column = LatticeColumn("a", "f", "a", "`f`.`a`")
    lattice = Lattice("lat", "s", "select 1 from s.f as f", (Node("f", "s", "f"),), (), (column,))
    store = statistics_store(str(tmp_path / "wh"), lattice, "exact", found)
    assert store is not None and store.key["ids"] == {"s.f": found["s.f"].table_id}
    (tmp_path / "p" / "part-1.parquet").write_bytes(b"de")  # new data: another cache document
    changed = source_versions(None, tables)
    other = statistics_store(str(tmp_path / "wh"), lattice, "exact", changed)
    assert other is not None and other.location != store.location
    damaged = {"s.f": SourceVersion(None, unreadable="damaged")}
    assert statistics_store(str(tmp_path / "wh"), lattice, "exact", damaged) is None


def test_an_unreadable_source_makes_a_tile_stale_and_a_build_fail_by_name() -> None:
    record = TileRecord(
        "tile", "mvlattice.t", "SELECT 1", (("s.f", 3),), 1, 0.0, source_ids=(("s.f", "id"),)
    )
    current = Snapshot({"s.f": None}, {"s.f": None}, {"s.f": "Json error: unexpected 'n'"})
    seen = assess(Facts(record, current, "SELECT 1", None))
    assert (seen.status, seen.view.usable, seen.view.code) == ("stale", False, "STALE")
    assert seen.view.message.startswith("s.f cannot be read (Json error: unexpected 'n')")
    assert seen.changed == ("s.f",)
    with pytest.raises(TableUnreadable, match=r"^source table s.f cannot be read: Json error"):
        require_readable(current)
    require_readable(Snapshot({"s.f": None}, {"s.f": None}))  # absent: no error here


def test_the_damaged_commit_is_a_real_log_file(tmp_path: Path) -> None:
    """The fixture damages a commit a reader must read, not a stray file beside it."""
    location = corrupt(tmp_path / "t")
    names = sorted(p.name for p in (location / "_delta_log").glob("*.json"))
    assert names == [f"{0:020d}.json", f"{1:020d}.json"]
    with pytest.raises(json.JSONDecodeError):
        [json.loads(line) for line in (location / "_delta_log" / names[1]).read_text().splitlines()]


def test_a_snapshot_read_before_never_hides_a_change_to_the_log(tmp_path: Path) -> None:
    location = tmp_path / "t"
    assert reader.snapshot(None, str(location)) is None
    old = delta_table(location).metadata().id
    assert reader.snapshot(None, str(location)).table_id == old  # read, then remembered
    assert reader.snapshot(None, str(location)).table_id == old
    shutil.rmtree(location)
    new = delta_table(location).metadata().id  # recreated: version 0 again, another id
    assert new != old and reader.snapshot(None, str(location)).table_id == new
    commit = location / "_delta_log" / f"{0:020d}.json"
    commit.write_text(commit.read_text()[:40])  # damaged in place
    with pytest.raises(TableUnreadable):
        reader.snapshot(None, str(location))
