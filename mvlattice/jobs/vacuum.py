"""Vacuuming a target's table after each build, so storage does not grow with refreshes: the
files only replaced versions read go once they have been unreferenced for the retention.

The retention is written with every build as the table's `delta.deletedFileRetentionDuration`,
in the same commit as the data, and VACUUM runs without RETAIN: Delta then uses the table's own
retention, so its safety check (`retentionDurationCheck`, which refuses a RETAIN shorter than the
table's configured retention) holds without being switched off — no session setting another
thread could see. LITE finds the files in the log's remove actions instead of listing the folder;
when the log no longer reaches back that far it refuses, and the listing does it. A vacuum
costs seconds, so it runs after a build only when due (see `due`).

Why a floor: a query that began on a version, the serving engine reading the version freshness
approved, a rollup or a merge reading an older tile version all need that version's files until
they finish. A version's files become removable only after a newer version replaced it, which is
after such a reader began; so a retention at least as long as the longest read keeps them:
MIN_RETENTION, or the service's query timeout when that is longer.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from mvlattice.delta import log as deltalog
from mvlattice.delta import storage
from mvlattice.lattice.lattice import DEFAULT_VACUUM_RETENTION, MIN_VACUUM_RETENTION
from mvlattice.settings import join_location
from mvlattice.sql.quote import path_identifier

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from mvlattice.jobs.targets import Target
    from mvlattice.model.loader import Model

# Seconds a query may run in the service of this process (`serve --query-timeout` sets it).
QUERY_TIMEOUT_CONF = "spark.mvlattice.queryTimeout"
RETENTION_PROPERTY = "delta.deletedFileRetentionDuration"
MIN_RETENTION = MIN_VACUUM_RETENTION  # tests lower it to see files go within seconds
# A vacuum costs seconds (LITE; a listing costs more), so a table is vacuumed after a build only
# once a quarter of its retention (at most a day) has passed since its last vacuum: the files of
# a replaced version then stay at most retention + that interval.
INTERVAL_FRACTION = 0.25
MAX_INTERVAL = 86400.0
LAST_VACUUM_INFO = "_last_vacuum_info"  # Delta's own file, rewritten by every vacuum


def declared_retention(model: Model, target: Target) -> float:
    """The target's own `vacuum.retention`, else its model's, else 7 days."""
    from mvlattice.jobs.targets import policy_for

    own = policy_for(model, target).vacuum_retention_seconds
    for value in (own, model.vacuum_retention_seconds):
        if value is not None:
            return value
    return DEFAULT_VACUUM_RETENTION


def retention(spark: SparkSession | None, model: Model, target: Target) -> float:
    """Seconds the files of a replaced version stay: the declared retention, never below the
    floor (see the module's docstring)."""
    return max(declared_retention(model, target), floor(spark))


def floor(spark: SparkSession | None) -> float:
    timeout = 0.0
    if spark is not None:
        try:
            timeout = float(spark.conf.get(QUERY_TIMEOUT_CONF, "0") or 0)
        except ValueError:
            timeout = 0.0
    return max(MIN_RETENTION, timeout)


def retention_property(seconds: float) -> tuple[str, str]:
    """The table property that carries the retention (whole seconds, rounded up)."""
    return RETENTION_PROPERTY, f"interval {math.ceil(seconds)} seconds"


def raised_note(spark: SparkSession | None, model: Model, target: Target) -> str | None:
    """Why the retention used is longer than the model asks, if it is."""
    asked, used = declared_retention(model, target), retention(spark, model, target)
    if asked >= used:
        return None
    return f"vacuum retention {asked:g}s raised to {used:g}s (the minimum: longest query allowed)"


def vacuum(spark: SparkSession, location: str) -> str | None:
    """VACUUM the Delta table at `location` with its own retention; a warning when it failed
    (the files then stay until the next build's vacuum), else None."""
    table = f"delta.{path_identifier(location)}"
    try:
        with _JVM_STDOUT.to_stderr(spark):
            try:
                spark.sql(f"VACUUM {table} LITE").collect()
            except Exception:  # noqa: BLE001 - LITE refuses when the log is too short: list
                spark.sql(f"VACUUM {table}").collect()
    except Exception as exc:  # noqa: BLE001 - a failed vacuum never fails the build
        return f"vacuum failed; replaced versions' files stay until the next build: {_line(exc)}"
    return None


class _StdoutToStderr:
    """Delta's VACUUM prints 'Deleted N files …' on the JVM's stdout, which is this process's
    own: it would land in the middle of `--json` output. While any vacuum runs, the JVM's
    stdout goes to its stderr (counted, so overlapping vacuums on several threads restore
    the original once, after the last)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._saved: object = None

    @contextlib.contextmanager
    def to_stderr(self, spark: SparkSession) -> Iterator[None]:
        system = self._system(spark)
        if system is None:
            yield
            return
        with self._lock:
            if self._users == 0:
                self._saved = system.out
                system.setOut(system.err)
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0:
                    system.setOut(self._saved)

    @staticmethod
    def _system(spark: SparkSession):  # py4j's java.lang.System, or None
        jvm = getattr(spark, "_jvm", None)  # None on Spark Connect: nothing to redirect
        return jvm.java.lang.System if jvm is not None else None


_JVM_STDOUT = _StdoutToStderr()


def _line(exc: BaseException) -> str:
    text = str(getattr(exc, "java_exception", None) or exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def after_build(
    spark: SparkSession, model: Model, target: Target, now: float | None = None
) -> str | None:
    """Vacuum a target's table just written, when due; what to warn its builder about."""
    seconds = retention(spark, model, target)
    notes = [raised_note(spark, model, target)]
    if due(spark, target.location, seconds, time.time() if now is None else now):
        notes.append(vacuum(spark, target.location))
    return "; ".join(n for n in notes if n) or None


def due(spark: SparkSession | None, location: str, seconds: float, now: float) -> bool:
    """Whether the table's last vacuum — or, never vacuumed, its creation — is older than its
    interval (INTERVAL_FRACTION of its retention, at most MAX_INTERVAL). Delta rewrites
    `_delta_log/_last_vacuum_info` with every vacuum: one stat answers."""
    interval = min(seconds * INTERVAL_FRACTION, MAX_INTERVAL)
    last = storage.modified_time(spark, join_location(location, "_delta_log", LAST_VACUUM_INFO))
    if last is None:
        last = deltalog.commit_time(spark, location, 0)
    return last is None or now - last >= interval
