"""`TileEngine.answer`: a rewritten query answered in the driver, or a `Refusal` saying why
Spark must answer it.

The query may read only tables whose snapshot freshness approved (`ApprovedSnapshot`: the one
version read, never a newer or older one), each local, and none larger than the model's
`fast_path` bounds. It is transpiled (`transpile`), run by DuckDB over the snapshots' Arrow
data (`TileCache`), and its result typed as Spark's analyzer types the same SQL (`describe`,
asked once per SQL and versions). DuckDB runs with no access to files or the network: the
registered tiles are all it can read.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mvlattice.delta import storage
from mvlattice.engine.answer_cache import AnswerCache
from mvlattice.engine.results import LocalAnswer, spark_rows
from mvlattice.engine.tile_cache import TileCache
from mvlattice.engine.watchdog import Watchdog
from mvlattice.errors import QueryTimeoutError, first_line
from mvlattice.sql.refusal import Refusal
from mvlattice.sql.transpile import Source, Transpiled, arrow_types, to_duckdb

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from mvlattice.jobs.catalog import ApprovedSnapshot
    from mvlattice.model.fast_path import FastPath

# Spark's output schema of a SQL text (analysis only, no job): the types the answer must have.
Describe = Callable[[str], "StructType"]

_PLANS = 512  # transpiled queries and Spark schemas kept, by SQL and versions
DEFAULT_TIMEOUT = 60.0  # seconds, as the service's --query-timeout


@dataclass(frozen=True, slots=True)
class _Plan:
    transpiled: Transpiled
    schema: StructType


class TileEngine:
    def __init__(self, fast_path: FastPath, threads: int | None = None) -> None:
        self.fast_path = fast_path
        self.cache = TileCache(fast_path.cache_bytes)
        self.answers = AnswerCache(fast_path.answer_bytes)
        # Small tiles take one thread; large ones scan faster on every core.
        self._threads = threads if threads is not None else min(4, os.cpu_count() or 1)
        self._db: Any = None
        self._lock = threading.Lock()
        self._plans: OrderedDict[tuple, _Plan | Refusal] = OrderedDict()
        self._watchdog = Watchdog()
        # One cursor per thread, its tiles registered once: registering costs more than many
        # a query on a small tile.
        self._local = threading.local()
        self._cursors: weakref.WeakSet[Any] = weakref.WeakSet()  # a thread's goes with it

    def answer(
        self,
        sql: str,
        approved: Mapping[str, ApprovedSnapshot],
        describe: Describe,
        limit: int | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        cancel: threading.Event | None = None,
    ) -> LocalAnswer | Refusal:
        """`approved`: table (lower case) -> the snapshot freshness approved, for every table
        the rewrite decided to read. Past `timeout` seconds, or once `cancel` is set, the
        query is interrupted: QueryTimeoutError (Spark would not be faster)."""
        if not self.fast_path.enabled:
            return Refusal("the tile engine is off for this model (fast_path)")
        unfit = self._unfit(approved)
        if unfit is not None:
            return unfit
        # `describe` is part of the key: the sandbox's check must not be skipped for SQL that
        # another describer (the workspace's own session) approved.
        plan = self._plan((sql, _versions(approved), describe), sql, approved, describe)
        if isinstance(plan, Refusal):
            return plan
        return self._run(plan, approved, limit, timeout, cancel)

    def plan_made(
        self, sql: str, approved: Mapping[str, ApprovedSnapshot], describe: Describe
    ) -> tuple[Transpiled, StructType] | None:
        """The DuckDB SQL and Spark schema `answer` made for `sql` over these snapshots through
        `describe`, if it made them (a template binds its literals into them)."""
        with self._lock:
            found = self._plans.get((sql, _versions(approved), describe))
        return None if found is None or isinstance(found, Refusal) else (found.transpiled,
                                                                          found.schema)  # fmt: skip

    def answer_planned(
        self,
        transpiled: Transpiled,
        schema: StructType,
        approved: Mapping[str, ApprovedSnapshot],
        limit: int | None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        cancel: threading.Event | None = None,
    ) -> LocalAnswer | Refusal:
        """`answer` for a query planned before (a template's, its literals bound anew)."""
        return self._run(_Plan(transpiled, schema), approved, limit, timeout, cancel)

    def decide(self, sql: str, approved: Mapping[str, ApprovedSnapshot]) -> Refusal | None:
        """Whether `answer` would answer (None) or why Spark must, without running anything
        or asking Spark (what `explain` shows). What only running shows (an overflow, a type
        Spark's analyzer gives otherwise) is not foreseen here."""
        if not self.fast_path.enabled:
            return Refusal("the tile engine is off for this model (fast_path)")
        unfit = self._unfit(approved)
        if unfit is not None:
            return unfit
        sources = self._sources(approved)
        if isinstance(sources, Refusal):
            return sources
        transpiled = to_duckdb(sql, sources)
        return transpiled if isinstance(transpiled, Refusal) else None

    def _unfit(self, approved: Mapping[str, ApprovedSnapshot]) -> Refusal | None:
        bounds = self.fast_path
        for name, snap in approved.items():
            if storage.local_path(snap.location) is None:
                return Refusal(f"{name} is not on a local file system")
            if snap.rows is None or snap.rows > bounds.max_rows:
                return Refusal(f"{name} has more than fast_path.max_rows ({bounds.max_rows:,})")
            if snap.size_bytes is None or snap.size_bytes > bounds.max_bytes:
                return Refusal(f"{name} is larger than fast_path.max_bytes ({bounds.max_bytes:,})")
        return None

    def _plan(
        self,
        key: tuple,
        sql: str,
        approved: Mapping[str, ApprovedSnapshot],
        describe: Describe,
    ) -> _Plan | Refusal:
        with self._lock:
            found = self._plans.get(key)
            if found is not None:
                self._plans.move_to_end(key)
                return found
        plan = self._make_plan(sql, approved, describe)
        with self._lock:
            self._plans[key] = plan
            while len(self._plans) > _PLANS:
                self._plans.popitem(last=False)
        return plan

    def _make_plan(
        self, sql: str, approved: Mapping[str, ApprovedSnapshot], describe: Describe
    ) -> _Plan | Refusal:
        sources = self._sources(approved)
        if isinstance(sources, Refusal):
            return sources
        transpiled = to_duckdb(sql, sources)
        if isinstance(transpiled, Refusal):
            return transpiled
        schema = describe(sql)  # raises what Spark's analyzer raises: the caller's error
        return _Plan(transpiled, schema)

    def _sources(self, approved: Mapping[str, ApprovedSnapshot]) -> dict[str, Source] | Refusal:
        """Each approved table's name in DuckDB and its columns' types (its data read, and
        kept in the cache, on the way)."""
        sources: dict[str, Source] = {}
        for i, (name, snap) in enumerate(sorted(approved.items())):
            try:
                table = self.cache.table(snap.location, snap.version)
            except Exception as exc:  # noqa: BLE001 - delta-rs cannot read it: Spark can
                return Refusal(f"delta-rs cannot read {name}: {first_line(exc)}")
            sources[name] = Source(f"tile_{i}", arrow_types(table))
        return sources

    def _run(
        self,
        plan: _Plan,
        approved: Mapping[str, ApprovedSnapshot],
        limit: int | None,
        timeout: float,
        cancel: threading.Event | None,
    ) -> LocalAnswer | Refusal:
        import duckdb

        cursor, registered = self._cursor()
        watch = self._watchdog.watch(cursor, timeout, cancel)
        try:
            for i, (name, snap) in enumerate(sorted(approved.items())):
                if name in plan.transpiled.tables:
                    table = self.cache.table(snap.location, snap.version)
                    if registered.get(f"tile_{i}") is not table:
                        cursor.register(f"tile_{i}", table)
                        registered[f"tile_{i}"] = table
            relation = cursor.sql(plan.transpiled.sql)
            types = [str(t) for t in relation.types]
            rows = (relation.limit(limit) if limit is not None else relation).fetchall()
        except duckdb.Error as exc:
            if watch.why:
                raise QueryTimeoutError(watch.why) from None
            # A failure here (overflow, division by zero, a bad cast) is one Spark reports in
            # its own words: let Spark answer.
            return Refusal(f"DuckDB failed ({first_line(exc)}); Spark answers instead")
        finally:
            self._watchdog.done(watch)
            if watch.why:  # interrupted, perhaps after the run: the next query gets a new cursor
                self._local.database = None
        converted = spark_rows(rows, types, plan.schema)
        if isinstance(converted, Refusal):
            return converted
        return LocalAnswer(tuple(plan.schema.names), tuple(converted))

    def _cursor(self) -> tuple[Any, dict[str, Any]]:
        """This thread's cursor on the database, and the tables registered in it by name."""
        database = self._database()
        local = self._local
        if getattr(local, "database", None) is not database:
            local.database, local.cursor, local.registered = database, database.cursor(), {}
            with self._lock:
                self._cursors.add(local.cursor)
        return local.cursor, local.registered

    def _database(self) -> Any:  # noqa: ANN401 - duckdb.DuckDBPyConnection, imported lazily
        with self._lock:
            if self._db is None:
                import duckdb

                self._db = duckdb.connect(
                    config={
                        "enable_external_access": False,
                        "threads": self._threads,
                        "memory_limit": f"{max(1, self.fast_path.cache_bytes >> 20)}MB",
                    }
                )
            return self._db

    def close(self) -> None:
        with self._lock:
            for cursor in list(self._cursors):
                cursor.close()
            self._cursors.clear()
            if self._db is not None:
                self._db.close()
                self._db = None
        self.cache.clear()
        self.answers.clear()


def _versions(approved: Mapping[str, ApprovedSnapshot]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((name, snap.version) for name, snap in approved.items()))
