"""The query log without Spark: fingerprints of query shapes, normalized SQL, `--since`, the
records, and the writer's batching and failure handling (its Delta append replaced by a list;
tests/integration/test_service_querylog_delta.py does the same against real Delta)."""

from __future__ import annotations

import datetime as dt
import threading

import pytest

from mvlattice.errors import UsageError
from mvlattice.http.recent import RecentQueries
from mvlattice.querylog import log as querylog
from mvlattice.querylog.log import MAX_SQL_BYTES, Request, cap_sql, parse_since, to_record
from mvlattice.querylog.retention import parse_retention
from mvlattice.querylog.writer import (
    LogOptions,
    QueryLogWriter,
    append_isolating,
    isolation_budget,
)
from mvlattice.sql.fingerprint import (
    blank_literals,
    blank_text,
    describe,
    fingerprint,
    normalize_sql,
    shape,
)
from tests.support import wait_until

NO_PRUNING = LogOptions(prune_every=None)  # the fake append below has no table to prune


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("select a from t where x = 5", "SELECT a FROM t WHERE x = 7"),
        ("select a from t where x = 'p'", "select a from t  where x='q'"),
        ("select a from t where y in (1, 2, 3)", "select a from t where y in (4)"),
        ("select a from t limit 10", "select a from t limit 99"),
        (
            "select A from T where d > date '2020-01-01'",
            "select a from t where d > date '1999-12-31'",
        ),
        ("select a from t where x = -1", "select a from t where x = 2.5"),
    ],
)
def test_same_shape_same_fingerprint(a: str, b: str) -> None:
    assert fingerprint(a) == fingerprint(b)
    assert len(fingerprint(a)) == 16


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("select a from t where x = 5", "select a from t where y = 5"),
        ("select a from t", "select b from t"),
        ("select a from t where x = 1", "select a from t where x > 1"),
        ("select a, count(*) from t group by a", "select a, sum(b) from t group by a"),
        ("select a from t where y in (1, 2)", "select a from t where y in (select b from u)"),
    ],
)
def test_different_shapes_differ(a: str, b: str) -> None:
    assert fingerprint(a) != fingerprint(b)


def test_shape_blanks_literals_and_lowercases_identifiers() -> None:
    assert shape("SELECT Name FROM T WHERE x = 5 AND y IN (1, 2)") == (
        "SELECT name FROM t WHERE x = ? AND y IN (?)"
    )


def test_normalized_sql_keeps_literals() -> None:
    assert normalize_sql("select   a\nfrom t where x = 5 ") == "SELECT a FROM t WHERE x = 5"


def test_unparseable_sql_still_has_a_fingerprint() -> None:
    assert normalize_sql("select 1 from  where\n x = 'a'") == "select 1 from where x = 'a'"
    assert fingerprint("select 1 from where x = 'a'") == fingerprint("select 2 from where x = 'b'")


NOW = dt.datetime(2026, 5, 1, 12, 0, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2h", dt.datetime(2026, 5, 1, 10, 0, tzinfo=dt.UTC)),
        ("1d", dt.datetime(2026, 4, 30, 12, 0, tzinfo=dt.UTC)),
        ("2026-04-01", dt.datetime(2026, 4, 1, tzinfo=dt.UTC)),
        ("2026-04-01T08:30:00+02:00", dt.datetime(2026, 4, 1, 6, 30, tzinfo=dt.UTC)),
    ],
)
def test_since(text: str, expected: dt.datetime) -> None:
    assert parse_since(text, NOW) == expected
    assert parse_since(None, NOW) is None


def test_a_bad_since_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--since 'yesterday'"):
        parse_since("yesterday", NOW)


def request(n: int, **changes) -> Request:
    values = dict(at=1_777_000_000.0 + n, sql=f"select a from t where x = {n}", kind="rewrite",
                  rewritten=n % 2 == 0, views=("mvlattice.t1",) if n % 2 == 0 else (),
                  latency_ms=1.5, outcome="ok", model="shop")  # fmt: skip
    return Request(**(values | changes))


