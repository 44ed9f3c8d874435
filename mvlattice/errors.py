"""Every error mvlattice raises on purpose; messages are written for users."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


def first_line(exc: BaseException) -> str:
    """An error's first line, for a one-line message. A raw py4j error's own first line names
    only the call; the JVM exception's names the cause. delta-rs appends a native backtrace."""
    java = getattr(exc, "java_exception", None)
    text = (str(java) if java is not None else str(exc)).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class Outcome(StrEnum):
    """How a request ended: `ok`, or the code of the error it answered with. The values are the
    JSON contract: HTTP error bodies (`{"error": {"code": …}}`) and the query log's `outcome`."""

    OK = "ok"
    BAD_REQUEST = "bad_request"
    BAD_SQL = "bad_sql"
    UNSUPPORTED_SQL = "unsupported_sql"
    REFUSED = "refused"
    BAD_MODEL = "bad_model"
    BAD_DATA = "bad_data"
    QUERY_FAILED = "query_failed"  # the user's query failed while running
    ERROR = "error"  # another of mvlattice's own errors
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    TIMEOUT = "timeout"
    CONFLICT = "conflict"
    TOO_LARGE = "too_large"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    MISDIRECTED = "misdirected"
    INTERNAL = "internal"  # a bug
    UNAVAILABLE = "unavailable"
    OVERLOADED = "overloaded"


class MvlatticeError(Exception):
    """Root of mvlattice's own errors. `exit_code` is what the CLI exits with."""

    exit_code = 1


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a model document, located by file and path inside it."""

    file: str
    path: str
    message: str

    def __post_init__(self) -> None:
        # Names echoed from a document may hold newlines or control characters; a problem
        # stays one printable line.
        for field_name in ("path", "message"):
            value = getattr(self, field_name)
            if not value.isprintable():
                object.__setattr__(self, field_name, _printable(value))

    def __str__(self) -> str:
        where = f"{self.file}: {self.path}" if self.path else self.file
        return f"{where}: {self.message}"


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class ModelError(MvlatticeError):
    """A model file is malformed; carries every problem found, not just the first."""

    exit_code = 2

    def __init__(self, problems: list[Problem] | tuple[Problem, ...]) -> None:
        self.problems = tuple(problems)
        count = len(self.problems)
        head = f"{count} problem{'s' if count != 1 else ''} in model"
        super().__init__(head + ":\n" + "\n".join(f"  {p}" for p in self.problems))


class UnsupportedSqlError(MvlatticeError):
    """SQL that parses but uses a construct mvlattice cannot handle."""

    exit_code = 2


class SqlError(MvlatticeError):
    """SQL that does not parse or does not run (bad column, bad table, syntax)."""

    exit_code = 2


class NotFoundError(MvlatticeError):
    """An unknown name: lattice, tile, table, column, data set."""

    exit_code = 2


class UsageError(MvlatticeError):
    """Bad command-line or API arguments."""

    exit_code = 2


class SetupError(MvlatticeError):
    """The environment lacks something mvlattice needs (jars, Java, data)."""

    exit_code = 1


class JobError(MvlatticeError):
    """A Spark job (load, profile, build, refresh) failed."""

    exit_code = 1


class DataError(MvlatticeError):
    """Data violates the constraints a model declares or implies."""

    exit_code = 1


class ConflictError(MvlatticeError):
    """A request conflicts with work in progress (a job on the same tiles is running)."""

    exit_code = 1


class RefusedSqlError(SqlError):
    """Client SQL the service's sandbox will not run (a relation, operator or function outside
    what the model allows); the message names what was refused and why."""

    exit_code = 2


class QueryTimeoutError(MvlatticeError):
    """A query ran past its deadline (or its client went away) and was cancelled."""

    exit_code = 1


class OverloadedError(MvlatticeError):
    """Too many queries are running or waiting; the client should retry later."""

    exit_code = 1

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ResponseTooLargeError(MvlatticeError):
    """An answer's first row alone exceeds the response byte limit."""

    exit_code = 1


class SparkUnavailableError(MvlatticeError):
    """Spark's JVM died or stopped answering; queries that need it cannot run until the
    service restarts."""

    exit_code = 1


class TableUnreadable(MvlatticeError):
    """A table is there (its Delta log exists) but cannot be read: a damaged or unreadable log,
    storage that refuses access. Never taken for an absent table, which is no error."""

    exit_code = 1

    def __init__(self, table: str, reason: str) -> None:
        super().__init__(f"{table} cannot be read: {reason}")
        self.table = table  # e.g. "the Delta table at <location>", "source table <name>"
        self.reason = reason
