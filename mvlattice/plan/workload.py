"""A workload: the group-bys people ask of a lattice, with how often they ask them.

HRU96 weights each view by the frequency of queries on it; our view for a query is its group-by
columns plus the columns it filters on (a tile must hold both to answer it). A workload comes
from a file:

- a SQL log: `;`-separated statements (`.sql` and any other suffix), or JSON lines with a
  `"sql"` field and optionally `"weight"` (or `"count"`) (`.jsonl`, `.ndjson`, or a `.json`
  file that is not one JSON document); every statement has weight 1 unless a line says more;
- a declared list (`.yaml`, `.yml`, `.json`): `[{dimensions: [labels], filters: [labels],
  weight: N}]`, `filters` and `weight` (default 1) optional; a label may also be written as an
  `[alias, column]` pair.

SQL is parsed with sqlglot (Spark dialect) and mapped to lattice labels by `workload_asks`.
Statements that never read the lattice's fact table are ignored and counted.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlglot
import yaml

from mvlattice.document import suggest
from mvlattice.errors import NotFoundError, UsageError
from mvlattice.lattice.lattice import Lattice, Measure
from mvlattice.plan.workload_asks import BlockAsk, statement_asks, target


@dataclass(frozen=True, slots=True)
class WorkloadQuery:
    """One kind of query: grouped labels, filtered labels, its summed weight, the measures it
    aggregates (None: an aggregate no tile measure answers) and its exact distinct-count
    columns (a tile answers those by grouping by them)."""

    dimensions: frozenset[str]
    filters: frozenset[str] = frozenset()
    weight: float = 1.0
    measures: frozenset[Measure] | None = frozenset()
    distinct: frozenset[str] = frozenset()

    @property
    def columns(self) -> frozenset[str]:
        """HRU96's view for the query: what a tile needs to answer it."""
        return self.dimensions | self.filters | self.distinct


@dataclass(frozen=True, slots=True)
class WorkloadStatement:
    """One statement of a SQL workload as read, with its weight and the blocks it asks of the
    lattice (empty: it does not read the fact table, or did not map) — what coverage is
    reported over, statement by statement."""

    sql: str
    weight: float
    asks: tuple[WorkloadQuery, ...]
    mapped: bool  # every block reading the fact table mapped onto the lattice
    reads_fact: bool = True  # False: parsed and reads no fact table, or did not parse


@dataclass(frozen=True, slots=True)
class Workload:
    """Queries merged by (dimensions, filters), sorted; and what happened to the statements
    read: `ignored` never read the fact table, `unparsed` did not parse, `unmapped` read it in
    a block that is not an aggregate or has a column the lattice cannot supply."""

    queries: tuple[WorkloadQuery, ...]
    statements: int = 0
    ignored: int = 0
    unparsed: int = 0
    unmapped: int = 0
    sql: tuple[WorkloadStatement, ...] = ()  # the statements of a SQL workload, in order

    def unmapped_statements(self) -> tuple[str, ...]:
        """The SQL statements counted in `unmapped`: they read the fact table in a block that
        does not map onto the lattice."""
        return tuple(s.sql for s in self.sql if s.reads_fact and not s.mapped)

    def weights(self) -> dict[frozenset[str], float]:
        """Weight per view (query columns), summed over queries needing the same columns."""
        out: dict[frozenset[str], float] = {}
        for query in self.queries:
            out[query.columns] = out.get(query.columns, 0.0) + query.weight
        return out


def merge(queries: Iterable[WorkloadQuery]) -> tuple[WorkloadQuery, ...]:
    """Equal (dimensions, filters) summed into one query, in a fixed order; weight 0 dropped."""
    total: dict[tuple, float] = {}
    for q in queries:
        key = (q.dimensions, q.filters, q.measures, q.distinct)
        total[key] = total.get(key, 0.0) + q.weight
    ordered = sorted(total.items(), key=lambda item: _order(*item[0]))
    return tuple(WorkloadQuery(d, f, w, m, x) for (d, f, m, x), w in ordered if w > 0)


def _order(
    dims: frozenset[str],
    filters: frozenset[str],
    measures: frozenset[Measure] | None,
    distinct: frozenset[str],
) -> tuple:
    named = sorted(str(m) for m in measures) if measures is not None else ["?"]
    return (sorted(dims), sorted(filters), named, sorted(distinct))


def query_of(ask: BlockAsk, weight: float) -> WorkloadQuery:
    return WorkloadQuery(ask.dimensions, ask.filters, weight, ask.measures, ask.distinct)


# --- files ----------------------------------------------------------------------------------


def read_workload(path: str | os.PathLike[str], lattice: Lattice) -> Workload:
    """The workload in a file, mapped onto `lattice`; the format follows the suffix."""
    file = Path(path)
    text = _read(file)
    suffix = file.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return workload_from_entries(_yaml(text, file), lattice, str(file))
    if suffix in (".jsonl", ".ndjson"):
        return workload_from_sql(_json_lines(text, file), lattice)
    if suffix == ".json":
        try:
            document = json.loads(text)
        except json.JSONDecodeError:
            return workload_from_sql(_json_lines(text, file), lattice)
        return workload_from_entries(document, lattice, str(file))
    if text.lstrip().startswith("{"):
        return workload_from_sql(_json_lines(text, file), lattice)
    return workload_from_sql(((sql, 1.0) for sql in split_sql(text)), lattice)


