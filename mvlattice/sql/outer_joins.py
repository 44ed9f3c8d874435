"""Outer joins in a block's normal form, and the ones its filters turn into inner joins.

A block's FROM is a left-deep chain (`from_sql`). Read as relational algebra, an inner join's
ON is a filter over the whole chain, like WHERE: a filter on the preserved side of a LEFT join
commutes with it, and nothing joined later is visible to an earlier ON. So a chain of inner
joins and LEFT joins each onto one table T is

    σ[WHERE ∧ inner ONs]( (inner tables) ⟕[on_1] T_1 ⟕[on_2] T_2 … )

and the order of the T_i is fixed by which tables their ONs read. An outer join's ON is *not*
a filter: its conditions only decide which rows match. RIGHT joins are LEFT joins mirrored;
a FULL join is kept only as a whole block of two tables.

A filter that can never be TRUE when every column of T is NULL (`d.x = 5`, `d.x IN (…)`,
`d.x IS NOT NULL`) removes exactly the rows T did not match, so the LEFT join onto T is an
inner join (its ON joins the filters) — the classic outer-join simplification.
"""

from __future__ import annotations

from dataclasses import dataclass

from mvlattice.sql import ir

LEFT, FULL = "left", "full"
STRICT_COMPARISONS = ("=", "<>", "<", "<=", ">", ">=")  # NULL on either side -> NULL


@dataclass(frozen=True, slots=True)
class OuterJoin:
    """A LEFT join onto table `rel` (NULLs in `rel`'s columns when a row finds no match), or a
    FULL join of `other` and `rel` (either side NULL). `on` is the ON condition, split at AND."""

    kind: str
    rel: str
    on: tuple[ir.Expr, ...]
    other: str = ""

    def __post_init__(self) -> None:
        if self.kind not in (LEFT, FULL) or (self.kind == FULL) != bool(self.other):
            raise ValueError(f"bad outer join {self.kind!r} onto {self.rel!r}")

    @property
    def null_supplying(self) -> tuple[str, ...]:
        return (self.rel, self.other) if self.kind == FULL else (self.rel,)


def non_null_columns(term: ir.Expr, rel: str) -> frozenset[str]:
    """Columns c of `rel` such that `term` is never TRUE when c is NULL (conservatively)."""
    if isinstance(term, ir.Not) and isinstance(term.term, ir.IsNull):
        return _column_of(term.term.term, rel)
    if isinstance(term, ir.Not) and isinstance(term.term, ir.Compare | ir.InList):
        return non_null_columns(term.term, rel)  # NOT NULL is NULL
    if isinstance(term, ir.Compare) and term.op in STRICT_COMPARISONS:
        return _column_of(term.left, rel) | _column_of(term.right, rel)
    if isinstance(term, ir.InList):
        return _column_of(term.term, rel)
    return frozenset()


def rejects_nulls(conjuncts: tuple[ir.Expr, ...], rel: str) -> bool:
    """Whether the filters drop every row whose `rel` columns are all NULL."""
    return any(non_null_columns(c, rel) for c in conjuncts)


def simplify(
    outer: tuple[OuterJoin, ...], conjuncts: tuple[ir.Expr, ...]
) -> tuple[tuple[OuterJoin, ...], tuple[ir.Expr, ...]]:
    """Outer joins whose NULL rows the filters reject become inner (their ON joins the
    filters) or, for FULL, LEFT; repeated, as a new filter may reject another join's NULLs."""
    changed = True
    while changed:
        changed = False
        for join in outer:
            kept = _narrowed(join, conjuncts)
            if kept == (join,):
                continue
            outer = tuple(j for j in outer if j != join) + kept
            if not kept:
                conjuncts += join.on
            changed = True
            break
    return outer, conjuncts


def _narrowed(join: OuterJoin, conjuncts: tuple[ir.Expr, ...]) -> tuple[OuterJoin, ...]:
    if join.kind == LEFT:
        return () if rejects_nulls(conjuncts, join.rel) else (join,)
    no_rel, no_other = rejects_nulls(conjuncts, join.rel), rejects_nulls(conjuncts, join.other)
    if no_rel and no_other:
        return ()
    if no_rel:  # the rows `other` lacks remain: `rel` LEFT JOIN `other`
        return (OuterJoin(LEFT, join.other, join.on),)
    if no_other:
        return (OuterJoin(LEFT, join.rel, join.on),)
    return (join,)


def _column_of(expr: ir.Expr, rel: str) -> frozenset[str]:
    return (
        frozenset({expr.name}) if isinstance(expr, ir.Column) and expr.rel == rel else frozenset()
    )
