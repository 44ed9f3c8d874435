"""The serving pipeline: the steps a query passes, declared once, in order.

`serve` runs them all. An edge that runs Spark's part elsewhere (the HTTP service, in a
bounded query slot) calls `answer_without_spark`, then `answer_on_spark` with the `Pending`
value it returned: the query is rewritten once either way.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mvlattice.mvrewrite.rewriter import Engine, QueryResult
from mvlattice.serving.decide import Decision, decide_plain, decide_rewrite
from mvlattice.serving.engine_choice import answer_locally
from mvlattice.serving.freshness import count_hits
from mvlattice.serving.kept import keep_answer, kept_answer
from mvlattice.serving.template_step import Templated, from_template, learn_template

if TYPE_CHECKING:
    from sqlglot import exp

    from mvlattice.serving.host import Host
    from mvlattice.serving.request import Request, Runner

STEPS = (
    "kept answer",  # kept.kept_answer: the same text answered before, its snapshots still approved
    "template",  # template_step.from_template: the same shape decided before, literals bound
    "check",  # Request.check: the edge's own check of the text (the service's SQL gate)
    "accept and rewrite",  # decide.decide_rewrite: Spark accepts the text; rewrite onto views
    "register",  # catalog.ServingCatalog.register_used: Spark's catalog knows the views read
    "engine",  # engine_choice.answer_locally: the tile engine, else why Spark
    "answer",  # the tile engine's rows, or Spark's (`answer_on_spark`)
    "hits",  # freshness.count_hits: each view read counts a hit
    "learn",  # template_step.learn_template: the tile engine's path filed for the template
)


@dataclass(frozen=True, slots=True)
class Pending:
    """A decided query that Spark must answer: its rewrite, why not the tile engine, and when
    serving it started."""

    request: Request
    decision: Decision
    reason: str
    started: float  # time.perf_counter() at the pipeline's start

    @property
    def sql(self) -> str:
        """The SQL Spark runs (the rewritten query, or the text as given)."""
        return self.decision.result.sql


def serve(host: Host, request: Request) -> QueryResult:
    """Every step: the query's answer, from a kept answer, the tile engine or Spark."""
    outcome = answer_without_spark(host, request)
    if isinstance(outcome, QueryResult):
        return outcome
    return answer_on_spark(host, outcome)


def answer_without_spark(host: Host, request: Request) -> QueryResult | Pending:
    """The answer when no Spark job is needed (a kept answer, the tile engine); else the
    decided query, for `answer_on_spark`."""
    start = time.perf_counter()
    templated: Templated | None = None
    if request.local_allowed:
        kept = kept_answer(host, request.kept_key, start)
        if kept is not None:
            return kept
        found = from_template(host, request, start)
        if isinstance(found, QueryResult):
            return found
        templated = found
    tree = request.tree
    if request.check is not None:
        tree = request.check(request.sql) or tree
    decision = _decide(host, request, templated, tree)
    local, reason = answer_locally(host, decision, request)
    if local is None:
        return Pending(request, decision, reason, start)
    assert decision.availability is not None  # the tile engine answers only rewritten queries
    keep_answer(host, request.kept_key, decision.result, decision.availability, local)
    if templated is not None:
        learn_template(host, request, templated, decision)
    return _result(host, decision, local.columns, local.rows, start, Engine.LOCAL, "")


def answer_on_spark(host: Host, pending: Pending, runner: Runner | None = None) -> QueryResult:
    """Spark's answer to a decided query: `runner` (else the request's, else the host's own
    session) runs its SQL."""
    run = runner or pending.request.runner or host.run_sql
    columns, rows = run(pending.sql, pending.request.limit)
    return _result(host, pending.decision, columns, rows, pending.started, Engine.SPARK,
                   pending.reason)  # fmt: skip


def _decide(
    host: Host, request: Request, templated: Templated | None, tree: exp.Query | None
) -> Decision:
    if not request.rewrite:
        return decide_plain(request.sql, tree)
    # A text whose IN lists were put in order is decided as ordered (its template's form).
    sql = request.sql if templated is None else templated.bound.canonical
    tree = tree if sql == request.sql else None
    decision = decide_rewrite(host, sql, explain=request.explain, use_index=request.use_index,
                              tree=tree, accept=request.accept, written=request.sql)  # fmt: skip
    if decision.availability is not None and decision.result.rewritten:
        # Spark's analyzer must know the tiles read, built by another process too: the tile
        # engine types its answer as Spark types the same SQL.
        host.serving.catalog.register_used(decision.availability, decision.result.materializations)
    return decision


def _result(
    host: Host,
    decision: Decision,
    columns: Any,
    rows: Any,
    start: float,
    engine: Engine,
    reason: str,
) -> QueryResult:
    elapsed = (time.perf_counter() - start) * 1000
    if decision.availability is not None and decision.result.rewritten:
        count_hits(host, decision.availability, decision.result.materializations)
    return QueryResult(tuple(columns), tuple(rows), decision.result, elapsed, engine, reason)
