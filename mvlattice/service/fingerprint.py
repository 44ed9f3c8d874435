"""Normalized SQL and the fingerprint of a query's shape, for the query log.

Two queries have the same fingerprint when they differ only in literals (`x = 5` vs `x = 7`, IN
lists of any length, LIMIT n), in whitespace, keyword case or the case of unquoted identifiers —
what the suggester and HRU's workload weights count as "the same query". SQL that sqlglot cannot
parse still gets a fingerprint, from its text with literals blanked out.
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
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_SPACE = re.compile(r"\s+")


@functools.lru_cache(maxsize=4096)  # dashboards repeat their queries: parse each once
def describe(sql: str) -> tuple[str, str]:
    """(normalized SQL, fingerprint) from one parse."""
    tree = _parse(sql)
    if tree is None:
        return _collapse(sql), _digest(_NUMBER.sub("?", _STRING.sub("?", _collapse(sql))).lower())
    normalized = tree.sql(dialect=DIALECT)
    return normalized, _digest(_shape(tree))


def normalize_sql(sql: str) -> str:
    """The SQL re-printed by sqlglot (Spark dialect), literals kept; the text with its
    whitespace collapsed when it does not parse."""
    return describe(sql)[0]


def fingerprint(sql: str) -> str:
    """16 hex digits naming the query's shape (see `shape`)."""
    return describe(sql)[1]


def shape(sql: str) -> str:
    """The SQL with every literal replaced by `?` and unquoted identifiers lower-cased."""
    tree = _parse(sql)
    if tree is None:
        return _NUMBER.sub("?", _STRING.sub("?", _collapse(sql))).lower()
    return _shape(tree)


def _shape(tree: exp.Expression) -> str:
    tree = normalize_identifiers(tree.copy(), dialect=DIALECT)
    return tree.transform(_blank, copy=False).sql(dialect=DIALECT)


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def _blank(node: exp.Expression) -> exp.Expression:
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


def _constant(node: exp.Expression) -> bool:
    return all(isinstance(n, exp.Literal | exp.Neg | exp.Cast | exp.DataType) for n in node.walk())


def _parse(sql: str) -> exp.Expression | None:
    try:
        trees = [t for t in sqlglot.parse(sql, read=DIALECT) if t is not None]
    except SqlglotError:
        return None
    return trees[0] if len(trees) == 1 else None


def _collapse(sql: str) -> str:
    return _SPACE.sub(" ", sql).strip().rstrip(";").strip()
