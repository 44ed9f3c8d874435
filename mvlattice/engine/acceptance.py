"""Spark's word on a query as written: parsed and analyzed by Spark, nothing run, before the
query is rewritten (issue 36).

sqlglot reads more than Spark does — double-quoted names, `LIMIT 0, 5`, `CAST(x AS TEXT)`,
functions Spark lacks, a column left out of the GROUP BY — and writes what it read back as valid
Spark SQL, so a query Spark rejects could get an answer from a tile. A query is therefore
rewritten only when Spark accepts its text, and Spark's rejection is the error the same query
gets unrewritten (`spark_sql_errors`: one conversion for both).

An analysis costs a py4j round trip and the analyzer's work (resolving each table: a Delta
table's snapshot), 20-35 ms; a served query is asked again and again, and dashboards send the
same shapes with other literals, so accepted texts are kept, per exact text and per shape
(`sql.template`), in a bounded LRU. Rejected texts are not kept: a table built or registered later
may make them valid, and an error path need not be fast.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from mvlattice.errors import SqlError, first_line

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

KEPT = 4096  # accepted texts and shapes kept (a few hundred bytes each)
SHAPE_MARK = "\x00shape:"  # a kept shape's key never equals a text's


# Spark's analysis of a text in some session: nothing when it accepts, else SqlError.
Analyze = Callable[[str], None]


class Acceptance:
    """Whether Spark accepts a query's text; accepted texts kept per analyzer (bounded,
    thread-safe): a session that reads file paths accepts what a sandbox's does not."""

    def __init__(self, size: int = KEPT) -> None:
        self.size = size
        self.analyses = 0  # texts analyzed (not found among the kept ones)
        self.shape_hits = 0  # texts accepted for their shape, with no analysis of their own
        self._accepted: OrderedDict[tuple[Analyze, str], None] = OrderedDict()
        self._lock = threading.Lock()

    def check(
        self, sql: str, analyze: Analyze, shape: Callable[[str], str | None] | None = None
    ) -> None:
        """Nothing when `analyze` accepts `sql` (now or before); else its SqlError. `shape`
        gives a text's literal-free key (`sql.template.literal_free_key`): once one text of
        a shape is accepted, every text of that shape is (issue 31)."""
        key = (analyze, sql)
        if self._kept(key):
            return
        found = shape(sql) if shape is not None else None
        shaped = (analyze, SHAPE_MARK + found) if found is not None else None
        if shaped is not None and self._kept(shaped):
            with self._lock:
                self.shape_hits += 1
            return
        with self._lock:
            self.analyses += 1
        analyze(sql)
        with self._lock:
            self._accepted[key] = None
            if shaped is not None:
                self._accepted[shaped] = None
            while len(self._accepted) > self.size:
                self._accepted.popitem(last=False)

    def _kept(self, key: tuple[Analyze, str]) -> bool:
        with self._lock:
            if key not in self._accepted:
                return False
            self._accepted.move_to_end(key)
            return True


def analyze(spark: SparkSession, sql: str) -> None:
    """Spark's parser and analyzer over `sql`, with commands skipped (nothing runs, whatever
    the text is); SqlError as `spark.sql(sql)` would fail."""
    state = spark._jsparkSession.sessionState()  # no public API analyzes without running
    jvm: Any = spark._jvm
    skip = jvm.org.apache.spark.sql.execution.CommandExecutionMode.SKIP()
    # The parser reads its settings from the thread's active session (without one: Spark's
    # defaults, `${…}` substitution on).
    jvm.org.apache.spark.sql.SparkSession.setActiveSession(spark._jsparkSession)
    with spark_sql_errors():
        state.executePlan(state.sqlParser().parsePlan(sql), skip).assertAnalyzed()


@contextmanager
def spark_sql_errors() -> Iterator[None]:
    """Spark's parse and analysis errors as SqlError with Spark's first line."""
    from pyspark.errors import AnalysisException, ParseException

    try:
        yield
    except ParseException as exc:
        raise SqlError(f"SQL does not parse: {first_line(exc)}") from None
    except AnalysisException as exc:
        raise SqlError(f"SQL is not valid for this model: {first_line(exc)}") from None
