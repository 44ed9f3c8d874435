"""Normalized SQL and the fingerprint of a query's shape, for the query log.

Two queries have the same fingerprint when they differ only in literals (`x = 5` vs `x = 7`, IN
lists of any length, LIMIT n), in whitespace, keyword case or the case of unquoted identifiers —
what the suggester and HRU's workload weights count as "the same query". SQL that sqlglot cannot
parse — or that makes it fail in any way, e.g. RecursionError on a few hundred nested
parentheses — still gets a fingerprint, from its text with literals blanked out: nothing here
raises, so a log record never fails because of its SQL. SQL longer than `MAX_PARSE_CHARS` is
not parsed at all (nor cached): parsing megabytes on the log writer's thread buys nothing.
"""

from __future__ import annotations

import functools
import hashlib
import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

DIALECT = "spark"
_STRING = re.compile(r"'(?:[^'\\]|\\.|'')*'")
_DOUBLE_QUOTED = re.compile(r'"(?:[^"\\]|\\.|"")*"')  # Spark reads "…" as a string too
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_SPACE = re.compile(r"\s+")
MAX_PARSE_CHARS = 64 * 1024


def parse_statement(sql: str) -> exp.Expr | None:
    """`sql` parsed as one statement, for a caller that describes and blanks it (one parse);
    None when it is too long, does not parse or is several statements. Never raises."""
    try:
        return _parse(sql) if len(sql) <= MAX_PARSE_CHARS else None
    except Exception:  # noqa: BLE001 - RecursionError, sqlglot's own bugs: the text is used
        return None


def describe(sql: str, tree: exp.Expr | None = None) -> tuple[str, str]:
    """(normalized SQL, fingerprint) from one parse, or from `tree` (`parse_statement(sql)`)
    when the caller has it; never raises for any text."""
    if tree is not None:
        return _of_tree(sql, tree)
    if len(sql) > MAX_PARSE_CHARS:  # not cached either: 4096 such keys would be gigabytes
        return _collapse(sql), _digest(_text_shape(sql))
    return _describe(sql)


@functools.lru_cache(maxsize=4096)  # dashboards repeat their queries: parse each once
def _describe(sql: str) -> tuple[str, str]:
    return _of_tree(sql, parse_statement(sql))


def _of_tree(sql: str, tree: exp.Expr | None) -> tuple[str, str]:
    try:
        if tree is not None:
            return tree.sql(dialect=DIALECT), _digest(_shape(tree))
    except Exception:  # noqa: BLE001 - RecursionError, sqlglot's own bugs: fall back to the text
        pass
    return _collapse(sql), _digest(_text_shape(sql))


def normalize_sql(sql: str) -> str:
    """The SQL re-printed by sqlglot (Spark dialect), literals kept; the text with its
    whitespace collapsed when it does not parse."""
    return describe(sql)[0]


def fingerprint(sql: str) -> str:
    """16 hex digits naming the query's shape (see `shape`)."""
    return describe(sql)[1]


def shape(sql: str) -> str:
    """The SQL with every literal replaced by `?` and unquoted identifiers lower-cased."""
    try:
        tree = _parse(sql) if len(sql) <= MAX_PARSE_CHARS else None
        if tree is not None:
            return _shape(tree)
    except Exception:  # noqa: BLE001 - as in `describe`
        pass
    return _text_shape(sql)


def blank_literals(sql: str, tree: exp.Expr | None = None) -> str | None:
    """The SQL re-printed with its string and number literals (and comments) replaced by `?` —
    for a query log that must not keep values; None when it does not parse as one statement
    (the caller then stores no text at all rather than guessing at literals). `tree`:
    `parse_statement(sql)`, when the caller has it."""
    try:
        if tree is None:
            tree = _parse(sql) if len(sql) <= MAX_PARSE_CHARS else None
        if tree is None:
            return None
        return tree.transform(_blank_value, copy=True).sql(dialect=DIALECT, comments=False)
    except Exception:  # noqa: BLE001 - as in `describe`: None means "do not store the text"
        return None


def blank_text(text: str) -> str:
    """Text that may quote SQL — an error message, a rewrite's explanation — with what reads as
    a literal (a quoted string, a number outside a name) replaced by `?`; never raises."""
    return _NUMBER.sub("?", _DOUBLE_QUOTED.sub("?", _STRING.sub("?", text)))


def _shape(tree: exp.Expr) -> str:
    tree = normalize_identifiers(tree.copy(), dialect=DIALECT)
    return tree.transform(_blank, copy=False).sql(dialect=DIALECT)


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def _blank(node: exp.Expr) -> exp.Expr:
    if (
        isinstance(node, exp.In)
        and node.expressions
        and all(_constant(e) for e in node.expressions)
    ):
        return exp.In(this=node.this, expressions=[exp.Placeholder()])
    if isinstance(node, exp.Literal) or (
        isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal)
    ):
        return exp.Placeholder()
    return node


_VALUES = (exp.Literal, exp.HexString, exp.ByteString, exp.BitString, exp.RawString)


def _blank_value(node: exp.Expr) -> exp.Expr:
    # DECIMAL(10, 2)'s precision and scale are literals too, but types are not values
    if isinstance(node, _VALUES) and not isinstance(node.parent, exp.DataTypeParam):
        return exp.Placeholder()
    return node


def _constant(node: exp.Expr) -> bool:
    return all(isinstance(n, exp.Literal | exp.Neg | exp.Cast | exp.DataType) for n in node.walk())


def _parse(sql: str) -> exp.Expr | None:
    try:
        trees = [t for t in sqlglot.parse(sql, read=DIALECT) if t is not None]
    except SqlglotError:
        return None
    return trees[0] if len(trees) == 1 else None


def _text_shape(sql: str) -> str:
    return _NUMBER.sub("?", _STRING.sub("?", _collapse(sql))).lower()


def _collapse(sql: str) -> str:
    return _SPACE.sub(" ", sql).strip().rstrip(";").strip()
