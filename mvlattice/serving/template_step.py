"""The template step of the serving pipeline: a text of a shape decided before, under the same
guard, answered by binding its literals into that decision (`serving.templates`); else the
full path decides it and leaves an entry for the next one."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mvlattice.mvrewrite.rewriter import Engine, QueryResult, RewriteResult
from mvlattice.serving.engine_choice import DEFAULT_TIMEOUT
from mvlattice.serving.freshness import approved, count_hits
from mvlattice.serving.kept import keep_answer
from mvlattice.sql.refusal import Refusal
from mvlattice.sql.slots import Bound, bind
from mvlattice.sql.transpile import Transpiled

if TYPE_CHECKING:
    from mvlattice.jobs.catalog import ApprovedSnapshot, CatalogAvailability
    from mvlattice.mvrewrite.model_context import RewriteContext
    from mvlattice.serving.decide import Decision
    from mvlattice.serving.host import Host
    from mvlattice.serving.request import Request
    from mvlattice.serving.templates import Entry


@dataclass(frozen=True, slots=True)
class Templated:
    """A text read as a template whose entry was missing: what `learn_template` files."""

    bound: Bound
    key: tuple
    context: RewriteContext


def from_template(host: Host, request: Request, start: float) -> QueryResult | Templated | None:
    """The answer from the text's template entry; else what to learn from the full path (or
    None when the text is no template: no slots, or not plain enough to read fast)."""
    if request.explain or not request.use_index:
        return None
    bound = bind(request.sql)
    if bound is None or not bound.slots:
        return None
    templates = host.serving.templates
    context, availability = host.serving.catalog.rewrite_views()
    key = templates.key(_owner(host, request), context, bound)
    entry = templates.find(key, context)
    if entry is None:
        return Templated(bound, key, context)
    snapshots = _still_approved(availability, entry)
    if snapshots is None:
        templates.forget(key)
        return Templated(bound, key, context)
    answer = host.serving.tile_engine.answer_planned(
        Transpiled(entry.duckdb.bind(bound), entry.tables),
        entry.schema,
        snapshots,
        request.limit,
        timeout=request.timeout if request.timeout is not None else DEFAULT_TIMEOUT,
        cancel=request.cancel,
    )
    if isinstance(answer, Refusal):
        return Templated(bound, key, context)  # decided in full: Spark may have to answer
    result = RewriteResult(True, entry.rewritten.bind(bound), entry.materializations)
    keep_answer(host, request.kept_key, result, availability, answer)
    count_hits(host, availability, entry.materializations)
    elapsed = (time.perf_counter() - start) * 1000
    return QueryResult(answer.columns, answer.rows, result, elapsed, Engine.LOCAL, "")


def learn_template(host: Host, request: Request, templated: Templated, decision: Decision) -> None:
    """File the tile engine's answer path for the text's template (the full path just took)."""
    result = decision.result
    availability = decision.availability
    if availability is None or not result.rewritten:
        return
    snapshots = approved(host, availability, result.materializations)
    if isinstance(snapshots, Refusal):
        return
    planned = host.serving.tile_engine.plan_made(
        result.sql, snapshots, request.describe or host.describe
    )
    if planned is None:
        return
    host.serving.templates.learn(templated.key, templated.bound, templated.context, result.sql,
                                 result.materializations, planned, snapshots)  # fmt: skip


def _owner(host: Host, request: Request) -> tuple:
    """Whose word an entry stands on: Spark's analyzer of the text and the describer of the
    rewrite (the sandbox's, for a client's text)."""
    return (request.accept or host.analyze, request.describe or host.describe)


def _still_approved(
    availability: CatalogAvailability, entry: Entry
) -> dict[str, ApprovedSnapshot] | None:
    """The snapshots the entry was decided over, when freshness approves each of them now."""
    found = {}
    for table, version in entry.versions:
        if not availability.state(table).usable:
            return None
        now = availability.approved.get(table)
        if now is None or now.version != version:
            return None
        found[table] = now
    return found
