"""The state of matching one query block against one view, and the value "no rewrite".

Each matching step (table mapping, equivalence classes, ranges, residuals, output mapping,
rollup, union compensation) takes an `Attempt` and returns a richer `Attempt` or a
`Rejection` with a reason code and a message for users.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from mvlattice.mvrewrite.match.keys import Keys
from mvlattice.mvrewrite.match.predicates import Predicates
from mvlattice.mvrewrite.match.ranges import FULL, Range
from mvlattice.mvrewrite.match.view_outputs import Available
from mvlattice.mvrewrite.views import View
from mvlattice.sql import ir
from mvlattice.sql.spjg import Spjg, TableRef


class Reason(StrEnum):
    """Why a view was not used for a block, as explanations, the CLI and the HTTP API show it
    (the values are that contract)."""

    TABLES_NOT_CONTAINED = "TABLES_NOT_CONTAINED"  # the view reads none of the query's tables
    EXTRA_TABLE = "EXTRA_TABLE"  # the view joins a table the query lacks, and that join is lossy
    PREDICATE_NOT_IMPLIED = "PREDICATE_NOT_IMPLIED"  # the view lacks rows the query needs
    MISSING_COLUMN = "MISSING_COLUMN"  # a needed column is not among the view's outputs
    CANNOT_ROLL_UP = "CANNOT_ROLL_UP"  # the query's aggregates cannot come from the view's
    STALE = "STALE"  # the view's data is older than its staleness tolerance allows
    NOT_AVAILABLE = "NOT_AVAILABLE"  # not built yet, building, or failed
    UNSAFE = "UNSAFE"  # outer joins, non-deterministic functions, …: never rewritten
    UNSUPPORTED = "UNSUPPORTED"  # SQL the rewriter does not reason about; left as it is
    VIEW_UNSUPPORTED = "VIEW_UNSUPPORTED"  # the view's definition is outside what matching knows
    NOT_CHOSEN = "NOT_CHOSEN"  # matched, but another view is cheaper
    OUTER_JOIN = "OUTER_JOIN"  # an outer join of the query or the view the other lacks


# The codes by name, as the matching steps import them.
TABLES_NOT_CONTAINED = Reason.TABLES_NOT_CONTAINED
EXTRA_TABLE = Reason.EXTRA_TABLE
PREDICATE_NOT_IMPLIED = Reason.PREDICATE_NOT_IMPLIED
MISSING_COLUMN = Reason.MISSING_COLUMN
CANNOT_ROLL_UP = Reason.CANNOT_ROLL_UP
STALE = Reason.STALE
NOT_AVAILABLE = Reason.NOT_AVAILABLE
UNSAFE = Reason.UNSAFE
UNSUPPORTED = Reason.UNSUPPORTED
VIEW_UNSUPPORTED = Reason.VIEW_UNSUPPORTED
NOT_CHOSEN = Reason.NOT_CHOSEN
OUTER_JOIN = Reason.OUTER_JOIN


@dataclass(frozen=True, slots=True)
class Rejection:
    reason: Reason
    message: str


@dataclass(frozen=True, slots=True)
class EqualityCompensation:
    """Query-equal columns the view keeps in separate classes: `parts` must be made equal.

    Each part is a set of columns the view already holds equal (or a table joined back)."""

    parts: tuple[tuple[ir.Column, ...], ...]


@dataclass(frozen=True, slots=True)
class UnionSplit:
    """The view holds only the rows of class `column` within `view_range` (GL01 has no union;
    this is Calcite's extension): the rest comes from the base tables."""

    column: ir.Column  # the class representative (the key of its ranges)
    kind: str
    view_range: Range
    wanted: Range  # what the query lets through for that class
    base_column: ir.Column  # a member of the class in the query's own FROM

    @property
    def rest(self) -> Range:
        """The values the base branch reads: outside the view's range, NULL included when
        the query lets NULL through (a NULL fails the view's predicate)."""
        return self.view_range.complement().intersect(Range((FULL,), self.wanted.nulls))


@dataclass(kw_only=True, frozen=True, slots=True)
class UnionBranches:
    """What union compensation adds: the base branch's predicates (the query's, with the
    split class restricted to the rows the view lacks) and, per branch and on top, keys and
    outputs. Grouped queries compute partial aggregates in each branch and roll them up."""

    base_filters: tuple[ir.Expr, ...]
    grouped: bool
    view_keys: tuple[ir.Expr, ...]
    base_keys: tuple[ir.Expr, ...]
    view_outputs: tuple[ir.Output, ...]
    base_outputs: tuple[ir.Output, ...]
    outer_keys: tuple[ir.Expr, ...] = ()
    outer_outputs: tuple[ir.Output, ...] = ()
    outer_having: tuple[ir.Expr, ...] = ()
    outer_order: tuple[ir.SortKey, ...] = ()
    view_aggregates: bool = True  # False: the view's rows already are the query's groups


def _no_aggs() -> Mapping[ir.Agg, ir.Expr]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Attempt:
    query: Spjg
    view: View
    keys: Keys
    view_alias: str = "mv"
    mapping: tuple[tuple[str, str], ...] = ()  # view rel -> rel in the query's space
    join_back: tuple[str, ...] = ()  # query rels the view lacks (view-partial rewriting)
    extra: tuple[TableRef, ...] = ()  # view tables the query lacks (query-partial rewriting)
    extra_equalities: tuple[ir.Expr, ...] = ()  # the lossless joins of `extra`, query space
    query_preds: Predicates | None = None
    view_preds: Predicates | None = None
    equalities: tuple[EqualityCompensation, ...] = ()
    compensation: tuple[ir.Expr, ...] = ()  # query-space predicates to apply to the view
    split: UnionSplit | None = None
    union: UnionBranches | None = None
    available: Available | None = None
    filters: tuple[ir.Expr, ...] = ()  # compensation over the rewritten FROM
    outputs: tuple[ir.Output, ...] = ()  # over the rewritten FROM (aggregates mapped)
    group_keys: tuple[ir.Expr, ...] = ()  # over the rewritten FROM
    having: tuple[ir.Expr, ...] = ()
    order: tuple[ir.SortKey, ...] = ()
    aggregate: bool = False  # an Aggregate goes on top of the view (rollup or plain grouping)
    aggs: Mapping[ir.Agg, ir.Expr] = field(default_factory=_no_aggs)
    # over the view: drop the rows of its LEFT joins the query has as inner (outer_joins)
    outer_filters: tuple[ir.Expr, ...] = ()

    @property
    def view_block(self) -> Spjg:
        assert self.view.block is not None
        return self.view.block

    def to_query_space(self, expr: ir.Expr) -> ir.Expr:
        """A view-definition expression with its rels renamed into the query's space."""
        return ir.rename_rels(expr, self.mapping)


Step = Callable[[Attempt], "Attempt | Rejection"]
