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
    Outcome,
    OverloadedError,
    QueryTimeoutError,
    RefusedSqlError,
    ResponseTooLargeError,
    SetupError,
    SparkUnavailableError,
    SqlError,
    TableUnreadable,
    UnsupportedSqlError,
    UsageError,
)

log = logging.getLogger("mvlattice.service")

# (class, status, code), most specific first; the first isinstance match wins.
STATUSES: tuple[tuple[type[MvlatticeError], int, Outcome], ...] = (
    (NotFoundError, 404, Outcome.NOT_FOUND),
    (ConflictError, 409, Outcome.CONFLICT),
    (RefusedSqlError, 400, Outcome.REFUSED),
    (QueryTimeoutError, 408, Outcome.TIMEOUT),
    (OverloadedError, 503, Outcome.OVERLOADED),
    (ResponseTooLargeError, 413, Outcome.TOO_LARGE),
    (UnsupportedSqlError, 400, Outcome.UNSUPPORTED_SQL),
    (SqlError, 400, Outcome.BAD_SQL),
    (UsageError, 400, Outcome.BAD_REQUEST),
    (ModelError, 400, Outcome.BAD_MODEL),
    (DataError, 400, Outcome.BAD_DATA),
    (JobError, 400, Outcome.QUERY_FAILED),  # the user's query failed while running
    (SetupError, 503, Outcome.UNAVAILABLE),
    (SparkUnavailableError, 503, Outcome.UNAVAILABLE),
    (TableUnreadable, 503, Outcome.UNAVAILABLE),  # a table's log exists but cannot be read
)

# The HTTP layer's own conditions, by status.
HTTP_CODES = {
    400: Outcome.BAD_REQUEST,
    401: Outcome.UNAUTHORIZED,
    403: Outcome.FORBIDDEN,
    404: Outcome.NOT_FOUND,
    408: Outcome.TIMEOUT,
    405: Outcome.METHOD_NOT_ALLOWED,
    413: Outcome.TOO_LARGE,
    415: Outcome.UNSUPPORTED_MEDIA_TYPE,
    421: Outcome.MISDIRECTED,
    500: Outcome.INTERNAL,
    503: Outcome.OVERLOADED,
}

INTERNAL_MESSAGE = "internal error; the server log has the details"


def status_of(exc: BaseException) -> tuple[int, Outcome, str]:
    """(status, code, message) for an exception raised while serving a request."""
    if isinstance(exc, MvlatticeError):
        for cls, status, code in STATUSES:
            if isinstance(exc, cls):
                return status, code, one_line(exc)
        return 400, Outcome.ERROR, one_line(exc)
    return 500, Outcome.INTERNAL, INTERNAL_MESSAGE


def log_bug(exc: BaseException) -> None:
    log.error("internal error: %s: %s", type(exc).__name__, one_line(exc), exc_info=exc)


def http_status(status: int, message: str) -> tuple[int, Outcome, str]:
    """(status, code, message) for a condition the HTTP layer detects itself."""
    fallback = Outcome.BAD_REQUEST if 400 <= status < 500 else Outcome.INTERNAL
    code = HTTP_CODES.get(status, fallback)
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
