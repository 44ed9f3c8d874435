"""Answers the tile engine keeps: served again only while freshness approves, right now, the
very snapshots they were read from."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from mvlattice.mvrewrite.rewriter import Engine, QueryResult
from mvlattice.serving.freshness import approved, count_hits
from mvlattice.sql.refusal import Refusal

if TYPE_CHECKING:
    from mvlattice.engine.results import LocalAnswer
    from mvlattice.jobs.catalog import CatalogAvailability
    from mvlattice.mvrewrite.rewriter import RewriteResult
    from mvlattice.serving.host import Host


def kept_answer(
    host: Host, key: tuple, start: float, *, local_only: bool = False
) -> QueryResult | None:
    """The answer kept for `key` when freshness approves the same snapshot of every table it
    was read from (else None, and the entry is dropped). `local_only`: only answers whose
    freshness is decided from local Delta logs (no Spark job, no remote store)."""
    answers = host.serving.tile_engine.answers
    kept = answers.get(key)
    if kept is None or (local_only and not kept.decided_locally):
        return None
    availability = host.serving.catalog.availability()
    for table, location, version in kept.snapshots:
        usable = availability.state(table).usable
        now = availability.approved.get(table)
        if not usable or now is None or (now.location, now.version) != (location, version):
            answers.drop(key)
            answers.served(False)
            return None
    answers.served(True)
    count_hits(host, availability, kept.rewrite.materializations)
    elapsed = (time.perf_counter() - start) * 1000
    answer = kept.answer
    return QueryResult(answer.columns, answer.rows, kept.rewrite, elapsed, Engine.LOCAL, "")


def keep_answer(
    host: Host,
    key: tuple,
    result: RewriteResult,
    availability: CatalogAvailability,
    answer: LocalAnswer,
) -> None:
    snapshots = approved(host, availability, result.materializations)
    if not isinstance(snapshots, Refusal):
        local = all(availability.decided_locally(table) for table in snapshots)
        host.serving.tile_engine.answers.put(key, result, snapshots, answer, local)
