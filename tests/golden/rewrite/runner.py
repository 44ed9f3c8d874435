"""Golden files for the rewriter, and the emps/depts/locations schema they run against.

A golden file (`*.txt` here) starts with the views its cases use, one per line:

    view mv_join: SELECT empid FROM emps JOIN depts USING (deptno)

then cases, each a title line, the views it registers, the query and the expected outcome —
the rewritten SQL, or `NO REWRITE: <REASON>` (the first reason the explanation gives):

    === join rewriting (Calcite)
    views: mv_join
    query:
      SELECT empid FROM depts JOIN (SELECT …) AS subq ON depts.deptno = subq.deptno
    expected:
      SELECT …

`pytest tests/unit/test_rewrite_golden.py --update-golden` rewrites the expected outcomes;
review the diff before committing it.
"""

from __future__ import annotations

import contextlib
import re
import textwrap
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from mvlattice.model.loader import Materialization, Model, load_model
from mvlattice.mvrewrite.context import context_for
from mvlattice.mvrewrite.rewriter import RewriteContext, RewriteResult, rewrite
from mvlattice.proof import compare

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SCHEMA = "hr_rewrite"
NO_REWRITE = "NO REWRITE: "
SHUFFLE = "spark.sql.shuffle.partitions"

HR_MODEL = f"""
version: "1.0"
defaultSchema: {SCHEMA}
schemas:
  - name: {SCHEMA}
    type: delta
    location: {SCHEMA}
    tables:
      - name: emps
        columns: [empid, deptno, locationid, empname, salary]
        primaryKey: [empid]
        notNull: [empid, deptno, locationid, empname]
        foreignKeys:
          - {{columns: [deptno], references: depts}}
          - {{columns: [locationid], references: locations}}
      - name: depts
        columns: [deptno, deptname]
        primaryKey: [deptno]
      - name: locations
        columns: [locationid, state]
        primaryKey: [locationid]
      - name: projects
        columns: [projid, empid, budget]
        primaryKey: [projid]
        foreignKeys:
          - {{columns: [empid], references: emps}}
"""

# Calcite's schema with NULLs (salary, deptname, state), repeated values, a department and a
# location nobody works in (empty groups), and salaries on both sides of 10000 and 12000.
# Projects have NULL employees (a NULL foreign key finds no match in an outer join), an
# employee with two projects (a repeated join key) and employees with none.
HR_TABLES: dict[str, tuple[str, list[tuple[Any, ...]]]] = {
    "projects": (
        "projid INT, empid INT, budget INT",
        [(1, 1, 100), (2, 1, 200), (3, None, 300), (4, 5, None), (5, None, 50), (6, 3, 70)],
    ),
    "depts": (
        "deptno INT, deptname STRING",
        [(10, "Sales"), (20, "Marketing"), (30, None), (40, "Empty")],
    ),
    "locations": (
        "locationid INT, state STRING",
        [(1, "CA"), (2, "NY"), (3, None), (4, "TX"), (5, "WA")],
    ),
    "emps": (
        "empid INT, deptno INT, locationid INT, empname STRING, salary DECIMAL(18,2)",
        [
            (1, 10, 1, "Bill", Decimal("10000.00")),
            (2, 20, 2, "Eric", Decimal("8000.00")),
            (3, 10, 1, "Sebastian", Decimal("7000.00")),
            (4, 10, 2, "Theodore", Decimal("11500.00")),
            (5, 20, 3, "Alice", None),
            (6, 30, 3, "Bob", Decimal("12000.00")),
            (7, 10, 1, "Carol", Decimal("12500.00")),
            (8, 20, 4, "Dan", Decimal("13000.00")),
            (9, 30, 1, "Eve", Decimal("15000.00")),
            (10, 10, 1, "Bill", Decimal("10000.00")),
            (11, 20, 2, "Fay", Decimal("10000.01")),
            (12, 30, 4, "Gus", None),
        ],
    ),
}


HR_TYPES = {
    (f"{SCHEMA}.{table}", column.split()[0]): column.split()[1]
    for table, (ddl, _) in HR_TABLES.items()
    for column in re.split(r",\s*(?![^(]*\))", ddl)
}


# -- the model ------------------------------------------------------------------------------
def hr_model(folder: Path, warehouse: Path | None = None) -> Model:
    """The schema as a model in `folder`; its tables live under `warehouse`/hr_rewrite."""
    path = folder / "hr_rewrite.yaml"
    path.write_text(HR_MODEL)
    return load_model(path, warehouse=str(warehouse or folder / "warehouse"))


def foodmart_model(folder: Path, warehouse: str | None = None) -> Model:
    """models/foodmart.yaml with its tables' columns written in: no data needed to load it."""
    from mvlattice.datasets.foodmart import TABLES

    doc = yaml.safe_load((REPO / "models" / "foodmart.yaml").read_text())
    columns = {t.name: [c.split()[0] for c in re.split(r",(?![^(]*\))", t.ddl)] for t in TABLES}
    for schema in doc["schemas"]:
        for table in schema.get("tables", []):
            table["columns"] = columns[table["name"]]
    path = folder / "foodmart_declared.yaml"
    path.write_text(yaml.safe_dump(doc))
    return load_model(path, warehouse=warehouse or str(folder / "warehouse"))


def context(model: Model, views: dict[str, str]) -> RewriteContext:
    """Materialized views `name: sql`, each stored at hr_rewrite.<name>."""
    items = [
        Materialization(name=name, schema=SCHEMA, table=name, sql=sql)
        for name, sql in views.items()
    ]
    return context_for(model, tiles=(), materializations=items, types=HR_TYPES)


