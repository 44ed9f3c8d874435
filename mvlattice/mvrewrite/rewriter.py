"""`rewrite(sql, context)`: a query onto tiles and materialized views, never wrongly.

Every block of the query is matched against every candidate view (GL01 §3, see `match`);
of the views that match and may be read (fresh enough, per the `Availability` the caller
passes), the one reading the fewest rows is used. The result always says why: for every
view considered, used / matched but not chosen / rejected, with a reason code.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from sqlglot import exp

from mvlattice.errors import UnsupportedSqlError
from mvlattice.jobs.availability import AllUsable, Availability, ViewCode
from mvlattice.mvrewrite import cost, prefilter
from mvlattice.mvrewrite.index import filter_tree
from mvlattice.mvrewrite.match import compose
from mvlattice.mvrewrite.match.attempt import (
    NOT_AVAILABLE,
    NOT_CHOSEN,
    STALE,
    UNSUPPORTED,
    Attempt,
    Reason,
    Rejection,
)
from mvlattice.mvrewrite.match.gl01 import match
from mvlattice.mvrewrite.model_context import RewriteContext
from mvlattice.mvrewrite.prefilter import Summary
from mvlattice.mvrewrite.views import View
from mvlattice.sql import grouping_sets
from mvlattice.sql.from_sql import translate
from mvlattice.sql.parse import output_names, parse_query, qualify_query, rename_outputs
from mvlattice.sql.spjg import Spjg, normalize
from mvlattice.sql.statement_blocks import rewrite_tree, visible_ctes
from mvlattice.sql.to_sql import plan_sql, pretty


class Outcome(StrEnum):
    """What became of a view for a block (the values are the JSON contract)."""

    USED = "used"
    MATCHED = "matched"  # but not chosen: another view is cheaper
    REJECTED = "rejected"
    NOT_REWRITABLE = "not_rewritable"  # about the block itself, whatever the view
    ENGINE = "engine"  # which engine answers the rewritten query, and why not the tile engine


USED, MATCHED, REJECTED = Outcome.USED, Outcome.MATCHED, Outcome.REJECTED
NOT_REWRITABLE, ENGINE = Outcome.NOT_REWRITABLE, Outcome.ENGINE


@dataclass(frozen=True, slots=True)
class Explanation:
    view: str | None  # None: about the block itself, whatever the view
    outcome: Outcome
    reason: Reason | Literal[""]  # "" when used
    message: str

    def __post_init__(self) -> None:
        # Messages echo the query's identifiers, which may hold newlines (fuzzing found
        # `emps`\n``): an explanation stays one printable line.
        if not self.message.isprintable():
            object.__setattr__(self, "message", _printable(self.message))

    def to_dict(self) -> dict[str, Any]:
        return {
            "view": self.view,
            "outcome": self.outcome,
            "reason": self.reason,
            "message": self.message,
        }


@dataclass(frozen=True, slots=True)
class RewriteResult:
    rewritten: bool
    sql: str  # the rewritten SQL (pretty), or the query exactly as given
    materializations: tuple[str, ...]  # names of the views used
    explain: tuple[Explanation, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "rewritten": self.rewritten,
            "sql": self.sql,
            "materializations": list(self.materializations),
            "explain": [e.to_dict() for e in self.explain],
        }


class Engine(StrEnum):
    """Who answered a query (the values are the JSON contract)."""

    LOCAL = "local"  # the tile engine: DuckDB in the driver over tiles' Delta snapshots
    SPARK = "spark"


@dataclass(frozen=True, slots=True)
class QueryResult:
    """A query run (`Workspace.query`): its rows, and how it was rewritten before running."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    rewrite: RewriteResult
    elapsed_ms: float  # rewriting and running
    engine: Engine = Engine.SPARK  # who answered: the tile engine in the driver, or Spark
    # Why Spark answered a rewritten query rather than the tile engine ("" when local did).
    engine_reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "rows": [list(r) for r in self.rows],
            "rewritten": self.rewrite.rewritten,
            "materializations": list(self.rewrite.materializations),
            "elapsed_ms": round(self.elapsed_ms, 1),
            "engine": str(self.engine),
            "engine_reason": self.engine_reason,
            "explain": [e.to_dict() for e in self.rewrite.explain],
        }


