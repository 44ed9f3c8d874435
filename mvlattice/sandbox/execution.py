"""Running a checked query bounded in time: its own Spark job group, cancelled at the deadline
or as soon as its client goes away (tasks are interrupted, so the cores come back)."""

from __future__ import annotations

import itertools
import threading
import time
from typing import TYPE_CHECKING, Any

from mvlattice.errors import JobError, QueryTimeoutError, ResponseTooLargeError, first_line
from mvlattice.output import printable_intervals

# The thread-local properties a bounded query sets, cleared after it.
_LOCAL_PROPERTIES = (
    "spark.jobGroup.id",
    "spark.job.description",
    "spark.job.interruptOnCancel",
    "spark.scheduler.pool",
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_ids = itertools.count(1)
WATCH_SECONDS = 0.1  # how often the deadline and the cancel event are looked at


# Spark refuses a task result larger than spark.driver.maxResultSize (serve sets it): the
# answer was too large, not the query wrong.
_RESULT_TOO_LARGE = "spark.driver.maxResultSize"


def collect_bounded(
    frame: DataFrame,
    limit: int | None,
    timeout: float,
    cancel: threading.Event | None = None,
    max_bytes: int | None = None,
) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Columns and at most `limit` rows; QueryTimeoutError when cancelled. With `max_bytes`,
    rows are fetched a partition at a time and no more are read once they hold about that
    many bytes (the caller cuts the answer there): a huge answer never sits in Python whole."""
    sc = frame.sparkSession.sparkContext
    group = f"mvlattice-query-{next(_ids)}"
    cancel = cancel if cancel is not None else threading.Event()
    why: list[str] = []

    def watch() -> None:
        # Polls `cancel` rather than sharing it as "done": the request's own cancel event
        # must only ever mean "stop", never "finished". Once stopping, it cancels the group
        # again until the query ends: a job submitted after a cancel (the next partition of
        # an answer, a query still being planned) is not stopped by the earlier one.
        deadline = time.monotonic() + timeout
        while not finished.wait(WATCH_SECONDS):
            if not why and cancel.is_set():
                why.append("query cancelled: the client went away")
            elif not why and time.monotonic() >= deadline:
                why.append(f"query cancelled after {timeout:g} s (the service's --query-timeout)")
            if why:
                sc.cancelJobGroup(group)

    if cancel.is_set():  # stopped before it started (its deadline passed while it waited)
        raise QueryTimeoutError("query cancelled before it ran")
    finished = threading.Event()
    watcher = threading.Thread(target=watch, name=f"{group}-deadline", daemon=True)
    sc.setJobGroup(group, "mvlattice client query", interruptOnCancel=True)
    # Under FAIR scheduling, pools share the cores; one per thread keeps a long query from
    # holding every core while a short one waits behind it.
    sc.setLocalProperty("spark.scheduler.pool", f"query-{threading.get_ident() % 64}")
    watcher.start()
    try:
        frame = printable_intervals(frame)  # PySpark cannot collect every interval type
        limited = frame.limit(limit) if limit is not None else frame
        rows = limited.collect() if max_bytes is None else _rows_within(limited, max_bytes)
    except Exception as exc:  # noqa: BLE001 - executor failures arrive as many types
        if why:
            raise QueryTimeoutError(why[0]) from None
        if _RESULT_TOO_LARGE in str(exc):
            raise ResponseTooLargeError(
                "the answer is larger than the service lets one query hold in memory "
                f"({_RESULT_TOO_LARGE}); select fewer or smaller rows"
            ) from None
        raise JobError(f"query failed: {first_line(exc)}") from None
    finally:
        finished.set()
        for key in _LOCAL_PROPERTIES:  # None clears a property (pyspark's stub says str)
            sc.setLocalProperty(key, None)  # type: ignore[arg-type]
    return list(frame.columns), [tuple(r) for r in rows]


def _rows_within(frame: DataFrame, max_bytes: int) -> list[Any]:
    """Rows until their JSON surely holds more than `max_bytes` (that row included, so the
    caller's own cut at `max_bytes` sees the limit crossed and says `truncated`).

    One job, as `collect()` runs it (bounded in the JVM by the row limit and
    spark.driver.maxResultSize), read from its socket a row at a time and dropped once enough
    is read. Not `toLocalIterator()`: it runs a job per partition outside the query's SQL
    execution, and a 30-minute `serve` soak saw the driver heap fill with those jobs' metrics
    (issue 31)."""
    from pyspark.serializers import BatchedSerializer, CPickleSerializer
    from pyspark.util import _load_from_socket  # what DataFrame.collect() reads with

    rows, size = [], 0
    sock_info = frame._jdf.collectToPython()
    with _load_from_socket(sock_info, BatchedSerializer(CPickleSerializer())) as stream:
        for row in stream:
            rows.append(row)
            size += _json_bytes_at_least(row)
            if size > max_bytes:
                break
    return rows


def _json_bytes_at_least(value: Any) -> int:
    """A lower bound of a value's JSON size (with its separator): never more than its JSON."""
    if isinstance(value, str):
        return len(value) + 3
    if isinstance(value, bytes | bytearray):
        return len(value) + 1
    if isinstance(value, list | tuple):
        return sum(_json_bytes_at_least(v) for v in value) + 2
    if isinstance(value, dict):
        return sum(_json_bytes_at_least(k) + _json_bytes_at_least(v) for k, v in value.items())
    return 2
