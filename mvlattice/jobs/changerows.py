"""The change to a lattice's fact table, aggregated ONCE per batch at the finest grouping any
of its tiles needs (the union of their dimensions), kept in Spark's memory; each tile's delta
is then a rollup of that small aggregate instead of its own read and join of the new rows.

Appends are read from the appended files (`delta.appended`); with the change data feed, the
added rows (`insert`, `update_postimage`) and the retracted ones (`delete`, `update_preimage`)
are aggregated apart: `plus` and `minus` (see `retraction`).
"""

from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mvlattice.delta import log as deltalog
from mvlattice.delta.appended import appended_view
from mvlattice.jobs.changes import RefreshDecision
from mvlattice.jobs.record import Snapshot
from mvlattice.jobs.sources import pinned_relations, read_name
from mvlattice.jobs.tilesql import (
    appended_relation,
    q,
    rollup_tile_sql,
    star_tile_sql,
    tile_columns,
)
from mvlattice.lattice.lattice import Lattice, Measure, TileSpec

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from mvlattice.model.loader import Model

FEED_COLUMNS = ("_change_type", "_commit_version", "_commit_timestamp")
ADDED = ("insert", "update_postimage")
RETRACTED = ("delete", "update_preimage")


@dataclass(frozen=True, slots=True)
class ChangeRows:
    """The change aggregated at `spec`: `plus` (and, from the feed, `minus`) temp views."""

    spec: TileSpec
    plus: str
    minus: str | None
    rows: int  # rows of both aggregates

    def delta_sql(self, spec: TileSpec) -> tuple[str, str | None]:
        """SQL of `spec`'s delta: the added rows' aggregate and the retracted rows' one."""
        plus = rollup_tile_sql(spec, self.spec, q(self.plus))
        minus = rollup_tile_sql(spec, self.spec, q(self.minus)) if self.minus else None
        return plus, minus


def finest_spec(lattice: str, specs: tuple[TileSpec, ...]) -> TileSpec:
    """The grouping every spec rolls up from: all their dimensions and mergeable measures."""
    dims: dict[str, None] = {}
    measures: dict[Measure, None] = {}
    for spec in specs:
        dims.update(dict.fromkeys(spec.dimensions))
        for measure in spec.measures:
            if all(c.rollup is not None for c in tile_columns(_one(spec, measure))):
                measures[measure] = None
    return TileSpec(lattice, tuple(dims), tuple(measures))


def _one(spec: TileSpec, measure: Measure) -> TileSpec:
    return TileSpec(spec.lattice, spec.dimensions, (measure,))