def rewrite(
    sql: str,
    context: RewriteContext,
    availability: Availability | None = None,
    explain: bool = True,
    use_index: bool = True,
    *,
    tree: exp.Query | None = None,
) -> RewriteResult:
    """Raises SqlError / UsageError only for text that is not one query; otherwise returns
    the query unrewritten, with the reason, whenever it cannot be rewritten safely.
    Only the filter tree's candidates are matched; `use_index=False` matches every view (the
    same decisions, slower). Explanations give every view its reason, so with `explain=True`
    every view is matched too. `tree` is `sql` as `parse_query` returned it, for a caller that
    parsed it already (one parse per request); it is qualified in place, so not reusable."""
    try:
        return _rewrite_parsed(sql, tree, context, availability, explain, use_index)
    except RecursionError:
        # Deeper than Python's stack: when in doubt, do not rewrite (Spark decides on it).
        message = "the query nests too deeply to be rewritten"
        note = Explanation(None, NOT_REWRITABLE, UNSUPPORTED, message)
        return RewriteResult(False, sql, (), (note,) if explain else ())


def _rewrite_parsed(
    sql: str,
    tree: exp.Query | None,
    context: RewriteContext,
    availability: Availability | None,
    explain: bool,
    use_index: bool,
) -> RewriteResult:
    names, qualified = qualified_query(sql, tree, context)
    if isinstance(qualified, UnsupportedSqlError):
        note = Explanation(None, NOT_REWRITABLE, _reason(qualified), str(qualified))
        return RewriteResult(False, sql, (), (note,) if explain else ())
    session = _Session(context, availability or AllUsable(), explain, use_index)
    result = rewrite_tree(qualified, session.block)
    if not session.used:
        return RewriteResult(False, sql, (), tuple(session.notes))
    if names is not None:
        rename_outputs(result, names)
    return RewriteResult(
        True, pretty(result), tuple(dict.fromkeys(session.used)), tuple(session.notes)
    )


_QUALIFIED_KEPT = 1024


def qualified_query(
    sql: str, tree: exp.Query | None, context: RewriteContext
) -> tuple[tuple[str, ...] | None, exp.Query | UnsupportedSqlError]:
    """The query's output names and its tree qualified against the context's schema (a copy
    of one kept per query text), or why it cannot be qualified. Raises SqlError / UsageError
    for text that is not one query."""
    cache = context.qualified
    found = cache.get(sql)
    if found is None:
        tree = tree if tree is not None else parse_query(sql)
        names = output_names(tree)
        try:
            qualified: exp.Query | UnsupportedSqlError = qualify_query(
                tree, context.schema, context.default_db
            )
        except UnsupportedSqlError as exc:
            qualified = exc
        found = (names, qualified)
        cache[sql] = found
        while len(cache) > _QUALIFIED_KEPT:
            cache.popitem(last=False)
    else:
        cache.move_to_end(sql)
    names, qualified = found
    if isinstance(qualified, exp.Query):
        qualified = qualified.copy()  # the rewrite mutates it
    return names, qualified


