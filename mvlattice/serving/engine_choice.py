"""Which engine answers a decided query: the tile engine in the driver when it may and can,
else Spark (and why)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from mvlattice.mvrewrite.rewriter import ENGINE, Explanation
from mvlattice.serving.freshness import approved
from mvlattice.sql.refusal import Refusal

if TYPE_CHECKING:
    from mvlattice.engine.results import LocalAnswer
    from mvlattice.jobs.catalog import CatalogAvailability
    from mvlattice.mvrewrite.rewriter import RewriteResult
    from mvlattice.serving.decide import Decision
    from mvlattice.serving.host import Host
    from mvlattice.serving.request import Request

DEFAULT_TIMEOUT = 60.0  # seconds the tile engine may run a query by default


def spark_reason(decision: Decision, request: Request) -> str:
    """Why Spark answers whatever the tile engine could do ("" when it may try)."""
    if request.engine == "spark":
        return "the engine asked for is spark"
    if not decision.result.rewritten:
        return "the query reads base tables"
    if request.runner is not None and request.describe is None:
        return "the caller runs queries on Spark itself"
    return ""


def answer_locally(
    host: Host, decision: Decision, request: Request
) -> tuple[LocalAnswer | None, str]:
    """The tile engine's answer to a rewritten query, else None and why Spark answers."""
    reason = spark_reason(decision, request)
    if reason or decision.availability is None:
        return None, reason
    result = decision.result
    snapshots = approved(host, decision.availability, result.materializations)
    if isinstance(snapshots, Refusal):
        return None, snapshots.reason
    answer = host.serving.tile_engine.answer(
        result.sql,
        snapshots,
        request.describe or host.describe,
        request.limit,
        timeout=request.timeout if request.timeout is not None else DEFAULT_TIMEOUT,
        cancel=request.cancel,
    )
    if isinstance(answer, Refusal):
        return None, answer.reason
    return answer, ""


def explain_engine(
    host: Host, result: RewriteResult, availability: CatalogAvailability
) -> RewriteResult:
    """A rewritten query's explanation, ending with which engine `auto` would pick and why."""
    snapshots = approved(host, availability, result.materializations)
    refusal = (
        snapshots
        if isinstance(snapshots, Refusal)
        else host.serving.tile_engine.decide(result.sql, snapshots)
    )
    message = (
        "the tile engine answers it in the driver"
        if refusal is None
        else f"Spark answers it: {refusal.reason}"
    )
    return replace(result, explain=(*result.explain, Explanation(None, ENGINE, "", message)))