@dataclass(slots=True)
class ChangeCache:
    """The batch's aggregated changes, per (lattice, from version, to version); `close`
    releases them."""

    spark: SparkSession
    model: Model
    found: dict[tuple, ChangeRows] = field(default_factory=dict)
    frames: list[DataFrame] = field(default_factory=list)
    views: list[str] = field(default_factory=list)
    # Tiles merge concurrently (`batch`): the first to ask aggregates, the others wait for it.
    lock: threading.Lock = field(default_factory=threading.Lock)
    # View name -> its rows collected from Spark, for merges run in-process (`local_merge`).
    collected: dict[str, pa.Table] = field(default_factory=dict)

    def get(
        self,
        lattice: Lattice,
        sources: Snapshot,
        decision: RefreshDecision,
        specs: tuple[TileSpec, ...],
    ) -> ChangeRows:
        key = (lattice.name, decision.from_version, decision.fact_version, decision.feed)
        with self.lock:
            if key not in self.found:
                self.found[key] = self._aggregate(lattice, sources, decision, specs)
            return self.found[key]

    def arrow(self, change: ChangeRows, max_rows: int) -> dict[str, pa.Table] | None:
        """The change's aggregates as Arrow tables, by view name, collected from Spark once;
        None when they have more than `max_rows` rows together."""
        if change.rows > max_rows:
            return None
        names = [n for n in (change.plus, change.minus) if n is not None]
        with self.lock:
            for name in names:
                if name not in self.collected:
                    self.collected[name] = self.spark.table(q(name)).toArrow()
            return {name: self.collected[name] for name in names}

    def _aggregate(
        self,
        lattice: Lattice,
        sources: Snapshot,
        decision: RefreshDecision,
        specs: tuple[TileSpec, ...],
    ) -> ChangeRows:
        assert decision.fact_version is not None
        spec = finest_spec(lattice.name, specs)
        fact = self.model.table(lattice.root.schema, lattice.root.table)
        assert fact is not None and fact.location is not None
        relations = pinned_relations(self.model, lattice, dict(sources.versions))
        if decision.feed:
            assert decision.from_version is not None
            feed = (
                self.spark.read.format("delta")
                .option("readChangeFeed", "true")
                .option("startingVersion", decision.from_version + 1)
                .option("endingVersion", decision.fact_version)
                .load(fact.location)
            )
            parts = [feed.where(feed["_change_type"].isin(*kinds)).drop(*FEED_COLUMNS)
                     for kinds in (ADDED, RETRACTED)]  # fmt: skip
            rows = [self._view(p) for p in parts]
        else:
            view = appended_view(self.spark, fact.location, decision.fact_version, decision.added)
            if view is not None:
                self.views.append(view)
            rows = [
                q(view)
                if view is not None
                else appended_relation(read_name(fact), decision.fact_version, decision.added_files)
            ]
        names, count = [], 0
        for relation in rows:
            sql = star_tile_sql(lattice, spec, {**relations, lattice.root.alias: relation})
            name, frame = self._cached(self.spark.sql(sql))
            names.append(name)
            count += frame.count()  # computes and keeps it: every tile's delta reads it
        return ChangeRows(spec, names[0], names[1] if len(names) > 1 else None, count)

    def _view(self, frame: DataFrame) -> str:
        name = "mvlattice_change_" + uuid.uuid4().hex[:12]
        frame.createOrReplaceTempView(name)
        self.views.append(name)
        return q(name)

    def _cached(self, frame: DataFrame) -> tuple[str, DataFrame]:
        frame = frame.cache()
        self.frames.append(frame)
        name = "mvlattice_delta_" + uuid.uuid4().hex[:12]
        frame.createOrReplaceTempView(name)
        self.views.append(name)
        return name, frame

    def close(self) -> None:
        for view in self.views:
            self.spark.catalog.dropTempView(view)
        for frame in self.frames:
            frame.unpersist()
        self.views.clear()
        self.frames.clear()
        self.found.clear()
        self.collected.clear()


def change_feed_enabled(spark: SparkSession, location: str, version: int) -> bool:
    """Whether the Delta table's metadata at `version` enables the change data feed."""
    crc = deltalog.checksum(spark, location, version)
    if crc is not None:
        props = crc["metadata"].get("configuration") or {}
    else:
        row = spark.sql(f"DESCRIBE DETAIL delta.`{location.replace('`', '``')}`").first()
        props = dict(row["properties"] or {}) if row else {}
    return str(props.get("delta.enableChangeDataFeed", "")).lower() == "true"


def change_feeds(spark: SparkSession, model: Model) -> dict[str, bool | None]:
    """Per lattice fact table (qualified name): whether it has the change data feed now
    (deletes and updates then refresh incrementally); None: not a Delta table mvlattice reads
    by location, or no table there."""
    out: dict[str, bool | None] = {}
    for lattice in model.lattices:
        fact = model.table(lattice.root.schema, lattice.root.table)
        if fact is None or fact.qualified_name in out:
            continue
        version = None
        if fact.location is not None and (fact.format or "delta") == "delta":
            version = deltalog.latest_version(spark, fact.location)
        out[fact.qualified_name] = (
            None
            if version is None or fact.location is None
            else change_feed_enabled(spark, fact.location, version)
        )
    return out
