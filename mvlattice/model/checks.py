"""Checking a model's declared and implied constraints against the data, with Spark."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mvlattice.model.constraints import (
    Constraint,
    ForeignKeyCheck,
    NotNullCheck,
    UniqueKey,
    constraints,
)
from mvlattice.sql.quote import identifier as quote

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from mvlattice.model.loader import Model

EXAMPLES = 5


@dataclass(frozen=True, slots=True)
class Violation:
    """A constraint that fails on the data: how many offending keys/rows, and a few examples."""

    constraint: Constraint
    count: int
    examples: tuple[tuple, ...]

    def describe(self) -> str:
        c = self.constraint
        examples = ", ".join(_show(e) for e in self.examples)
        if isinstance(c, UniqueKey):
            what = (
                f"{c.schema}.{c.table}({', '.join(c.columns)}) is not unique: "
                f"{self.count:,} key value(s) occur more than once"
            )
        elif isinstance(c, ForeignKeyCheck):
            what = (
                f"{c.schema}.{c.table}({', '.join(c.columns)}) -> {c.ref_schema}."
                f"{c.ref_table}({', '.join(c.ref_columns)}): {self.count:,} row(s) whose "
                "key is NULL or has no match"
            )
        else:
            what = f"{c.schema}.{c.table}.{c.column} is declared NOT NULL: {self.count:,} NULL(s)"
        tail = f" (e.g. {examples})" if self.examples else ""
        return f"{what}{tail} [{c.origin}]"


def check_data(
    spark: SparkSession, model: Model, progress: Callable[[str], None] | None = None
) -> tuple[tuple[Constraint, ...], tuple[Violation, ...]]:
    """Run one query per constraint; return the constraints checked and those violated.
    `progress` hears how many of each kind there are, then each check's outcome and seconds
    (each is a Spark job: on a large table, seconds to minutes)."""
    say = progress or (lambda _line: None)
    checked = constraints(model)
    say(_counts(checked))
    violations = []
    for number, constraint in enumerate(checked, 1):
        began = time.monotonic()
        count, examples = _run(spark, constraint)
        outcome = "ok" if not count else f"VIOLATED ({count:,})"
        say(f"{number}/{len(checked)} {_title(constraint)}: {outcome}, "
            f"{time.monotonic() - began:.1f} s")  # fmt: skip
        if count:
            violations.append(Violation(constraint, count, examples))
    return checked, tuple(violations)


def _counts(checked: tuple[Constraint, ...]) -> str:
    kinds = [_KIND[type(c)] for c in checked]
    parts = ", ".join(f"{kinds.count(k)} {k}" for k in dict.fromkeys(_KIND.values()))
    return f"{len(checked)} constraint(s) to check: {parts}"


_KIND = {UniqueKey: "unique key(s)", ForeignKeyCheck: "foreign key(s)", NotNullCheck: "not-null"}


def _title(c: Constraint) -> str:
    """A constraint in a few words, for a progress line."""
    if isinstance(c, UniqueKey):
        return f"unique {c.schema}.{c.table}({', '.join(c.columns)})"
    if isinstance(c, ForeignKeyCheck):
        return (
            f"foreign key {c.schema}.{c.table}({', '.join(c.columns)}) -> "
            f"{c.ref_schema}.{c.ref_table}"
        )
    return f"not null {c.schema}.{c.table}.{c.column}"


def _run(spark: SparkSession, c: Constraint) -> tuple[int, tuple[tuple, ...]]:
    if isinstance(c, UniqueKey):
        cols = ", ".join(quote(x) for x in c.columns)
        bad = (
            f"SELECT {cols}, count(*) AS n FROM {_table(c.schema, c.table)} "
            f"GROUP BY {cols} HAVING count(*) > 1"
        )
    elif isinstance(c, ForeignKeyCheck):
        on = " AND ".join(
            f"a.{quote(x)} = b.{quote(y)}" for x, y in zip(c.columns, c.ref_columns, strict=True)
        )
        cols = ", ".join(f"a.{quote(x)}" for x in c.columns)
        bad = (
            f"SELECT {cols} FROM {_table(c.schema, c.table)} a LEFT ANTI JOIN "
            f"{_table(c.ref_schema, c.ref_table)} b ON {on}"
        )
    else:
        assert isinstance(c, NotNullCheck)
        bad = (
            f"SELECT {quote(c.column)} FROM {_table(c.schema, c.table)} "
            f"WHERE {quote(c.column)} IS NULL"
        )
    frame = spark.sql(bad)
    frame.cache()
    try:
        count = frame.count()
        examples = (
            tuple(
                tuple(r)[: len(getattr(c, "columns", (1,)))]
                for r in frame.limit(EXAMPLES).collect()
            )
            if count
            else ()
        )
    finally:
        frame.unpersist()
    return count, examples


def _table(schema: str, table: str) -> str:
    return f"{quote(schema)}.{quote(table)}"


def _show(example: tuple) -> str:
    return (
        "(" + ", ".join("NULL" if v is None else repr(v) for v in example) + ")"
        if len(example) > 1
        else ("NULL" if example[0] is None else repr(example[0]))
    )
