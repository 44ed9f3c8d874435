"""Errors as HTTP responses — the ONE place statuses are chosen.

Every error leaves as `{"error": {"code": …, "message": …}}`: mvlattice's own errors by class
(400 bad or refused SQL, 404 unknown name, 408 query timeout, 409 conflicting job, 413 answer
too large, 503 missing set-up or too many queries), the HTTP layer's own (401, 403 foreign
origin, 404 route, 405, 413, 415 not JSON, 421 foreign host), and anything else as 500
`internal` with a generic message — a bug, logged with its traceback on the server, never sent
to the client.
"""

from __future__ import annotations

import json
import logging

from mvlattice.errors import (
    ConflictError,
    DataError,
    JobError,
    ModelError,
    MvlatticeError,
    NotFoundError,
    OverloadedError,
    QueryTimeoutError,
    RefusedSqlError,
    ResponseTooLargeError,
    SetupError,
    SqlError,
    UnsupportedSqlError,
    UsageError,
)

log = logging.getLogger("mvlattice.service")

# (class, status, code), most specific first; the first isinstance match wins.
STATUSES: tuple[tuple[type[MvlatticeError], int, str], ...] = (
    (NotFoundError, 404, "not_found"),
    (ConflictError, 409, "conflict"),
    (RefusedSqlError, 400, "refused"),
    (QueryTimeoutError, 408, "timeout"),
    (OverloadedError, 503, "overloaded"),
    (ResponseTooLargeError, 413, "too_large"),
    (UnsupportedSqlError, 400, "unsupported_sql"),
    (SqlError, 400, "bad_sql"),
    (UsageError, 400, "bad_request"),
    (ModelError, 400, "bad_model"),
    (DataError, 400, "bad_data"),
    (JobError, 400, "query_failed"),  # the user's query failed while running
    (SetupError, 503, "unavailable"),
)

# The HTTP layer's own conditions, by status.
HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    408: "timeout",
    405: "method_not_allowed",
    413: "too_large",
    415: "unsupported_media_type",
    421: "misdirected",
    500: "internal",
    503: "overloaded",
}

INTERNAL_MESSAGE = "internal error; the server log has the details"


def status_of(exc: BaseException) -> tuple[int, str, str]:
    """(status, code, message) for an exception raised while serving a request."""
    if isinstance(exc, MvlatticeError):
        for cls, status, code in STATUSES:
            if isinstance(exc, cls):
                return status, code, one_line(exc)
        return 400, "error", one_line(exc)
    return 500, "internal", INTERNAL_MESSAGE


def log_bug(exc: BaseException) -> None:
    log.error("internal error: %s: %s", type(exc).__name__, one_line(exc), exc_info=exc)


def http_status(status: int, message: str) -> tuple[int, str, str]:
    """(status, code, message) for a condition the HTTP layer detects itself."""
    code = HTTP_CODES.get(status, "bad_request" if 400 <= status < 500 else "internal")
    return status, code, message


def body(code: str, message: str) -> dict[str, dict[str, str]]:
    return {"error": {"code": code, "message": message}}


def body_bytes(code: str, message: str) -> bytes:
    return json.dumps(body(code, message), ensure_ascii=False).encode("utf-8")


def one_line(exc: BaseException, limit: int = 2000) -> str:
    """An error's message on one line (model errors list problems: joined with '; ')."""
    text = ""
    for line in (x.strip() for x in str(exc).strip().splitlines() if x.strip()):
        text += line if not text else (" " if text.endswith(":") else "; ") + line
    text = text or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"
