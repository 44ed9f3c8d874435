"""Reading query logs: what was asked, how often, and when.

Formats, told apart by suffix and content:

- SQL text: `;`-separated statements (`.sql`, or any file that is not JSON);
- JSON lines: one object per line with a `sql` field, and optionally `id`, `weight` (or
  `count`), `ts` (or `timestamp`, `time`) and `dialect`;
- the FoodMart query set (Maven Central `net.hydromatic:foodmart-queries`):
  `{queries: [{id, sql, …}]}`; lenient JSON is accepted (unquoted keys, single quotes). Its SQL
  uses "double-quoted" identifiers, so its entries carry the dialect hint "" (sqlglot's
  ANSI-like default dialect) unless the caller names a dialect;
- a JSON document that is a list of such objects;
- a Delta table (a folder with `_delta_log`): the service's query log. The caller passes its
  reader (`table_reader`), because the table belongs to the service; any reader returning
  records with the JSON-lines fields above works.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mvlattice.errors import NotFoundError, UsageError
from mvlattice.plan.workload import split_sql
from mvlattice.suggest import lenient_json

ANSI = ""  # sqlglot's default dialect: "double-quoted" identifiers, standard functions


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One logged query: its SQL, an id to cite it by, how many times it ran, and when."""

    sql: str
    id: str
    weight: float = 1.0
    timestamp: str | None = None
    dialect: str | None = None  # a hint from the log's format; the caller's choice wins


# A reader for the service's query-log table: location -> records (mappings with a 'sql' key).
TableReader = Callable[[str], Iterable[Mapping[str, Any]]]


def read_logs(
    paths: Iterable[str | os.PathLike[str]], table_reader: TableReader | None = None
) -> tuple[LogEntry, ...]:
    """Every entry of every log, in order."""
    return tuple(entry for path in paths for entry in read_log(path, table_reader))


def read_log(
    path: str | os.PathLike[str], table_reader: TableReader | None = None
) -> tuple[LogEntry, ...]:
    file = Path(path)
    if (file / "_delta_log").is_dir():
        return _read_table(str(file), table_reader)
    text = _read(file)
    if file.suffix.lower() == ".sql":
        return _sql_entries(text, file.name)
    if file.suffix.lower() in (".jsonl", ".ndjson"):
        return _json_lines(text, file.name)
    try:
        return _document(json.loads(text), file.name)
    except json.JSONDecodeError:
        pass
    if _all_json_lines(text):
        return _json_lines(text, file.name)
    if text.lstrip().startswith(("{", "[")):
        try:
            return _document(lenient_json.loads(text), file.name)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{file}: not JSON, even leniently: {exc.msg} at {_at(exc)}") from None
    return _sql_entries(text, file.name)


def entries_from_records(records: Iterable[Mapping[str, Any]], source: str) -> tuple[LogEntry, ...]:
    """Log entries from records with a `sql` field (JSON lines, a query-log table)."""
    out = []
    for number, record in enumerate(records, 1):
        if isinstance(record, Mapping) and isinstance(record.get("sql"), str):
            out.append(_entry(record, f"{source}:{number}"))
    return tuple(out)


def _entry(record: Mapping[str, Any], default_id: str, dialect: str | None = None) -> LogEntry:
    raw_id = record.get("id")
    weight = record.get("weight", record.get("count", 1))
    stamp = next((record[k] for k in ("ts", "timestamp", "time") if record.get(k)), None)
    return LogEntry(
        record["sql"],
        str(raw_id) if raw_id is not None else default_id,
        _weight(weight, default_id),
        str(stamp) if stamp is not None else None,
        record.get("dialect", dialect),
    )


def _read(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFoundError(f"log file not found: {file}") from None
    except IsADirectoryError:
        raise UsageError(f"{file} is a folder, not a log file or a Delta table") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read log file {file}: {exc}") from None


def _read_table(location: str, table_reader: TableReader | None) -> tuple[LogEntry, ...]:
    if table_reader is None:
        raise UsageError(
            f"{location} is a Delta table; reading the service's query-log table needs its "
            "reader (read_log's table_reader)"
        )
    return entries_from_records(table_reader(location), Path(location).name)


def _sql_entries(text: str, source: str) -> tuple[LogEntry, ...]:
    return tuple(LogEntry(sql, f"{source}:{i}") for i, sql in enumerate(split_sql(text), 1))


def _all_json_lines(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return False
    try:
        return all(isinstance(json.loads(line), dict) for line in lines)
    except json.JSONDecodeError:
        return False


def _json_lines(text: str, source: str) -> tuple[LogEntry, ...]:
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{source}: line {number}: invalid JSON: {exc.msg}") from None
        records.append((number, record))
    return tuple(
        _entry(record, f"{source}:{number}")
        for number, record in records
        if isinstance(record, dict) and isinstance(record.get("sql"), str)
    )


def _document(document: Any, source: str) -> tuple[LogEntry, ...]:
    if isinstance(document, Mapping) and isinstance(document.get("queries"), list):
        items, dialect = document["queries"], ANSI  # the FoodMart query set
    elif isinstance(document, list):
        items, dialect = document, None
    else:
        raise UsageError(
            f"{source}: a JSON log is {{queries: [{{id, sql}}, …]}} or a list of {{sql}} objects"
        )
    return tuple(
        _entry(item, f"{source}:{i}", dialect)
        for i, item in enumerate(items, 1)
        if isinstance(item, Mapping) and isinstance(item.get("sql"), str)
    )


def _weight(value: Any, where: str) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value < 0:
        raise UsageError(f"{where}: weight must be a non-negative number, got {value!r}")
    return float(value)


def _at(exc: json.JSONDecodeError) -> str:
    return f"line {exc.lineno}, column {exc.colno}"
