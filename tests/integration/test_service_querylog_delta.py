"""The query log against real Spark and Delta: poisoned records are set aside while the good ones
land, retention deletes old records and compacts the files, literals can be blanked, and a table
written before `sql_form` (or `engine`) existed still takes appends and reads."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import pytest

from mvlattice.querylog import log as querylog
from mvlattice.querylog.log import Request, read_log, to_record
from mvlattice.querylog.retention import prune
from mvlattice.querylog.writer import (
    LogOptions,
    QueryLogWriter,
    append_isolating,
    isolation_budget,
)
from tests.support import wait_until

pytestmark = pytest.mark.spark
NOW = time.time()
DAY = 86_400.0


def request(n: int, *, age_days: float = 0.0, **changes: Any) -> Request:
    values = dict(at=NOW - age_days * DAY + n, sql=f"select a from t where x = {n}",
                  kind="query", rewritten=False, views=(), latency_ms=1.0, outcome="ok",
                  model="shop")  # fmt: skip
    return Request(**(values | changes))


def files(spark: Any, warehouse: Path) -> int:
    from delta.tables import DeltaTable

    table = DeltaTable.forPath(spark, querylog.log_location(str(warehouse)))
    return int(table.detail().first()["numFiles"])


def test_poisoned_records_do_not_stop_the_good_ones(spark: Any, tmp_path: Path) -> None:
    deep = "select " + "(" * 5000 + "1" + ")" * 5000 + " from t"
    options = LogOptions(prune_every=None)
    writer = QueryLogWriter(spark, str(tmp_path), batch=4, interval=0.05, options=options).start()
    for item in (request(1), request(2, sql=deep), request(3, rewritten="yes"), request(4)):
        writer.record(item)  # the third: Spark's BOOLEAN would refuse it and the batch with it
    wait_until(lambda: writer.written == 3, 120, "the 3 good records to be written", 0.05)
    writer.record(request(5))  # the writer goes on
    writer.close()
    logged = read_log(str(tmp_path), spark=spark)
    assert [r.sql for r in logged] == [
        "SELECT a FROM t WHERE x = 1", deep, "SELECT a FROM t WHERE x = 4",
        "SELECT a FROM t WHERE x = 5",
    ]  # fmt: skip
    assert (writer.written, writer.rejected, writer.failures) == (4, 1, 0)
    assert "rewritten must be a bool" in writer.set_aside[0].reason
    assert logged[1].fingerprint == to_record(request(9, sql=deep)).fingerprint


def test_a_record_the_table_refuses_is_isolated(spark: Any, tmp_path: Path) -> None:
    records = [to_record(request(n)) for n in range(6)]
    # a record that got past the checks (as a future bug might): Spark itself refuses it
    object.__setattr__(records[4], "rewritten", "yes")

    def append(batch: Any) -> int:
        return querylog.append(spark, str(tmp_path), batch)

    result = append_isolating(append, records, budget=isolation_budget(6))
    assert result.written == 5 and result.unwritten == (records[4],)
    assert "BooleanType" in (result.error or "")
    logged = read_log(str(tmp_path), spark=spark)
    assert sorted(r.sql[-1] for r in logged) == ["0", "1", "2", "3", "5"]


def test_retention_deletes_old_records_and_compacts(spark: Any, tmp_path: Path) -> None:
    old = [to_record(request(n, age_days=40)) for n in range(3)]
    querylog.append(spark, str(tmp_path), old[:2])
    querylog.append(spark, str(tmp_path), [*old[2:], to_record(request(3, age_days=2))])
    for n in range(4, 7):  # one file per append, as the writer leaves them
        querylog.append(spark, str(tmp_path), [to_record(request(n, age_days=n % 3))])
    assert files(spark, tmp_path) == 5
    # (the writer's test below vacuums; here it would only take time)
    done = prune(spark, str(tmp_path), 30 * DAY, max_files=2, vacuum=False)
    # a file of old records only is dropped, a mixed one rewritten; then all is compacted
    assert (done.deleted, done.files_before, done.files_after) == (3, 4, 1)
    assert files(spark, tmp_path) == 1
    kept = read_log(str(tmp_path), spark=spark)
    assert [int(r.sql.rsplit(" ", 1)[1]) for r in kept] == [3, 5, 4, 6]  # oldest first
    again = prune(spark, str(tmp_path), 30 * DAY, max_files=2, vacuum=False)  # nothing to do
    assert (again.deleted, again.files_before, again.files_after) == (0, 1, 1)
    assert prune(spark, str(tmp_path), None, vacuum=False).deleted == 0


def test_the_writer_prunes_at_start_and_blanks_literals(spark: Any, tmp_path: Path) -> None:
    old = [to_record(request(n, age_days=3)) for n in range(3)]
    querylog.append(spark, str(tmp_path), old)
    options = LogOptions(retention=DAY, literals="blank", prune_every=3600.0)
    writer = QueryLogWriter(spark, str(tmp_path), interval=0.05, options=options).start()
    wait_until(lambda: writer.pruned == 3, 120, "the 3 old records to be pruned", 0.05)
    writer.record(request(1, sql="select a from t where s = 'secret' and n = 42"))
    writer.record(request(2, sql="select 'secret' from where", message="near 'secret'"))
    writer.close()
    logged = read_log(str(tmp_path), spark=spark)
    assert [(r.sql, r.sql_form, r.message) for r in logged] == [
        ("SELECT a FROM t WHERE s = ? AND n = ?", "blanked", None),
        ("", "omitted", None),
    ]
    assert querylog.query_log_sql(str(tmp_path), spark=spark) == [logged[0].sql]


def test_a_table_from_before_sql_form_takes_appends(spark: Any, tmp_path: Path) -> None:
    old_schema = querylog.SCHEMA.removesuffix(", sql_form STRING, engine STRING")
    record = to_record(request(1))
    row = record.row()[:-2]
    location = querylog.log_location(str(tmp_path))
    spark.createDataFrame([row], old_schema).write.format("delta").save(location)
    long = dataclasses.replace(to_record(request(2)), sql="select 1", sql_form="truncated")
    querylog.append(spark, str(tmp_path), [long])
    logged = read_log(str(tmp_path), spark=spark)
    assert [r.sql_form for r in logged] == ["full", "truncated"]
    assert querylog.query_log_sql(str(tmp_path), spark=spark) == [record.sql]
    assert [e["sql"] for e in querylog.table_records(location)] == [record.sql]


def test_a_table_from_before_engine_takes_appends_and_reads(spark: Any, tmp_path: Path) -> None:
    old_schema = querylog.SCHEMA.removesuffix(", engine STRING")
    old = to_record(request(1))
    location = querylog.log_location(str(tmp_path))
    spark.createDataFrame([old.row()[:-1]], old_schema).write.format("delta").save(location)
    assert [r.engine for r in read_log(str(tmp_path), spark=spark)] == [""]  # no column yet
    querylog.append(spark, str(tmp_path), [to_record(request(2, engine="spark"))])
    writer = QueryLogWriter(spark, str(tmp_path), interval=0.05,
                            options=LogOptions(prune_every=None)).start()  # fmt: skip
    writer.record(request(3, engine="local"))
    writer.record(request(4, kind="rewrite"))
    writer.close()
    logged = read_log(str(tmp_path), spark=spark)
    assert [(r.sql[-1], r.engine) for r in logged] == [
        ("1", ""), ("2", "spark"), ("3", "local"), ("4", "")
    ]  # fmt: skip
    columns = spark.read.format("delta").load(location).columns
    assert columns[-1] == "engine" and len(columns) == len(querylog.COLUMNS)


def test_a_local_log_is_appended_without_spark_and_reads_as_spark_wrote_it(
    spark: Any, tmp_path: Path
) -> None:
    import json

    location = Path(querylog.log_location(str(tmp_path)))
    querylog.append(spark, str(tmp_path), [to_record(request(1, views=("mvlattice.t",)))])
    querylog.append(spark, str(tmp_path), [to_record(request(2, engine="local"))])
    commits = sorted((location / "_delta_log").glob("*.json"))
    infos = [
        json.loads(line)["commitInfo"]
        for path in commits
        for line in path.read_text().splitlines()
        if "commitInfo" in line
    ]
    assert len(infos) == 2 and all("delta-rs" in str(i.get("clientVersion")) for i in infos)
    frame = spark.read.format("delta").load(str(location))
    types = dict(frame.dtypes)
    assert types["time"] == "timestamp" and types["views"] == "array<string>"
    assert types["rewritten"] == "boolean" and types["latency_ms"] == "double"
    logged = read_log(str(tmp_path), spark=spark)
    assert [(r.views, r.engine) for r in logged] == [(("mvlattice.t",), ""), ((), "local")]
    assert abs(logged[0].time.timestamp() - request(1).at) < 1e-3