def _read(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise NotFoundError(f"workload file not found: {file}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read workload file {file}: {exc}") from None


def _yaml(text: str, file: Path) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise UsageError(f"{file}:{where} invalid YAML: {getattr(exc, 'problem', exc)}") from None


def _json_lines(text: str, file: Path) -> list[tuple[str, float]]:
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{file}: line {number}: invalid JSON: {exc.msg}") from None
        if isinstance(record, dict) and isinstance(record.get("sql"), str):
            weight = record.get("weight", record.get("count", 1))
            out.append((record["sql"], _weight(weight, f"{file}: line {number}")))
    return out


def split_sql(text: str) -> list[str]:
    """Statements of a `;`-separated SQL text; semicolons in strings and comments do not split."""
    try:
        tokens = sqlglot.tokenize(text, read="spark")
    except sqlglot.errors.TokenError:
        return [part for part in (p.strip() for p in text.split(";")) if part]
    parts, start = [], 0
    for token in tokens:
        if token.token_type == sqlglot.tokens.TokenType.SEMICOLON:
            parts.append(text[start : token.start])
            start = token.end + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip() and _has_tokens(p)]


def _has_tokens(text: str) -> bool:
    """False for a part holding only comments."""
    try:
        return bool(sqlglot.tokenize(text, read="spark"))
    except sqlglot.errors.TokenError:
        return True


# --- SQL ------------------------------------------------------------------------------------


def workload_from_sql(statements: Iterable[tuple[str, float]], lattice: Lattice) -> Workload:
    """Statements with their weights, each block mapped to lattice labels."""
    index = target(lattice)
    queries: list[WorkloadQuery] = []
    read: list[WorkloadStatement] = []
    count = ignored = unparsed = unmapped = 0
    for sql, weight in statements:
        count += 1
        try:
            trees = [t for t in sqlglot.parse(sql, read="spark") if t is not None]
        except sqlglot.errors.SqlglotError:
            unparsed += 1
            read.append(WorkloadStatement(sql, weight, (), False, False))
            continue
        asks = [statement_asks(tree, index) for tree in trees]
        if not any(a.reads_fact for a in asks):
            ignored += 1
            read.append(WorkloadStatement(sql, weight, (), False, False))
            continue
        missed = sum(a.unmapped for a in asks)
        unmapped += missed
        mine = [query_of(block, weight) for a in asks for block in a.asks]
        queries.extend(mine)
        read.append(WorkloadStatement(sql, weight, tuple(mine), missed == 0))
    return Workload(merge(queries), count, ignored, unparsed, unmapped, tuple(read))


# --- declared lists -------------------------------------------------------------------------


def workload_from_entries(entries: Any, lattice: Lattice, where: str = "workload") -> Workload:
    """`[{dimensions: [...], filters: [...], weight: N}]`, labels checked against the lattice."""
    if not isinstance(entries, list):
        raise UsageError(f"{where}: a workload is a list of {{dimensions, weight}} entries")
    queries = [_entry(item, lattice, f"{where}: entry {i + 1}") for i, item in enumerate(entries)]
    return Workload(merge(queries), len(queries))


def _entry(item: Any, lattice: Lattice, where: str) -> WorkloadQuery:
    if not isinstance(item, dict):
        raise UsageError(f"{where}: must be a mapping with 'dimensions'")
    unknown = sorted(set(item) - {"dimensions", "filters", "weight"})
    if unknown or "dimensions" not in item:
        raise UsageError(f"{where}: expected keys dimensions, filters, weight; got {sorted(item)}")
    dims = _labels(item["dimensions"], lattice, f"{where}: dimensions")
    filters = _labels(item.get("filters", []), lattice, f"{where}: filters")
    return WorkloadQuery(dims, filters, _weight(item.get("weight", 1), where))


def _labels(value: Any, lattice: Lattice, where: str) -> frozenset[str]:
    if not isinstance(value, list):
        raise UsageError(f"{where}: must be a list of column labels")
    return frozenset(label_of(item, lattice, where) for item in value)


def label_of(item: Any, lattice: Lattice, where: str) -> str:
    """A lattice label from a label (any case) or an [alias, column] pair."""
    if isinstance(item, str):
        for label in lattice.labels:
            if label.lower() == item.lower():
                return label
        raise UsageError(f"{where}: unknown column '{item}'" + suggest(item, lattice.labels))
    if _is_pair(item):
        alias, column = (x.lower() for x in item)
        for c in lattice.columns:
            if (c.alias or "").lower() == alias and (c.column or "").lower() == column:
                return c.label
        raise UsageError(f"{where}: no column '{item[1]}' in table alias '{item[0]}'")
    raise UsageError(f"{where}: a column is a label or an [alias, column] pair, not {item!r}")


def _is_pair(item: Any) -> bool:
    return isinstance(item, Sequence) and len(item) == 2 and all(isinstance(x, str) for x in item)


def _weight(value: Any, where: str) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or value < 0:
        raise UsageError(f"{where}: weight must be a non-negative number, got {value!r}")
    return float(value)
