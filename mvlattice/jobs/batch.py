"""Running a batch of builds: each target brought up to date by the cheapest correct path.

Per target: nothing (fresh), incremental (merge the change to the fact table: appended rows, or
with the change data feed deletes and updates too), a rollup of the smallest current finer
tile, or a full build from the star. Where both are correct, incremental and full are chosen
between by their estimated cost (`cost`); the change is aggregated once per lattice for all
its tiles (`changerows`). All tiles of a lattice are
built at ONE snapshot of its source versions, read when the batch first needs them, so tiles
of one batch agree with each other. A target's failure is recorded and reported; the batch
goes on (STYLE §14). A target whose lease another builder holds (another process, or another
thread here) is reported `busy` and left to it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from mvlattice.delta import log as deltalog
from mvlattice.delta.partitioning import file_partitions, partition_columns, rows_in
from mvlattice.errors import MvlatticeError
from mvlattice.jobs import local_merge, vacuum
from mvlattice.jobs.build import (
    build_materialization,
    build_partitions,
    build_tile,
    definition_of,
    merge_changes,
    merge_in_process,
)
from mvlattice.jobs.changerows import ChangeCache, ChangeRows, change_feed_enabled
from mvlattice.jobs.changes import FULL, INCREMENTAL, NONE, RefreshDecision, decide_refresh
from mvlattice.jobs.context import JobContext
from mvlattice.jobs.cost import LOCAL_MIN_SAVING, MIN_SAVING, Estimate, choose
from mvlattice.jobs.lease import Holder, LeaseHeld
from mvlattice.jobs.nested import full_reason
from mvlattice.jobs.order import Ancestor, build_order, cheapest_ancestor
from mvlattice.jobs.partitions import PartitionScope
from mvlattice.jobs.partitions import complete as complete_partitions
from mvlattice.jobs.partitions import scope as partition_scope
from mvlattice.jobs.record import Snapshot, TileRecord
from mvlattice.jobs.registration import ensure_registered
from mvlattice.jobs.retraction import retraction_blocker
from mvlattice.jobs.sources import (
    current_snapshot,
    pinned_relations,
    read_name,
    require_readable,
    target_sources,
)
from mvlattice.jobs.state import Outcome
from mvlattice.jobs.status import BuildStatus, RefreshPath
from mvlattice.jobs.tables import TableState, cancel, job_group
from mvlattice.jobs.targets import Target
from mvlattice.jobs.tilesql import mergeable, star_from, table_relation
from mvlattice.lattice.lattice import Lattice, TileSpec
from mvlattice.sql.refusal import Refusal

# Tiles merging the change at once: enough to overlap their commits' waits on storage, few
# enough that their Spark jobs do not crowd out each other's memory.
MERGE_WORKERS = 4


# A tile's path, why, the estimates (when another path than full was correct), the ancestor a
# full build rolls up and the partitions the partitions path recomputes.
Choice = tuple[RefreshPath, str, "Estimate | None", "Ancestor | None", "PartitionScope | None"]
PARTITIONS = RefreshPath.PARTITIONS


@dataclass(frozen=True, slots=True)
class BuildResult:
    target: str
    kind: str
    status: BuildStatus
    path: RefreshPath
    reason: str
    rows: int | None = None
    seconds: float = 0.0
    error: str | None = None
    built_from: str | None = None
    warning: str | None = None  # e.g. its vacuum failed (the build itself stands)
    estimate: Estimate | None = None  # incremental vs full, when both were correct
    engine: str = "spark"  # who computed and wrote it: spark | local (an in-process merge)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class BatchResult:
    results: tuple[BuildResult, ...]
    notes: tuple[str, ...] = ()

    @property
    def failed(self) -> tuple[BuildResult, ...]:
        return tuple(r for r in self.results if r.status == BuildStatus.FAILED)

    @property
    def ok(self) -> bool:
        return not self.failed

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "notes": list(self.notes),
            "results": [r.to_json() for r in self.results],
        }


@dataclass(frozen=True, slots=True)
class ProgressEvent:
    index: int  # 1-based
    total: int
    target: Target
    result: BuildResult | None  # None: the build starts


Progress = Callable[[ProgressEvent], None]


def run_batch(
    ctx: JobContext,
    targets: tuple[Target, ...],
    *,
    full: bool = False,
    rollup: bool = True,
    progress: Progress | None = None,
    notes: tuple[str, ...] = (),
    dry_run: bool = False,
    workers: int = MERGE_WORKERS,
) -> BatchResult:
    """Bring `targets` up to date; `rollup=False` builds every tile from the star (for
    benchmarks: the cost the ancestor rollups save); `dry_run` only says what each would
    do (status `planned`), with the estimates. Tiles that merge the change run first, up to
    `workers` at a time: each reads only itself and the batch's aggregate of the change, and
    most of a small merge is Delta's commit, which waits on storage rather than the CPU. The
    others follow one by one in build order, so a rollup reads a finer tile already brought
    up to date. Results are in build order."""
    ordered = build_order(targets, [lat.name for lat in ctx.model.lattices])
    batch = _Batch(ctx, full, rollup, ordered, dry_run)
    events = _Events(progress, len(ordered))
    found: dict[int, BuildResult] = {}
    try:
        if not dry_run and not full and workers > 1:
            found.update(_merge_concurrently(batch, ordered, workers, events))
        for i, target in enumerate(ordered):
            if i not in found:
                events.start(target)
                result = batch.one(target)
                assert result is not None  # only merges_only leaves a target alone
                found[i] = result
                events.done(target, result)
    finally:
        batch.changes.close()
    return BatchResult(tuple(found[i] for i in range(len(ordered))), notes)


def _merge_concurrently(
    batch: _Batch, ordered: tuple[Target, ...], workers: int, events: _Events
) -> dict[int, BuildResult]:
    """The tiles whose cheapest correct path is merging the change, built on `workers`
    threads; position in `ordered` -> result. The others are left for the caller."""
    tiles = [(i, t) for i, t in enumerate(ordered) if t.spec is not None and mergeable(t.spec)]
    if len(tiles) < 2:
        return {}
    batch.prepare(t for _, t in tiles)

    def merge(target: Target) -> BuildResult | None:
        result = batch.one(target, merges_only=True, on_start=events.start)
        if result is not None:
            events.done(target, result)
        return result

    with ThreadPoolExecutor(min(workers, len(tiles)), thread_name_prefix="mvlattice-merge") as pool:
        futures = {i: pool.submit(merge, t) for i, t in tiles}
        try:
            merged = {i: f.result() for i, f in futures.items()}
        except BaseException:  # Ctrl-C: stop the running merges (their tiles stay as they were)
            for future in futures.values():
                future.cancel()
            for _, target in tiles:
                cancel(batch.ctx.spark, target.name)
            raise
    return {i: r for i, r in merged.items() if r is not None}


class _Events:
    """Progress events, in the order builds start and end (merges run concurrently)."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress = progress
        self.total = total
        self.finished = 0
        self.lock = threading.Lock()

    def start(self, target: Target) -> None:
        if self.progress:
            with self.lock:
                self.progress(ProgressEvent(self.finished + 1, self.total, target, None))

    def done(self, target: Target, result: BuildResult) -> None:
        with self.lock:
            self.finished += 1
            if self.progress:
                self.progress(ProgressEvent(self.finished, self.total, target, result))