def test_a_record_is_a_row_of_the_table() -> None:
    record = to_record(request(2))
    assert record.time == dt.datetime.fromtimestamp(1_777_000_002.0, dt.UTC)
    assert record.sql == "SELECT a FROM t WHERE x = 2"
    assert record.fingerprint == fingerprint("select a from t where x = 99")
    assert record.row() == (
        record.time, record.sql, record.fingerprint, "rewrite", True, ["mvlattice.t1"], 1.5,
        "ok", "http", "shop", None, "full", "",
    )  # fmt: skip
    assert record.to_json()["time"] == "2026-04-24T03:06:42+00:00"
    assert [c.split()[0] for c in querylog.SCHEMA.split(", ")] == list(querylog.COLUMNS)


def test_a_record_says_which_engine_answered() -> None:
    from mvlattice.mvrewrite.rewriter import Engine

    record = to_record(request(2, kind="query", engine=Engine.LOCAL))
    assert record.engine == "local" and type(record.engine) is str  # plain text in the table
    assert record.row()[querylog.COLUMNS.index("engine")] == "local"
    assert record.to_json()["engine"] == "local"
    assert to_record(request(1)).engine == ""  # a rewrite: nothing ran
    with pytest.raises(TypeError, match="text fields must be strings"):
        querylog.LogRecord(**(record.to_json() | {"time": record.time, "views": (), "engine": 1}))


def test_a_row_from_before_the_engine_column_reads_as_no_engine() -> None:
    row = to_record(request(4)).to_json()
    row["time"] = dt.datetime.fromisoformat(row["time"])
    del row["engine"]
    assert querylog._record(row).engine == ""
    assert querylog._record(row | {"engine": None}).engine == ""
    assert querylog._record(row | {"engine": "spark"}).engine == "spark"


class Appends:
    """Stands in for the Delta append: records each batch; can fail on demand."""

    def __init__(self) -> None:
        self.batches: list[list] = []
        self.fail = 0
        self.calls = 0
        self.done = threading.Event()

    def __call__(self, spark, warehouse, records) -> int:
        records = list(records)
        self.calls += 1
        if any("poison" in r.sql for r in records):
            raise RuntimeError("a value the table refuses")
        if self.fail:
            self.fail -= 1
            raise RuntimeError("disk full")
        self.batches.append(records)
        self.done.set()
        return len(records)


@pytest.fixture
def appends(monkeypatch: pytest.MonkeyPatch) -> Appends:
    fake = Appends()
    monkeypatch.setattr(querylog, "append", fake)
    return fake


def test_the_writer_appends_a_full_batch_at_once(appends: Appends) -> None:
    writer = QueryLogWriter(None, "/wh", options=NO_PRUNING, batch=3, interval=60).start()  # type: ignore[arg-type]
    for n in range(3):
        writer.record(request(n))
    assert appends.done.wait(10)
    assert [len(b) for b in appends.batches] == [3]
    writer.close()
    assert writer.written == 3 and writer.pending == 0


def test_the_writer_appends_what_waited_an_interval(appends: Appends) -> None:
    writer = QueryLogWriter(None, "/wh", options=NO_PRUNING, batch=100, interval=0.05).start()  # type: ignore[arg-type]
    writer.record(request(1))
    assert appends.done.wait(10)
    writer.close()
    assert [r.sql for b in appends.batches for r in b] == ["SELECT a FROM t WHERE x = 1"]


def test_close_writes_what_is_left(appends: Appends) -> None:
    writer = QueryLogWriter(None, "/wh", options=NO_PRUNING, batch=100, interval=60).start()  # type: ignore[arg-type]
    for n in range(5):
        writer.record(request(n))
    writer.close()
    assert sum(len(b) for b in appends.batches) == 5


def writer(**kwargs) -> QueryLogWriter:
    values = {"options": NO_PRUNING, "interval": 0.01} | kwargs
    return QueryLogWriter(None, "/wh", **values)  # type: ignore[arg-type]