class _Session:
    """Rewrites the blocks of one statement, collecting explanations and views used."""

    def __init__(
        self, context: RewriteContext, availability: Availability, explain: bool, use_index: bool
    ):
        self.context = context
        self.availability = availability
        self.explain = explain
        self.use_index = use_index and not explain  # explanations cover every view
        self.notes: list[Explanation] = []
        self.used: list[str] = []

    def block(self, select: exp.Select, label: str) -> exp.Query | None:
        if grouping_sets.has_grouping_sets(select):
            return self._grouping_sets(select, label)
        chosen = self._attempt(select, visible_ctes(select), label)
        if chosen is None:
            return None
        self.used.append(chosen.view.name)
        return plan_sql(compose.build(chosen))

    def _attempt(self, select: exp.Select, ctes: dict[str, exp.Expr], label: str) -> Attempt | None:
        try:
            query = normalize(translate(select, ctes))
        except UnsupportedSqlError as exc:
            self._note(label, Explanation(None, NOT_REWRITABLE, _reason(exc), str(exc)))
            return None
        return self._choose(query, label)

    def _grouping_sets(self, select: exp.Select, label: str) -> exp.Query | None:
        """One GROUP BY per grouping set, each from its best view; all or none."""
        try:
            types = grouping_sets.column_types(select, self.context.keys.type_of)
            branches = grouping_sets.expand(select, types)
        except UnsupportedSqlError as exc:
            self._note(label, Explanation(None, NOT_REWRITABLE, _reason(exc), str(exc)))
            return None
        ctes, chosen = visible_ctes(select), []
        for branch in branches:
            where = f"{label}, grouping set {grouping_sets.describe(branch)}"
            attempt = self._attempt(branch, ctes, where)
            if attempt is None:
                return None
            chosen.append(attempt)
        self.used.extend(a.view.name for a in chosen)
        rewritten = tuple(plan_sql(compose.build(a)) for a in chosen)
        return grouping_sets.union_all(rewritten, select)

    def _choose(self, query: Spjg, label: str) -> Attempt | None:
        matched: list[Attempt] = []
        for view, quick in candidates(query, self.context, self.use_index):
            result = quick or match(query, view, self.context.keys)
            if isinstance(result, Attempt):
                result = self._readable(result)
            if isinstance(result, Rejection):
                self._note(label, Explanation(view.name, REJECTED, result.reason, result.message))
            else:
                matched.append(result)
        if not matched:
            return None
        matched.sort(key=cost.order_key)
        self._note_matches(label, matched)
        return matched[0]

    def _readable(self, attempt: Attempt) -> Attempt | Rejection:
        state = self.availability.state(attempt.view.table)
        if state.usable:
            return attempt
        reason = STALE if state.code == ViewCode.STALE else NOT_AVAILABLE
        detail = f": {state.message}" if state.message else ""
        return Rejection(reason, f"the view matches but cannot be read ({state.code}){detail}")

    def _note_matches(self, label: str, matched: list[Attempt]) -> None:
        best = matched[0]
        rows = cost.rows_read(best)
        self._note(label, Explanation(best.view.name, USED, "", f"reads ~{rows:.0f} rows"))
        for other in matched[1:]:
            message = (
                f"matches, but reads ~{cost.rows_read(other):.0f} rows where "
                f"{best.view.name} reads ~{rows:.0f}"
            )
            self._note(label, Explanation(other.view.name, MATCHED, NOT_CHOSEN, message))

    def _note(self, label: str, note: Explanation) -> None:
        if not self.explain:
            return
        if label != "query":
            note = Explanation(note.view, note.outcome, note.reason, f"{label}: {note.message}")
        self.notes.append(note)


def candidates(
    query: Spjg, context: RewriteContext, use_index: bool = True
) -> Iterator[tuple[View, Rejection | None]]:
    """The views GL01 §4's filter tree finds for the block (`use_index=False`: every view),
    each with a rejection when a cheap filter condition already rules it out."""
    summary = Summary.of(query)
    everything = range(len(context.views))
    found = filter_tree.candidate_positions(query, context) if use_index else everything
    for i in found:
        yield context.views[i], prefilter.reject(summary, context.views[i], context.summaries[i])


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _reason(exc: UnsupportedSqlError) -> Reason:
    return Reason(getattr(exc, "reason", UNSUPPORTED))