def outcome(result: RewriteResult) -> str:
    if result.rewritten:
        return result.sql
    reason = next((e.reason for e in result.explain if e.reason), "NONE")
    return NO_REWRITE + reason


# -- golden files ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Case:
    file: str
    title: str
    views: tuple[str, ...]
    query: str
    expected: str

    @property
    def id(self) -> str:
        return f"{self.file}: {self.title}"

    @property
    def positive(self) -> bool:
        return not self.expected.startswith(NO_REWRITE)


@dataclass(frozen=True, slots=True)
class GoldenFile:
    path: Path
    header: str
    views: dict[str, str]
    cases: tuple[Case, ...]


def golden_files() -> tuple[GoldenFile, ...]:
    return tuple(load(p) for p in sorted(HERE.glob("*.txt")))


def load(path: Path) -> GoldenFile:
    text = path.read_text()
    header, _, body = text.partition("\n=== ")
    views = _views(header)
    cases = tuple(_case(path.stem, "=== " + chunk) for chunk in body.split("\n=== ") if chunk)
    return GoldenFile(path, header, views, cases)


def _views(header: str) -> dict[str, str]:
    views: dict[str, str] = {}
    last = None
    for line in header.splitlines():
        match = re.match(r"view (\w+):\s*(.*)$", line)
        if match:
            last = match.group(1)
            views[last] = match.group(2)
        elif last and line.startswith((" ", "\t")) and line.strip():
            views[last] += " " + line.strip()
    return views


def _case(file: str, chunk: str) -> Case:
    lines = chunk.rstrip("\n").splitlines()
    title = lines[0].removeprefix("=== ").strip()
    sections: dict[str, list[str]] = {}
    current = None
    for line in lines[1:]:
        if line.startswith("views:"):
            sections["views"] = [line.removeprefix("views:").strip()]
            current = None
        elif line.rstrip() in ("query:", "expected:"):
            current = line.rstrip()[:-1]
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    names = tuple((sections.get("views") or [""])[0].split())
    query = textwrap.dedent("\n".join(sections.get("query", []))).strip()
    expected = textwrap.dedent("\n".join(sections.get("expected", []))).strip()
    return Case(file, title, names, query, expected)


def run(case: Case, golden: GoldenFile, model: Model) -> str:
    views = {name: golden.views[name] for name in case.views}
    return outcome(rewrite(case.query, context(model, views)))


def render(golden: GoldenFile, cases: tuple[Case, ...]) -> str:
    parts = [golden.header.rstrip("\n") + "\n"]
    for case in cases:
        parts.append(
            f"\n=== {case.title}\n"
            f"views: {' '.join(case.views)}\n"
            f"query:\n{textwrap.indent(case.query, '  ')}\n"
            f"expected:\n{textwrap.indent(case.expected, '  ')}\n"
        )
    return "".join(parts)


def update(golden: GoldenFile, model: Model) -> None:
    cases = tuple(replace(c, expected=run(c, golden, model)) for c in golden.cases)
    golden.path.write_text(render(golden, cases))


# -- data on Spark --------------------------------------------------------------------------
_LOADED: set[str] = set()


def load_hr_tables(spark: Any, warehouse: Path) -> Path:
    """emps, depts and locations as Delta tables, registered as hr_rewrite.<table>; once."""
    folder = warehouse / SCHEMA
    if str(folder) in _LOADED:
        return folder
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {SCHEMA}")
    for name, (ddl, rows) in HR_TABLES.items():
        location = str(folder / name)
        spark.createDataFrame(rows, ddl).write.format("delta").mode("overwrite").save(location)
        spark.sql(f"CREATE TABLE IF NOT EXISTS {SCHEMA}.{name} USING delta LOCATION '{location}'")
        spark.catalog.cacheTable(f"{SCHEMA}.{name}")  # read many times by the comparisons
    _LOADED.add(str(folder))
    return folder


def differences(spark: Any, pairs: dict[str, tuple[str, str]]) -> dict[str, int]:
    """Rows in one result but not the other (as multisets), per name.

    Every query runs in one Spark job: each row as JSON (NULLs kept), tagged with its query,
    compared here by value (DECIMAL(22,6) 1.5 equals DECIMAL(38,2) 1.50). Unqualified table
    names resolve in hr_rewrite, as in the model."""
    queries = [sql for pair in pairs.values() for sql in pair]
    found = results(spark, queries)
    out = {}
    for i, name in enumerate(pairs):
        a, b = found[2 * i], found[2 * i + 1]
        out[name] = sum(((a - b) + (b - a)).values())
    return out


def results(spark: Any, queries: list[str]) -> list[Counter]:
    """Each query's rows as a multiset (the differential tester's comparison), in hr_rewrite."""
    with _schema(spark):
        return compare.results(spark, queries)


@contextlib.contextmanager
def _schema(spark: Any) -> Iterator[None]:
    """hr_rewrite as the current database and one shuffle partition (the data is tiny; fewer
    tasks), both restored afterwards."""
    database, partitions = spark.catalog.currentDatabase(), spark.conf.get(SHUFFLE)
    spark.catalog.setCurrentDatabase(SCHEMA)
    spark.conf.set(SHUFFLE, "1")
    try:
        yield
    finally:
        spark.catalog.setCurrentDatabase(database)
        spark.conf.set(SHUFFLE, partitions)


def _in_schema(spark: Any, sql: str) -> list[Any]:
    with _schema(spark):
        return spark.sql(sql).collect()


def rows(spark: Any, sql: str) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in _in_schema(spark, sql)), key=repr)
