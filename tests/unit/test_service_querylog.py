"""The query log without Spark: fingerprints of query shapes, normalized SQL, `--since`, the
records, and the writer's batching (its Delta append replaced by a list)."""

from __future__ import annotations

import datetime as dt
import threading

import pytest

from mvlattice.errors import UsageError
from mvlattice.service import querylog
from mvlattice.service.fingerprint import fingerprint, normalize_sql, shape
from mvlattice.service.querylog import Request, parse_since, to_record
from mvlattice.service.querylog_writer import QueryLogWriter


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


def request(n: int, **changes) -> Request:  # noqa: ANN003
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
        "ok", "http", "shop", None,
    )  # fmt: skip
    assert record.to_json()["time"] == "2026-04-24T03:06:42+00:00"
    assert [c.split()[0] for c in querylog.SCHEMA.split(", ")] == list(querylog.COLUMNS)


class Appends:
    """Stands in for the Delta append: records each batch; can fail on demand."""

    def __init__(self) -> None:
        self.batches: list[list] = []
        self.fail = 0
        self.done = threading.Event()

    def __call__(self, spark, warehouse, records) -> int:  # noqa: ANN001
        records = list(records)
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
    writer = QueryLogWriter(None, "/wh", batch=3, interval=60).start()  # type: ignore[arg-type]
    for n in range(3):
        writer.record(request(n))
    assert appends.done.wait(10)
    assert [len(b) for b in appends.batches] == [3]
    writer.close()
    assert writer.written == 3 and writer.pending == 0


def test_the_writer_appends_what_waited_an_interval(appends: Appends) -> None:
    writer = QueryLogWriter(None, "/wh", batch=100, interval=0.05).start()  # type: ignore[arg-type]
    writer.record(request(1))
    assert appends.done.wait(10)
    writer.close()
    assert [r.sql for b in appends.batches for r in b] == ["SELECT a FROM t WHERE x = 1"]


def test_close_writes_what_is_left(appends: Appends) -> None:
    writer = QueryLogWriter(None, "/wh", batch=100, interval=60).start()  # type: ignore[arg-type]
    for n in range(5):
        writer.record(request(n))
    writer.close()
    assert sum(len(b) for b in appends.batches) == 5


def test_a_failed_append_is_retried_in_order(appends: Appends) -> None:
    appends.fail = 1
    writer = QueryLogWriter(None, "/wh", batch=2, interval=0.01).start()  # type: ignore[arg-type]
    writer.record(request(1))
    writer.record(request(2))
    assert appends.done.wait(10)
    writer.close()
    assert writer.failures == 1
    assert [r.sql[-1] for b in appends.batches for r in b] == ["1", "2"]


def test_past_the_bound_the_oldest_are_dropped(appends: Appends) -> None:
    writer = QueryLogWriter(None, "/wh", batch=10, max_pending=3)  # type: ignore[arg-type]
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
