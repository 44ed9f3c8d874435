"""Reading query logs: SQL text, JSON lines, the FoodMart query set (strict and lenient JSON),
JSON lists, and the hook for the service's query-log table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mvlattice.errors import NotFoundError, UsageError
from mvlattice.suggest import lenient_json
from mvlattice.suggest.logs import (
    ANSI,
    LogEntry,
    entries_from_records,
    read_log,
    read_logs,
)


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_sql_file_splits_on_semicolons_but_not_inside_strings(tmp_path: Path) -> None:
    path = write(tmp_path, "log.sql", "select 1;\n-- a comment\nselect ';' from t;\n\n")
    entries = read_log(path)
    assert [e.sql for e in entries] == ["select 1", "-- a comment\nselect ';' from t"]
    assert [e.id for e in entries] == ["log.sql:1", "log.sql:2"]
    assert all(e.weight == 1.0 and e.dialect is None for e in entries)


def test_json_lines_with_weights_ids_and_timestamps(tmp_path: Path) -> None:
    lines = [
        {"sql": "select 1", "count": 3, "ts": "2024-01-02T00:00:00"},
        {"other": "no sql here"},
        {"sql": "select 2", "id": "q7", "weight": 0.5, "dialect": "mysql"},
    ]
    path = write(tmp_path, "log.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n")
    one, two = read_log(path)
    assert one == LogEntry("select 1", "log.jsonl:1", 3.0, "2024-01-02T00:00:00")
    assert two == LogEntry("select 2", "q7", 0.5, None, "mysql")


def test_json_lines_are_recognised_without_the_suffix(tmp_path: Path) -> None:
    path = write(tmp_path, "log.txt", '{"sql": "select 1"}\n{"sql": "select 2"}\n')
    assert [e.sql for e in read_log(path)] == ["select 1", "select 2"]


def test_foodmart_query_set_format_carries_the_ansi_dialect_hint(tmp_path: Path) -> None:
    document = {"queries": [{"id": 1, "sql": 'select "a" from "t"', "rows": [[1]]}]}
    path = write(tmp_path, "queries.json", json.dumps(document))
    (entry,) = read_log(path)
    assert entry == LogEntry('select "a" from "t"', "1", 1.0, None, ANSI)


def test_foodmart_query_set_in_lenient_json(tmp_path: Path) -> None:
    text = """{
      queries: [
        {id: 1, sql: 'select "c" from "t" where "x" = \\'it\\'\\'s\\'', columns: [],},
        // the second one
        {id: 2, sql: "select 2"}, /* trailing comma */
      ],
    }"""
    path = write(tmp_path, "queries.json", text)
    one, two = read_log(path)
    assert one.sql == 'select "c" from "t" where "x" = \'it\'\'s\''
    assert (one.id, two.id, two.sql) == ("1", "2", "select 2")


def test_a_json_list_of_objects(tmp_path: Path) -> None:
    path = write(tmp_path, "log.json", json.dumps([{"sql": "select 1"}, {"sql": 3}]))
    assert [e.sql for e in read_log(path)] == ["select 1"]


def test_read_logs_keeps_order_across_files(tmp_path: Path) -> None:
    a = write(tmp_path, "a.sql", "select 1; select 2")
    b = write(tmp_path, "b.jsonl", '{"sql": "select 3"}')
    assert [e.sql for e in read_logs([a, b])] == ["select 1", "select 2", "select 3"]


def test_errors_are_one_line_mvlattice_errors(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="log file not found"):
        read_log(tmp_path / "missing.sql")
    bad = write(tmp_path, "bad.jsonl", '{"sql": "select 1"}\n{not json\n')
    with pytest.raises(UsageError, match="bad.jsonl: line 2: invalid JSON"):
        read_log(bad)
    broken = write(tmp_path, "broken.json", '{queries: [{id: 1, sql: "x"}')
    with pytest.raises(UsageError, match="not JSON, even leniently"):
        read_log(broken)
    other = write(tmp_path, "other.json", '{"rows": []}')
    with pytest.raises(UsageError, match="a JSON log is"):
        read_log(other)
    weights = write(tmp_path, "w.jsonl", '{"sql": "select 1", "weight": -1}')
    with pytest.raises(UsageError, match="weight must be a non-negative number"):
        read_log(weights)


def test_a_delta_table_is_read_through_the_callers_reader(tmp_path: Path) -> None:
    table = tmp_path / "query_log"
    (table / "_delta_log").mkdir(parents=True)
    with pytest.raises(UsageError, match="query-log table needs its reader"):
        read_log(table)
    records = [{"sql": "select 1", "ts": "2024-05-01T10:00:00", "id": "f1@t"}, {"x": 1}]
    (entry,) = read_log(table, lambda location: records if location == str(table) else [])
    assert entry == LogEntry("select 1", "f1@t", 1.0, "2024-05-01T10:00:00")


def test_entries_from_records_numbers_records_without_ids() -> None:
    entries = entries_from_records([{"sql": "a"}, {"sql": "b", "count": 2}], "src")
    assert [(e.id, e.weight) for e in entries] == [("src:1", 1.0), ("src:2", 2.0)]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (
            "{a: 1, 'b': 'x', \"c\": [true, null, -1.5e3]}",
            {"a": 1, "b": "x", "c": [True, None, -1500.0]},
        ),
        ("['it\\'s', 'say \"hi\"', 'back\\\\slash']", ["it's", 'say "hi"', "back\\slash"]),
        ("[1, 2, ] // done", [1, 2]),
        ('{"strict": "json"}', {"strict": "json"}),
    ],
)
def test_lenient_json(text: str, value: object) -> None:
    assert lenient_json.loads(text) == value


def test_lenient_json_rejects_garbage_with_a_position() -> None:
    with pytest.raises(json.JSONDecodeError) as caught:
        lenient_json.loads("{a: 1 ? 2}")
    assert caught.value.pos == 6