def test_a_failed_append_is_retried_in_order(appends: Appends) -> None:
    appends.fail = 4  # the batch, its two halves (so: not a record's fault), one retry
    log = writer(batch=2).start()
    log.record(request(1))
    log.record(request(2))
    assert appends.done.wait(10)
    log.close()
    assert (log.failures, log.rejected, log.written) == (4, 0, 2)
    assert [r.sql[-1] for b in appends.batches for r in b] == ["1", "2"]


def test_a_table_that_keeps_failing_is_not_retried_forever(appends: Appends) -> None:
    appends.fail = 10**9
    log = writer(batch=4, attempts=3).start()
    for n in range(4):
        log.record(request(n))
    wait_until(lambda: log.rejected == 4, 10, "the records to be set aside, not retried forever")
    log.close()
    assert (log.written, log.rejected, log.pending) == (0, 4, 0)
    assert appends.calls == 7 + 2  # isolation's seven appends, then two plain retries
    assert "kept failing" in log.set_aside[-1].reason
    appends.fail = 0
    again = writer(batch=1).start()
    again.record(request(9))
    again.close()
    assert again.written == 1


def test_a_poisoned_record_is_set_aside_and_the_rest_written(appends: Appends) -> None:
    log = writer(batch=8).start()
    for n in range(8):
        log.record(request(n, sql="select 'poison'") if n == 5 else request(n))
    assert appends.done.wait(10)
    log.close()
    written = sorted(r.sql[-1] for b in appends.batches for r in b)
    assert written == ["0", "1", "2", "3", "4", "6", "7"]
    assert (log.written, log.rejected) == (7, 1)
    assert log.set_aside[0].sql == "SELECT 'poison'"
    assert "refuses" in log.set_aside[0].reason


def test_a_malformed_request_is_set_aside_alone(appends: Appends) -> None:
    log = writer(batch=10, interval=60).start()  # one batch, at close
    log.record(request(1))
    log.record(request(2, rewritten="yes"))  # Spark's BOOLEAN refuses it
    log.record(request(3, latency_ms="fast"))
    log.record(request(4))
    log.close()
    assert [r.sql[-1] for b in appends.batches for r in b] == ["1", "4"]
    assert (log.written, log.rejected, appends.calls) == (2, 2, 1)
    assert [a.reason.split(":")[0] for a in log.set_aside] == ["TypeError", "ValueError"]


def test_isolation_finds_scattered_poison_within_its_budget() -> None:
    sent: list[str] = []

    def append(records) -> int:
        if any("poison" in r.sql for r in records):
            raise RuntimeError("refused")
        sent.extend(r.sql for r in records)
        return len(records)

    records = [to_record(request(n, sql=f"select {'poison' if n in (3, 60) else n}"))
               for n in range(100)]  # fmt: skip
    result = append_isolating(append, records, budget=isolation_budget(100))
    assert result.written == 98 and [r.sql for r in result.unwritten] == [
        "SELECT poison", "SELECT poison"]  # fmt: skip
    assert len(sent) == 98 and result.failed_appends <= isolation_budget(100)


def test_deep_nesting_never_fails_a_record() -> None:
    for depth in (200, 5000):
        sql = "select " + "(" * depth + "1" + ")" * depth + " from t"
        normalized, shape_id = describe(sql)
        assert len(shape_id) == 16 and normalized.startswith("select ((")
        assert shape(sql).startswith("select ((") and blank_literals(sql) is None
        record = to_record(request(1, sql=sql))
        assert record.fingerprint == shape_id and record.sql_form == "full"


def test_long_sql_is_capped_and_marked() -> None:
    sql = "select a from t where s in (" + ", ".join(f"'é{n}'" for n in range(20_000)) + ")"
    record = to_record(request(1, sql=sql))
    assert record.sql_form == "truncated" and not querylog._usable(record)
    assert len(record.sql.encode()) <= MAX_SQL_BYTES and sql.startswith(record.sql[:100])
    assert record.fingerprint == fingerprint(sql.replace("'é1'", "'x'"))
    assert cap_sql("ab€", 4) == ("ab", True) and cap_sql("ab", 4) == ("ab", False)
    assert querylog._usable(to_record(request(1, sql="select 1")))


