"""Bad SQL for the rewriter: random text, random token soup, and mutations of valid queries
(tokens deleted, duplicated, swapped, replaced by random identifiers, keywords, literals or
garbage). `check` is the property: the rewriter returns a result or raises one of
mvlattice's own errors with a one-line message, in bounded time."""

from __future__ import annotations

import contextlib
import re
import signal
from collections.abc import Iterator

import sqlglot
from hypothesis import strategies as st

from mvlattice.errors import MvlatticeError
from mvlattice.mvrewrite.rewriter import RewriteContext, RewriteResult, rewrite

SECONDS = 20  # per input; generous, as the machine may be busy — a hang takes forever
TOKEN = re.compile(r"\s+|'(?:[^'\\]|\\.)*'|`[^`]*`|\w+|<=>|<>|!=|<=|>=|\|\||.", re.S)
KEYWORDS = (
    "SELECT", "FROM", "WHERE", "GROUP BY", "HAVING", "ORDER BY", "LIMIT", "JOIN", "LEFT JOIN",
    "ON", "USING", "AND", "OR", "NOT", "IN", "IS NULL", "BETWEEN", "UNION ALL", "UNION",
    "INTERSECT", "EXCEPT", "WITH", "AS", "DISTINCT", "CASE", "WHEN", "THEN", "END", "OVER",
    "PARTITION BY", "COUNT(*)", "SUM(", "AVG(", "(", ")", ",", ".", "*", "=", "<", ";", "--",
    "/*", "LATERAL VIEW", "EXPLODE(", "TABLESAMPLE", "CROSS JOIN", "FULL JOIN", "ROLLUP",
    "GROUPING SETS", "CUBE", "QUALIFY", "WINDOW", "FILTER", "INTERVAL", "CAST(", "::",
)  # fmt: skip
IDENTIFIERS = st.one_of(
    st.sampled_from(("emps", "depts", "empid", "deptno", "salary", "mv", "t", "x", "q")),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True),
    st.text(min_size=1, max_size=6).map(lambda s: "`" + s.replace("`", "") + "`"),
)
LITERALS = st.one_of(
    st.integers(-(10**20), 10**20).map(str),
    st.floats(allow_nan=False).map(repr),
    st.text(max_size=6).map(lambda s: "'" + s.replace("'", "''") + "'"),
    st.sampled_from(("NULL", "TRUE", "DATE '2024-01-01'", "1e308", "-0", "0x1F", "X'00'")),
)
PIECES = st.one_of(st.sampled_from(KEYWORDS), IDENTIFIERS, LITERALS, st.text(max_size=4))


class Seeds(tuple):
    """Valid queries to mutate; a short repr keeps Hypothesis's reports readable."""

    def __repr__(self) -> str:
        return f"<{len(self)} seed queries>"


def tokens(sql: str) -> list[str]:
    return TOKEN.findall(sql)


@st.composite
def mutated(draw: st.DrawFn, seeds: tuple[str, ...]) -> str:
    """A valid query with 1–4 token edits."""
    parts = tokens(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        if not parts:
            break
        i = draw(st.integers(0, len(parts) - 1))
        action = draw(st.sampled_from(("delete", "duplicate", "swap", "replace", "insert")))
        if action == "delete":
            del parts[i]
        elif action == "duplicate":
            parts.insert(i, parts[i])
        elif action == "swap":
            j = draw(st.integers(0, len(parts) - 1))
            parts[i], parts[j] = parts[j], parts[i]
        elif action == "replace":
            parts[i] = draw(PIECES)
        else:
            parts.insert(i, " " + draw(PIECES) + " ")
    return "".join(parts)


def soup() -> st.SearchStrategy[str]:
    """Token soup: SQL-ish words in random order."""
    return st.lists(PIECES, max_size=25).map(" ".join)


def garbage() -> st.SearchStrategy[str]:
    return st.text(max_size=120)


class Hang(Exception):
    """An input took longer than SECONDS."""


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    def _raise(*_args: object) -> None:
        raise Hang(f"no answer within {seconds}s")

    previous = signal.signal(signal.SIGALRM, _raise)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def check(sql: str, context: RewriteContext) -> RewriteResult | MvlatticeError:
    """The rewriter's answer to `sql`: a result, or mvlattice's own error with a one-line
    message. Anything else (another exception, a hang, a bad message) fails the caller."""
    try:
        with time_limit(SECONDS):
            result = rewrite(sql, context)
    except MvlatticeError as err:
        message = str(err)
        assert message and "\n" not in message, repr(message)
        return err
    assert isinstance(result, RewriteResult)
    if result.rewritten:
        sqlglot.parse_one(result.sql, read="spark")  # a rewrite is itself valid SQL
    else:
        assert result.sql == sql
    for note in result.explain:
        assert note.message and "\n" not in note.message, repr(note.message)
    return result
