"""Request and response bodies as the OpenAPI document describes them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class RewriteRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sql: str = Field(min_length=1, description="a query (SELECT/WITH); the body size is bounded")
    explain: bool = Field(False, description="explain every view considered")
    model: str | None = Field(None, description="the served model to use (default: any)")


class QueryRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sql: str = Field(min_length=1, description="a query (SELECT/WITH); the body size is bounded")
    rewrite: bool = Field(True, description="rewrite onto tiles and materializations first")
    limit: int | None = Field(
        None, ge=0, description="at most this many rows (capped by the server's --max-rows)"
    )
    model: str | None = None


class Explanation(BaseModel):
    model_config = ConfigDict(extra="allow")

    view: str | None = None
    outcome: str | None = None
    reason: str | None = None
    message: str | None = None


class RewriteResponse(BaseModel):
    model_config = ConfigDict(extra="allow")

    rewritten: bool
    sql: str
    materializations: list[str]
    explain: list[Explanation] | None = None
    model: str
    elapsed_ms: float


class QueryResponse(BaseModel):
    model_config = ConfigDict(extra="allow")

    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    truncated: bool
    limit: int
    rewritten: bool
    materializations: list[str]
    sql: str
    model: str
    elapsed_ms: float
    engine: str = Field(description="who answered: local (the tile engine) | spark")
    engine_reason: str = Field(description="why Spark answered a rewritten query ('' if local)")
    miss: str = Field(
        "", description="why a query to be rewritten was not: the nearest view's reason ('' else)"
    )


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorResponse(BaseModel):
    error: ErrorDetail


class QueryLoad(BaseModel):
    running: int
    waiting: int
    max_running: int
    max_waiting: int
    saturated: bool
    overrunning: int = Field(0, description="work still running after its client had a 408")


class Health(BaseModel):
    status: str = Field(
        description="ok | starting | saturated (new queries get 503) | spark_down | "
        "spark_unresponsive (answered with status 503)"
    )
    models: list[str]
    queries: QueryLoad
    spark: str = Field("ok", description="Spark's JVM as last probed: ok | down | unresponsive")


class JobResponse(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    kind: str
    model: str
    lattice: str | None
    target: str | None
    status: str
    submitted_at: str | None
    started_at: str | None
    finished_at: str | None
    result: dict[str, Any] | None
    error: ErrorDetail | None


class LatticeList(BaseModel):
    lattices: list[dict[str, Any]]


class TileList(BaseModel):
    tiles: list[dict[str, Any]]


class LoggedQuery(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: int
    time: str
    kind: str
    sql: str
    sql_form: str = Field(
        description="full | blanked (serve --query-log-literals blank: literals shown as ?) | "
        "omitted (literals were to be blanked but the SQL did not parse)"
    )
    model: str
    rewritten: bool
    views: list[str]
    latency_ms: float
    outcome: str
    message: str | None
    engine: str = Field(description="who answered a query: local | spark ('' for a rewrite)")
    explain: list[Explanation] | None
    explained_later: bool


class QueryLogList(BaseModel):
    entries: list[LoggedQuery]


class ScheduledRun(BaseModel):
    model: str
    kind: str = Field(description="lattice | materialization")
    name: str
    cron: str
    next_run: str | None


class ScheduleList(BaseModel):
    runs: list[ScheduledRun]


ERROR_TEXT = {
    400: "bad, unsupported or refused SQL, bad input, or a Host header that is not host[:port]",
    401: "missing or wrong bearer token",
    403: "a foreign Origin or a cross-site request",
    404: "unknown name",
    408: "the query ran past its deadline (--query-timeout) and was cancelled",
    409: "conflicting job",
    413: "request body (or a query's first answer row) too large",
    415: "a POST without a JSON body or the X-Mvlattice-Request header",
    421: "a Host this service does not answer to (see --allowed-host)",
    503: "too many queries running and waiting, or advice for other arguments being computed; "
    "retry after Retry-After seconds",
}
# Every route can meet the same-origin middleware's refusals.
ALWAYS = (400, 403, 421)


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` for the error statuses a route can return."""
    chosen = sorted(set(statuses) | set(ALWAYS))
    return {s: {"model": ErrorResponse, "description": ERROR_TEXT[s]} for s in chosen}
