"""Step 1, table mapping (GL01 §3.1; Calcite's generateTableMappings).

Each query table occurrence is paired with a view occurrence of the same table. When a table
occurs several times, every pairing is tried. Query tables left over are joined back to the
view (view-partial rewriting); view tables left over must be lossless joins (query-partial
rewriting, checked by the next step).
"""

from __future__ import annotations

from itertools import combinations, permutations, product

from mvlattice.mvrewrite.match.attempt import TABLES_NOT_CONTAINED, Attempt, Rejection
from mvlattice.mvrewrite.match.keys import Keys
from mvlattice.mvrewrite.views import View
from mvlattice.sql.spjg import Spjg, TableRef

VIEW_ALIAS = "mv"
MAX_MAPPINGS = 32  # enough for self-joins; beyond it the block is not worth the search

Pairing = tuple[tuple[str, str], ...]  # (view rel, query rel)


def mappings(query: Spjg, view: View, keys: Keys) -> tuple[Attempt, ...] | Rejection:
    block = view.block
    assert block is not None
    common = sorted({t.table for t in query.tables} & {t.table for t in block.tables})
    if not common:
        return Rejection(
            TABLES_NOT_CONTAINED,
            f"the view reads {_names(block)}; the query reads {_names(query)}",
        )
    per_table = [_pairings(query, block, table) for table in common]
    out = []
    for choice in product(*per_table):
        pairs = tuple(p for group in choice for p in group)
        out.append(_attempt(query, view, keys, pairs))
        if len(out) == MAX_MAPPINGS:
            break
    return tuple(out)


def _pairings(query: Spjg, block: Spjg, table: str) -> list[Pairing]:
    """Every injective pairing of as many occurrences of `table` as both sides have."""
    q = [t.rel for t in query.tables if t.table == table]
    v = [t.rel for t in block.tables if t.table == table]
    size = min(len(q), len(v))
    return [
        tuple(zip(v_rels, q_rels, strict=True))
        for q_rels in combinations(q, size)
        for v_rels in permutations(v, size)
    ]


def _attempt(query: Spjg, view: View, keys: Keys, pairs: Pairing) -> Attempt:
    block = view.block
    assert block is not None
    mapped_query = {q for _, q in pairs}
    rels = query.rels
    used = set(rels)
    mapping = dict(pairs)
    extra = []
    for ref in block.tables:
        if ref.rel not in mapping:
            mapping[ref.rel] = _fresh(f"{ref.rel}_v", used)
            extra.append(TableRef(mapping[ref.rel], ref.table))
    alias = _fresh(VIEW_ALIAS, used | set(mapping.values()))
    return Attempt(
        query,
        view,
        keys,
        view_alias=alias,
        mapping=tuple(mapping.items()),
        join_back=tuple(r for r in rels if r not in mapped_query),
        extra=tuple(extra),
    )


def _fresh(name: str, used: set[str]) -> str:
    candidate, n = name, 2
    while candidate in used:
        candidate, n = f"{name}{n}", n + 1
    used.add(candidate)
    return candidate


def _names(block: Spjg) -> str:
    return ", ".join(sorted({t.table for t in block.tables}))
