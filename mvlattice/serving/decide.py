"""The rewrite step: Spark's acceptance of the text, then the rewrite onto the views that
freshness allows right now."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from mvlattice.mvrewrite.rewriter import RewriteResult, rewrite
from mvlattice.sql.parse import parse_query
from mvlattice.sql.template import literal_free_key

if TYPE_CHECKING:
    from sqlglot import exp

    from mvlattice.engine.acceptance import Analyze
    from mvlattice.jobs.catalog import CatalogAvailability
    from mvlattice.serving.host import Host


@dataclass(frozen=True, slots=True)
class Decision:
    """How a query is answered: its rewrite, and the freshness it was decided on (None when
    the query was not to be rewritten)."""

    result: RewriteResult
    availability: CatalogAvailability | None


def decide_rewrite(
    host: Host,
    sql: str,
    *,
    explain: bool = False,
    use_index: bool = True,
    tree: exp.Query | None = None,
    accept: Analyze | None = None,
    written: str | None = None,
) -> Decision:
    """Only a query Spark accepts as written is rewritten: sqlglot reads, and writes back as
    valid SQL, text Spark rejects (SqlError with Spark's reason). `written`: the client's text
    when `sql` is its template's form (IN lists in order): Spark judges the text as written,
    and a query not rewritten stays as written."""
    as_written = sql if written is None else written
    host.serving.acceptance.check(as_written, accept or host.analyze, literal_free_key)
    context, availability = host.serving.catalog.rewrite_views()
    host.serving.rewrite_count.add()
    result = rewrite(sql, context, availability, explain, use_index, tree=tree)
    if not result.rewritten and as_written != sql:
        result = replace(result, sql=as_written)
    return Decision(result, availability)


def explain_miss(host: Host, sql: str, tree: exp.Query | None = None) -> RewriteResult:
    """A query the pipeline decided not to rewrite (Spark accepted it then), rewritten again
    with every view's reason: what its client is told. An explanation, not a decision, so it
    is not counted among the pipeline's rewrite runs (one per rewriting request)."""
    context, availability = host.serving.catalog.rewrite_views()
    return rewrite(sql, context, availability, True, tree=tree)


def decide_plain(sql: str, tree: exp.Query | None) -> Decision:
    """A query run as written: only queries (anything else is a UsageError / SqlError)."""
    if tree is None:
        parse_query(sql)
    return Decision(RewriteResult(False, sql, ()), None)