class _Batch:
    def __init__(
        self,
        ctx: JobContext,
        full: bool,
        rollup: bool = True,
        targets: tuple[Target, ...] = (),
        dry_run: bool = False,
    ) -> None:
        self.ctx = ctx
        self.full = full
        self.rollup = rollup
        self.dry_run = dry_run
        self.snapshots: dict[str, Snapshot] = {}
        self.ancestors: dict[str, list[Ancestor]] = {}
        self.star_rows: dict[str, int | None] = {}
        self.feeds: dict[str, bool] = {}
        self.not_null: dict[str, frozenset[str]] = {}
        self.partitioning: dict[tuple[str, int], tuple[tuple[str, str], ...] | None] = {}
        self.partition_rows: dict[tuple, int | None] = {}
        self.touched: dict[tuple, tuple | None] = {}
        self.changes = ChangeCache(ctx.spark, ctx.model)
        # Per lattice, the tiles of the batch whose deltas the change's aggregate must give.
        self.mergeable: dict[str, tuple[TileSpec, ...]] = {}
        for t in targets:
            if t.spec is not None and mergeable(t.spec):
                have = self.mergeable.get(t.spec.lattice, ())
                self.mergeable[t.spec.lattice] = (*have, t.spec)

    def prepare(self, targets: Iterable[Target]) -> None:
        """Read, once and on this thread, what deciding the tiles' paths shares (the lattice's
        snapshot, its change feed, its current tiles, the star's rows), so that concurrent
        builds only read it."""
        for name in dict.fromkeys(t.spec.lattice for t in targets if t.spec is not None):
            lattice = self.ctx.model.lattice(name)
            snapshot = self._snapshot(lattice)
            if self._feed(lattice, snapshot):
                self._not_null(lattice)
            self._candidates(lattice)
            self._star_rows(lattice)

    def one(
        self,
        target: Target,
        merges_only: bool = False,
        on_start: Callable[[Target], None] = lambda _t: None,
    ) -> BuildResult | None:
        """Bring one target up to date under its lease (one builder at a time across
        processes; see `lease`), or skip it as `busy` while another builder holds it. With
        `merges_only`, a target whose path is not merging the change is left alone (None)."""
        if self.dry_run:
            return self._plan(target)
        assert self.ctx.leases is not None
        try:
            lease = self.ctx.leases.acquire(target.name, f"{self.ctx.trigger} build")
        except LeaseHeld as held:
            if merges_only:
                return None  # reported busy, if it still is, when its turn comes
            return self._busy(target, held.holder)
        with lease:  # taken before deciding: the decision sees the previous holder's commit
            return self._one(target, merges_only, on_start)

    def _busy(self, target: Target, holder: Holder) -> BuildResult:
        now = self.ctx.clock()
        reason = f"skipped: being built by {holder.describe()}"
        result = BuildResult(target.name, target.kind, BuildStatus.BUSY, NONE, reason)
        self.ctx.store.log(
            Outcome(
                target.name, BuildStatus.BUSY, NONE, reason, None, now, now, None, self.ctx.trigger
            )
        )
        return result

    def _one(
        self,
        target: Target,
        merges_only: bool = False,
        on_start: Callable[[Target], None] = lambda _t: None,
    ) -> BuildResult | None:
        """Bring one target up to date; every outcome, failures included, is recorded."""
        started = self.ctx.clock()
        decision: RefreshDecision | None = None
        try:
            with job_group(self.ctx.spark, target.name, f"mvlattice: build {target.name}"):
                decision, sources, existed = self._decide(target)
                # The path is chosen once: a tile sent to the concurrent merges for its
                # path keeps it, whatever another thread has refreshed meanwhile.
                chosen = target.spec is not None and decision.path != NONE
                choice = self._choose(target, decision) if chosen else None
                if merges_only and not _merges(decision, choice):
                    return None
                on_start(target)
                if decision.path == NONE:
                    result = self._skipped(target, decision)
                else:
                    self.ctx.store.begin(target.name, started)
                    result = self._build(target, decision, sources, existed, started, choice)
        except BaseException as exc:  # Ctrl-C too: recorded as failed, then re-raised
            result = self._failed(target, decision, started, exc)
            self._record(result, started)
            if not isinstance(exc, Exception):
                raise
            return result
        self._record(result, started)
        return result

    def _failed(
        self, target: Target, decision: RefreshDecision | None, started: float, exc: BaseException
    ) -> BuildResult:
        path = decision.path if decision else FULL
        reason = decision.reason if decision else "could not read its state"
        seconds = self.ctx.clock() - started
        return BuildResult(
            target.name, target.kind, BuildStatus.FAILED, path, reason, None, seconds, _message(exc)
        )

    # -- deciding --------------------------------------------------------------------------
    def _decide(self, target: Target) -> tuple[RefreshDecision, Snapshot, bool]:
        table = self.ctx.reader.state(target.location)
        record = table.record if table else None
        changed = record is not None and record.definition != definition_of(self.ctx.model, target)
        recorded = record.snapshot if record else None
        tile_change = table.tile_change if table else None
        if target.spec is None:
            tables, unknown = target_sources(self.ctx.model, target, self.ctx.warehouse)
            current = current_snapshot(self.ctx.spark, tables, unknown)
            require_readable(current)
            decision = decide_refresh(
                recorded=recorded,
                current=current,
                fact=None,
                tile_change=tile_change,
                definition_changed=changed,
                full=self.full,
            )
            return full_reason(target, decision), current, table is not None
        lattice = self.ctx.model.lattice(target.spec.lattice)
        current = self._snapshot(lattice)
        require_readable(current)
        fact = _fact(self.ctx, lattice)
        decision = decide_refresh(
            recorded=recorded,
            current=current,
            fact=fact.qualified_name,
            tile_change=tile_change,
            blocker=self._blocker(lattice, target),
            definition_changed=changed,
            full=self.full,
            fact_commits=self._commits(lattice, recorded, current),
            change_feed=self._feed(lattice, current),
        )
        return decision, current, table is not None

    def _snapshot(self, lattice: Lattice) -> Snapshot:
        if lattice.name not in self.snapshots:
            tables = self.ctx.model.lattice_tables(lattice.name)
            self.snapshots[lattice.name] = current_snapshot(self.ctx.spark, tables)
        return self.snapshots[lattice.name]

    def _blocker(self, lattice: Lattice, target: Target) -> str | None:
        assert target.spec is not None
        fact = _fact(self.ctx, lattice)
        if not mergeable(target.spec):
            return "COUNT(DISTINCT …) cannot merge appended rows"
        if sum(n.qualified_table == lattice.root.qualified_table for n in lattice.nodes) > 1:
            return f"fact table {fact.qualified_name} occurs more than once in the star"
        if fact.location is None or (fact.format or "delta") != "delta":
            return f"fact table {fact.qualified_name} has no Delta log mvlattice can read"
        return None

    def _commits(
        self, lattice: Lattice, recorded: Snapshot | None, current: Snapshot
    ) -> tuple | None:
        fact = _fact(self.ctx, lattice)
        name = fact.qualified_name
        if recorded is None or recorded.ids.get(name) != current.ids.get(name):
            return None  # another table's log: its commits are not changes since the tile
        old, new = recorded.versions.get(name), current.versions.get(name)
        if fact.location is None or not (isinstance(old, int) and isinstance(new, int)):
            return None
        if new <= old:
            return ()
        return deltalog.commits(self.ctx.spark, fact.location, old + 1, new)

    # -- building --------------------------------------------------------------------------
    def _build(
        self,
        target: Target,
        decision: RefreshDecision,
        sources: Snapshot,
        existed: bool,
        started: float,
        choice: Choice | None,
    ) -> BuildResult:
        estimate, engine = None, "spark"
        if target.spec is None:
            record = build_materialization(self.ctx, target, sources, started)
            reason = decision.reason
        else:
            assert choice is not None
            path, reason, estimate, ancestor, scope = choice
            if path == PARTITIONS:
                assert scope is not None
                table = self.ctx.reader.state(target.location)
                assert table is not None
                record = build_partitions(self.ctx, target, sources, table.version, scope, started)
            elif path == INCREMENTAL:
                table = self.ctx.reader.state(target.location)
                assert table is not None
                lattice = self.ctx.model.lattice(target.spec.lattice)
                change = self.changes.get(
                    lattice, sources, decision, self.mergeable.get(lattice.name, (target.spec,))
                )
                merged = self._merge_in_process(target, sources, table.version, change, started)
                if isinstance(merged, Refusal):
                    reason = f"{reason}; merged on Spark: {merged.reason}"
                    record = merge_changes(
                        self.ctx, target, sources, table.version, change, started
                    )
                else:
                    record, engine = merged, "local"
            else:
                record = build_tile(self.ctx, target, sources, ancestor, started)
        ensure_registered(self.ctx.spark, target.name, target.location, self.ctx.warehouse)
        self._remember(target, record)
        warning = vacuum.after_build(self.ctx.spark, self.ctx.model, target)
        status = BuildStatus.REFRESHED if existed else BuildStatus.BUILT
        return BuildResult(
            target.name,
            target.kind,
            status,
            RefreshPath(record.refresh_path),
            reason,
            record.rows,
            self.ctx.clock() - started,
            None,
            record.built_from,
            warning,
            estimate,
            engine,
        )

    def _merge_in_process(
        self,
        target: Target,
        sources: Snapshot,
        tile_version: int,
        change: ChangeRows,
        started: float,
    ) -> TileRecord | Refusal:
        rows = self.changes.arrow(change, local_merge.MAX_ROWS)
        if rows is None:
            return Refusal(f"the change has more than {local_merge.MAX_ROWS:,} groups")
        return merge_in_process(self.ctx, target, sources, tile_version, change, rows, started)

    def _choose(self, target: Target, decision: RefreshDecision) -> Choice:
        """A tile's path, why, the estimates (when incremental was correct) and the ancestor
        a full build rolls up."""
        assert target.spec is not None
        lattice = self.ctx.model.lattice(target.spec.lattice)
        ancestor = None
        if self.rollup:
            candidates = self._candidates(lattice)
            ancestor = cheapest_ancestor(target.spec, candidates, self._star_rows(lattice))
        rolled = f"; rolled up from {ancestor.name}" if ancestor else ""
        scope = self._scope(lattice, target.spec, decision)
        if decision.path != INCREMENTAL and not isinstance(scope, PartitionScope):
            return FULL, decision.reason + (scope or "") + rolled, None, ancestor, None
        table = self.ctx.reader.state(target.location)
        record = table.record if table else None
        blocker = None
        if decision.path != INCREMENTAL:
            blocker = "the change cannot be merged"
        elif decision.feed:
            blocker = retraction_blocker(target.spec, self._not_null(lattice))
        tile_rows = record.rows if record else None
        in_process = local_merge.likely(target.location, tile_rows, decision.change_rows)
        by_partitions = isinstance(scope, PartitionScope)
        estimate = choose(
            tile_rows=tile_rows,
            change_rows=decision.change_rows,
            full_rows=ancestor.rows if ancestor else self._star_rows(lattice),
            full_from=ancestor.name if ancestor else "star",
            blocker=blocker,
            min_saving=LOCAL_MIN_SAVING if in_process else MIN_SAVING,
            partitions=by_partitions,
            partition_rows=self._partition_rows(lattice, decision) if by_partitions else None,
        )
        reason = f"{decision.reason}; {estimate.describe()}"
        if estimate.choice == INCREMENTAL:
            return INCREMENTAL, reason, estimate, None, None
        if estimate.choice == PARTITIONS:
            assert isinstance(scope, PartitionScope)
            why = f"{reason} ({estimate.why}: {scope.describe()})"
            return PARTITIONS, why, estimate, None, scope
        return FULL, f"{reason} ({estimate.why}){rolled}", estimate, ancestor, None

    def _scope(
        self, lattice: Lattice, spec: TileSpec, decision: RefreshDecision
    ) -> PartitionScope | str | None:
        """The partitions path's scope when it is correct; else why not, when the fact table
        is partitioned (`; not by partitions: …`), or None."""
        if decision.partitions is None or decision.fact_version is None:
            return None
        partitioning = self._partitioning(lattice, decision.fact_version)
        if not partitioning:
            return None
        partitions = self._touched(lattice, decision)
        if partitions is None:
            return "; not by partitions: the partitions of the files it removed are not known"
        found = partition_scope(lattice, spec, partitioning, partitions)
        return found if isinstance(found, PartitionScope) else f"; not by partitions: {found}"

    def _touched(self, lattice: Lattice, decision: RefreshDecision) -> tuple | None:
        """Every partition of the fact table the change touched (removed files whose actions
        lack values looked up among the files of the version the tile holds)."""
        change, old, new = decision.partitions, decision.from_version, decision.fact_version
        assert change is not None and new is not None
        key = (lattice.name, old, new)
        if key not in self.touched:
            partitioning = self._partitioning(lattice, new) or ()
            columns = [name for name, _ in partitioning]
            lacking = any(not {n for n, _ in v} >= set(columns) for _, v in change.removed)
            location = _fact(self.ctx, lattice).location
            before = None
            if lacking and old is not None and location is not None:
                before = file_partitions(location, old)
            self.touched[key] = complete_partitions(change, columns, before)
        return self.touched[key]

    def _partitioning(self, lattice: Lattice, version: int) -> tuple[tuple[str, str], ...] | None:
        """The fact table's partition columns and their types at `version` (its log says)."""
        key = (lattice.name, version)
        if key not in self.partitioning:
            fact = _fact(self.ctx, lattice)
            found = None
            if fact.location is not None:
                found = partition_columns(self.ctx.spark, fact.location, version)
            self.partitioning[key] = found
        return self.partitioning[key]

    def _partition_rows(self, lattice: Lattice, decision: RefreshDecision) -> int | None:
        """Rows of the fact table in the partitions the change touched (its files' counts)."""
        partitions = self._touched(lattice, decision)
        assert partitions is not None and decision.fact_version is not None
        key = (lattice.name, decision.fact_version, partitions)
        if key not in self.partition_rows:
            fact = _fact(self.ctx, lattice)
            found = None
            if fact.location is not None:
                found = rows_in(fact.location, decision.fact_version, partitions)
            self.partition_rows[key] = found
        return self.partition_rows[key]

    def _plan(self, target: Target) -> BuildResult:
        """What refreshing the target would do, nothing built (`refresh --dry-run`)."""
        decision, _sources, _existed = self._decide(target)
        if decision.path == NONE:
            return self._skipped(target, decision)
        path, reason, estimate = decision.path, decision.reason, None
        if target.spec is not None:
            path, reason, estimate, _ancestor, _scope = self._choose(target, decision)
            # Coarser tiles of the batch may roll up this one once it is built.
            table = self.ctx.reader.state(target.location)
            rows = table.record.rows if table and table.record else target.estimated_rows
            if rows is not None:
                lattice = self.ctx.model.lattice(target.spec.lattice)
                self._candidates(lattice).append(
                    Ancestor(target.name, target.location, target.spec, int(rows), -1)
                )
        return BuildResult(
            target.name, target.kind, BuildStatus.PLANNED, path, reason, estimate=estimate
        )

    def _feed(self, lattice: Lattice, current: Snapshot) -> bool:
        """Whether the fact table's current metadata enables the change data feed."""
        if lattice.name not in self.feeds:
            fact = _fact(self.ctx, lattice)
            version = current.versions.get(fact.qualified_name)
            self.feeds[lattice.name] = (
                fact.location is not None
                and isinstance(version, int)
                and change_feed_enabled(self.ctx.spark, fact.location, version)
            )
        return self.feeds[lattice.name]

    def _not_null(self, lattice: Lattice) -> frozenset[str]:
        """Labels of the lattice columns that are never NULL (Spark's analysis of the star;
        nothing runs)."""
        if lattice.name not in self.not_null:
            snapshot = self._snapshot(lattice)
            relations = pinned_relations(self.ctx.model, lattice, dict(snapshot.versions))
            columns = list(lattice.columns)
            select = ", ".join(f"{c.expression} AS `_{i}`" for i, c in enumerate(columns))
            schema = self.ctx.spark.sql(f"SELECT {select} {star_from(lattice, relations)}").schema
            self.not_null[lattice.name] = frozenset(
                c.label for c, f in zip(columns, schema.fields, strict=True) if not f.nullable
            )
        return self.not_null[lattice.name]

    def _skipped(self, target: Target, decision: RefreshDecision) -> BuildResult:
        table = self.ctx.reader.state(target.location)
        record = table.record if table else None
        if record is not None:
            self._remember(target, record)
        rows = record.rows if record else None
        return BuildResult(
            target.name, target.kind, BuildStatus.SKIPPED, NONE, decision.reason, rows
        )

    def _remember(self, target: Target, record: TileRecord) -> None:
        """A tile current at the batch snapshot can be the ancestor of coarser ones."""
        if target.spec is None:
            return
        version = deltalog.latest_version(self.ctx.spark, target.location)
        if version is None:
            return
        found = Ancestor(target.name, target.location, target.spec, record.rows, version)
        self._candidates(self.ctx.model.lattice(target.spec.lattice)).append(found)

    def _candidates(self, lattice: Lattice) -> list[Ancestor]:
        """Current tiles of the lattice: those on storage at the snapshot, then this batch's."""
        if lattice.name not in self.ancestors:
            from mvlattice.jobs.catalog import built_targets

            snapshot = self._snapshot(lattice)
            found = []
            for target in built_targets(self.ctx, lattice.name):
                table = self.ctx.reader.state(target.location)
                record = table.record if table else None
                spec = target.spec  # built_targets lists tiles: each has its spec
                if spec and table and record and self._current(target, table, snapshot):
                    found.append(
                        Ancestor(target.name, target.location, spec, record.rows, table.version)
                    )
            self.ancestors[lattice.name] = found
        return self.ancestors[lattice.name]

    def _current(self, target: Target, table: TableState, snapshot: Snapshot) -> bool:
        """Whether the table is exactly its definition at `snapshot`: the rule of freshness."""
        record = table.record
        if record is None:
            return False
        decision = decide_refresh(
            recorded=record.snapshot,
            current=snapshot,
            fact=None,
            tile_change=table.tile_change,
            definition_changed=record.definition != definition_of(self.ctx.model, target),
        )
        return decision.path == NONE

    def _star_rows(self, lattice: Lattice) -> int | None:
        """Rows of the fact table at the snapshot (Delta answers count(*) from its log)."""
        if lattice.name not in self.star_rows:
            fact = _fact(self.ctx, lattice)
            version = self._snapshot(lattice).versions.get(fact.qualified_name)
            relation = table_relation(
                read_name(fact), version if isinstance(version, int) else None
            )
            try:
                row = self.ctx.spark.sql(f"SELECT count(*) AS n FROM {relation}").first()
                self.star_rows[lattice.name] = int(row["n"]) if row else None
            except Exception:  # noqa: BLE001 - without a count, any finer tile is cheaper
                self.star_rows[lattice.name] = None
        return self.star_rows[lattice.name]

    def _record(self, result: BuildResult, started: float) -> None:
        self.ctx.store.finish(
            Outcome(
                result.target,
                result.status,
                result.path,
                result.reason,
                result.rows,
                started,
                self.ctx.clock(),
                result.error,
                self.ctx.trigger,
            )
        )


def _merges(decision: RefreshDecision, choice: Choice | None) -> bool:
    """Whether a target's path is merging the change."""
    return decision.path == INCREMENTAL and choice is not None and choice[0] == INCREMENTAL


def _fact(ctx: JobContext, lattice: Lattice):  # the model Table
    table = ctx.model.table(lattice.root.schema, lattice.root.table)
    if table is None:
        raise MvlatticeError(f"lattice '{lattice.name}': its fact table is not in the model")
    return table


def _message(exc: BaseException) -> str:
    """One line for people: our own message, or the JVM exception's first line."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    java = getattr(exc, "java_exception", None)  # py4j: Spark errors PySpark does not map
    text = (str(java) if java is not None else str(exc)).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    if java is not None:
        head, sep, rest = first.partition(": ")
        return f"{head.rsplit('.', 1)[-1]}: {rest}" if sep else first
    return first if isinstance(exc, MvlatticeError) else f"{type(exc).__name__}: {first}"
