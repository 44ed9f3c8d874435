"""The playground's first query, taken from the served models so that a new user can run one
at once: for a built tile, a query over its lattice's fact table that the tile answers (the
tile's fact-table dimensions and its measures; the rest of the star is joined losslessly, so the
rewriter reads the tile), else a row count of a fact table.

The lattice documents (`GET /v1/lattices`) name no join columns, so no query here joins: the
route keeps the first candidate the rewriter does put on a tile.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mvlattice.sql.quote import identifier, qualified

Doc = Mapping[str, Any]
MAX_DIMENSIONS = 2  # grouped by in an example: enough to show a roll-up, short enough to read
MAX_CANDIDATES = 4  # rewritten (pure Python, but not free) before the fallback is offered
PLAIN = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")


@dataclass(frozen=True, slots=True)
class Example:
    sql: str
    model: str | None
    tile: str | None  # the built tile meant to answer it; None for the fallback


def candidates(lattices: Iterable[Doc], tiles: Iterable[Doc]) -> list[Example]:
    """A query per built tile (fresh ones first), at most MAX_CANDIDATES."""
    by_name = {(d.get("model"), d.get("name")): d for d in lattices}
    built = [t for t in tiles if t.get("kind") == "tile" and t.get("usable", True)]
    built.sort(key=lambda t: t.get("status") != "fresh")
    found = []
    for tile in built:
        lattice = by_name.get((tile.get("model"), tile.get("lattice")))
        if lattice is not None:
            sql = tile_query(lattice, tile.get("dimensions") or (), tile.get("measures") or ())
            found.append(Example(sql, tile.get("model"), str(tile.get("name"))))
    return found[:MAX_CANDIDATES]


def fallback(lattices: Iterable[Doc]) -> Example | None:
    """A query over the first lattice's fact table that Spark answers with no tile."""
    for lattice in lattices:
        if lattice.get("fact"):
            table = _plain(qualified(*str(lattice["fact"]).split(".", 1)))
            sql = f"SELECT COUNT(*) AS row_count\nFROM {table}"
            return Example(sql, lattice.get("model"), None)
    return None


def tile_query(lattice: Doc, dimensions: Sequence[str], measures: Sequence[str]) -> str:
    """GROUP BY the tile's dimensions read from the fact table, computing its measures."""
    root = _root(lattice)
    expressions = {
        d["label"]: _plain(str(d["expression"]))
        for d in lattice.get("dimensions") or ()
        if d.get("table") == root and not d.get("derived")
    }
    dims = [expressions[d] for d in dimensions if d in expressions][:MAX_DIMENSIONS]
    wanted = set(measures)
    aggs = [
        _aggregate(m, expressions)
        for m in lattice.get("measures") or ()
        if _measure_text(m) in wanted and all(a in expressions for a in m.get("args") or ())
    ]
    select = dims + (aggs or ["COUNT(*) AS row_count"])
    table = _plain(qualified(*str(lattice.get("fact", "")).split(".", 1)))
    sql = f"SELECT {', '.join(select)}\nFROM {table} AS {_plain(identifier(root))}"
    if dims:
        sql += f"\nGROUP BY {', '.join(dims)}\nORDER BY {', '.join(dims)}"
    return sql


def _root(lattice: Doc) -> str:
    for table in lattice.get("tables") or ():
        if table.get("parent") is None:
            return str(table["alias"])
    return ""


def _measure_text(measure: Doc) -> str:
    """As the tile catalog names a measure (`Measure.__str__`): sum(units), count(*), …"""
    inner = ", ".join(measure.get("args") or ()) or "*"
    if measure.get("approximate"):
        return f"approx_count_distinct({inner})"
    return f"{measure['agg']}({'DISTINCT ' if measure.get('distinct') else ''}{inner})"


def _aggregate(measure: Doc, expressions: Mapping[str, str]) -> str:
    args = ", ".join(expressions[a] for a in measure.get("args") or ()) or "*"
    if measure.get("approximate"):
        call = f"APPROX_COUNT_DISTINCT({args})"
    else:
        call = (
            f"{str(measure['agg']).upper()}({'DISTINCT ' if measure.get('distinct') else ''}{args})"
        )
    name = measure.get("name")
    return f"{call} AS {_plain(identifier(str(name)))}" if name else call


def _plain(sql: str) -> str:
    """Backticks off names that need none, so the example reads like hand-written SQL."""
    return PLAIN.sub(r"\1", sql)