def test_literals_can_be_blanked() -> None:
    sql = ("select a, 'x' /* card 4242 */ from t where s = 'secret' and n > -5 "
           "and d = date '2024-01-01' and v = cast(x as decimal(10, 2))")  # fmt: skip
    record = to_record(request(1, sql=sql, message="bad 'secret'"), "blank")
    assert record.sql == (
        "SELECT a, ? FROM t WHERE s = ? AND n > -? AND d = CAST(? AS DATE) "
        "AND v = CAST(x AS DECIMAL(10, 2))"
    )
    assert (record.sql_form, record.message) == ("blanked", None)
    assert record.fingerprint == fingerprint(sql) and querylog._usable(record)
    broken = to_record(request(1, sql="select 'secret' from where"), "blank")
    assert (broken.sql, broken.sql_form) == ("", "omitted") and not querylog._usable(broken)
    assert "secret" not in str(broken.row())


def test_text_that_quotes_sql_is_blanked_too() -> None:
    message = ("the view keeps only rows where year = 2021; the query asks for s.name = 'a''b' "
               'and x > 4.5e3 or y = "two" (t2.c1, col_3)')  # fmt: skip
    assert blank_text(message) == (
        "the view keeps only rows where year = ?; the query asks for s.name = ? "
        "and x > ? or y = ? (t2.c1, col_3)"
    )


def test_recent_queries_are_shown_as_the_log_stores_them() -> None:
    ring = RecentQueries(literals="blank")
    sql = "select a from t where s = 'secret' and n = 4242"
    ring.add(request(1, sql=sql, message="cannot resolve n = 4242"),
             [{"view": "v", "message": "the query asks for s = 'secret'"}])  # fmt: skip
    ring.add(request(2, sql="select 'secret' from where"))
    broken, entry = ring.shown(2)
    assert (entry["sql"], entry["sql_form"]) == ("SELECT a FROM t WHERE s = ? AND n = ?", "blanked")
    assert entry["message"] == "cannot resolve n = ?"
    assert entry["explain"] == [{"view": "v", "message": "the query asks for s = ?"}]
    assert (broken["sql"], broken["sql_form"]) == ("", "omitted")
    assert ring.newest(1)[0].request.sql == "select 'secret' from where"  # kept to explain it
    plain = RecentQueries()  # --query-log-literals keep
    plain.add(request(1, sql=sql))
    assert (plain.shown(1)[0]["sql"], plain.shown(1)[0]["sql_form"]) == (sql, "full")


@pytest.mark.parametrize(
    ("text", "seconds"), [("30d", 30 * 86400.0), ("12h", 43200.0), ("forever", None)]
)
def test_retention(text: str, seconds: float | None) -> None:
    assert parse_retention(text) == seconds


@pytest.mark.parametrize("text", ["0", "0d", "-1d", "soon", ""])
def test_a_bad_retention_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="forever"):
        parse_retention(text)


def test_past_the_bound_the_oldest_are_dropped(appends: Appends) -> None:
    writer = QueryLogWriter(None, "/wh", options=NO_PRUNING, batch=10, max_pending=3)  # type: ignore[arg-type]
    for n in range(5):  # not started: nothing is written yet
        writer.record(request(n))
    assert (writer.pending, writer.dropped) == (3, 2)
    writer.start().close()
    assert [r.sql[-1] for b in appends.batches for r in b] == ["2", "3", "4"]


def test_usable_sql_for_the_suggester_skips_bad_requests() -> None:
    good = to_record(request(1))
    bad = to_record(request(2, sql="drop table t", outcome="bad_sql"))
    failed = to_record(request(3, outcome="query_failed"))
    assert [querylog._usable(r) for r in (good, bad, failed)] == [True, False, True]
