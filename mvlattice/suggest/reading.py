"""Parsing a log and reading its query blocks into stars, counting what was skipped and why."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from mvlattice.sql.parse import parse_statements
from mvlattice.suggest.catalog_blocks import NO_TABLES, Skip, learned_columns
from mvlattice.suggest.catalog_blocks import query_blocks as blocks_of
from mvlattice.suggest.direction import Uniqueness
from mvlattice.suggest.graph import block_stars
from mvlattice.suggest.logs import LogEntry
from mvlattice.suggest.merge import Contribution
from mvlattice.suggest.table_catalog import Catalog, with_learned
from mvlattice.suggest.tiles import ParsedQuery

UNPARSED = "does not parse"
NOT_A_QUERY = "not a query"
DEFAULT_DIALECT = "spark"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one logged query: its stars, or why it gave none."""

    query: ParsedQuery | None  # None: did not parse
    contributions: tuple[Contribution, ...]
    skip: Skip | None
    blocks: int = 0
    blocks_used: int = 0


def parse_entries(
    entries: Sequence[LogEntry], dialect: str | None
) -> list[tuple[LogEntry, ParsedQuery | Skip]]:
    """Each entry parsed in the caller's dialect, else its log's hint, else Spark SQL."""
    out: list[tuple[LogEntry, ParsedQuery | Skip]] = []
    for entry, query_id in zip(entries, unique_ids(entries), strict=True):
        chosen = dialect if dialect is not None else entry.dialect
        read = DEFAULT_DIALECT if chosen is None else chosen
        try:
            trees = tuple(t for t in parse_statements(entry.sql, read) if isinstance(t, exp.Query))
        except (sqlglot.errors.SqlglotError, RecursionError) as exc:
            out.append((entry, Skip(UNPARSED, (str(exc).strip().splitlines() or [""])[0])))
            continue
        if not trees:
            out.append((entry, Skip(NOT_A_QUERY, entry.sql[:60])))
            continue
        out.append((entry, ParsedQuery(query_id, entry.weight, trees)))
    return out


def unique_ids(entries: Sequence[LogEntry]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for entry in entries:
        n = seen.get(entry.id, 0) + 1
        seen[entry.id] = n
        out.append(entry.id if n == 1 else f"{entry.id}#{n}")
    return out


def logged_tables(queries: Sequence[ParsedQuery]) -> tuple[frozenset[str], frozenset[str]]:
    """(the schemas the log qualifies tables with, the tables it names unqualified)."""
    schemas: set[str] = set()
    names: set[str] = set()
    for tree in (t for q in queries for t in q.trees):
        ctes = {cte.alias.lower() for cte in tree.find_all(exp.CTE)}
        for table in tree.find_all(exp.Table):
            if table.db:
                schemas.add(table.db)
            elif table.name and table.name.lower() not in ctes:
                names.add(table.name)
    return frozenset(schemas), frozenset(names)


def learn(catalog: Catalog, queries: Sequence[ParsedQuery]) -> Catalog:
    """The catalog with the columns the log shows (see `catalog`)."""
    seen = (
        found
        for query in queries
        for tree in query.trees
        for found in learned_columns(tree, catalog)
    )
    return with_learned(catalog, seen)


def read_query(
    query: ParsedQuery, catalog: Catalog, uniqueness: Uniqueness | None = None
) -> Outcome:
    contributions: list[Contribution] = []
    skips: list[Skip] = []
    blocks = used = 0
    for tree in query.trees:
        for block in blocks_of(tree, catalog):
            blocks += 1
            stars = block_stars(block, catalog, uniqueness)
            if isinstance(stars, Skip):
                skips.append(stars)
                continue
            used += 1
            contributions.extend(Contribution(query.id, query.weight, s) for s in stars)
    skip = None
    if not contributions:
        real = [s for s in skips if s.reason != NO_TABLES]
        skip = (real or skips or [Skip(NO_TABLES, "")])[0]
    return Outcome(query, tuple(contributions), skip, blocks, used)
