"""Column equivalence classes and canonical expressions (GL01 §3.1.1).

Two columns are equivalent in a block when an inner-join or WHERE conjunct `a = b` holds for
every row the block keeps; such rows have both columns non-NULL and equal, so any member of
a class may stand for the others. Expressions are compared in canonical form: each column
replaced by its class representative, operands of symmetric operators in a fixed order, so
`a.x = b.y` and `b.y = a.x` (or `t.c > 5` and `5 < t.c`) compare equal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from types import MappingProxyType

from mvlattice.sql import ir

MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "<>": "<>", "<=>": "<=>"}
SYMMETRIC = ("=", "<>", "<=>")


@dataclass(frozen=True, slots=True)
class Classes:
    """Equivalence classes: each class a sorted tuple of columns, the first its representative.

    Hashable (by `groups`), so canonical forms can be cached per set of classes."""

    groups: tuple[tuple[ir.Column, ...], ...] = ()
    reps: Mapping[ir.Column, ir.Column] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, hash=False, repr=False
    )

    @staticmethod
    def build(pairs: Iterable[tuple[ir.Column, ir.Column]]) -> Classes:
        parent: dict[ir.Column, ir.Column] = {}

        def find(c: ir.Column) -> ir.Column:
            parent.setdefault(c, c)
            while parent[c] != c:
                parent[c] = parent[parent[c]]
                c = parent[c]
            return c

        for a, b in pairs:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb, key=_col_key)] = min(ra, rb, key=_col_key)
        by_rep: dict[ir.Column, list[ir.Column]] = {}
        for column in parent:
            by_rep.setdefault(find(column), []).append(column)
        members = (tuple(sorted(m, key=_col_key)) for m in by_rep.values())
        groups = tuple(sorted(members, key=lambda g: _col_key(g[0])))
        reps = {c: group[0] for group in groups for c in group}
        return Classes(groups, MappingProxyType(reps))

    def rep(self, column: ir.Column) -> ir.Column:
        return self.reps.get(column, column)

    def members(self, column: ir.Column) -> tuple[ir.Column, ...]:
        rep = self.reps.get(column)
        if rep is None:
            return (column,)
        return next(g for g in self.groups if g[0] == rep)


def _col_key(c: ir.Column) -> tuple[str, str]:
    return (c.rel, c.name)


@lru_cache(maxsize=8192)
def canonical(expr: ir.Expr, classes: Classes) -> ir.Expr:
    """The canonical form of `expr` under `classes` (see the module docstring). Cached:
    matching asks for the same forms for every view of a lattice."""
    return ir.transform(expr, lambda node: _canonical_node(node, classes))


def _canonical_node(node: ir.Expr, classes: Classes) -> ir.Expr | None:
    if isinstance(node, ir.Column):
        return classes.rep(node)
    if isinstance(node, ir.Compare):
        return _orient(node)
    if isinstance(node, ir.And | ir.Or):
        return _flatten(node)
    if isinstance(node, ir.Not) and isinstance(node.term, ir.Not):
        return node.term.term  # NOT NOT x == x, also for NULL
    if isinstance(node, ir.InList):
        values = tuple(sorted(set(node.values), key=ir.sort_key))
        return ir.InList(node.term, values)
    if isinstance(node, ir.Func) and node.op == "Coalesce":
        return _coalesce_of_equals(node)
    return None


def _orient(node: ir.Compare) -> ir.Compare:
    left, right = node.left, node.right
    if node.op in SYMMETRIC:
        if ir.sort_key(right) < ir.sort_key(left):
            left, right = right, left
        return ir.Compare(node.op, left, right)
    if isinstance(left, ir.Literal) and not isinstance(right, ir.Literal):
        return ir.Compare(MIRROR[node.op], right, left)
    return node


def _flatten(node: ir.And | ir.Or) -> ir.Expr:
    kind = type(node)
    terms: dict[ir.Expr, None] = {}
    for term in node.terms:
        for t in term.terms if isinstance(term, kind) else (term,):
            terms.setdefault(t, None)
    ordered = tuple(sorted(terms, key=ir.sort_key))
    return ordered[0] if len(ordered) == 1 else kind(ordered)


def _coalesce_of_equals(node: ir.Func) -> ir.Expr | None:
    """COALESCE(a, b) of columns of one class is that column: USING's merged column."""
    args = dict(node.args)
    rest = args.get("expressions") or ()
    operands = (args.get("this"), *(rest if isinstance(rest, tuple) else (rest,)))
    first = operands[0]
    if isinstance(first, ir.Column) and all(o == first for o in operands):
        return first
    return None
