"""A query text's shape with its compared literals taken out: the key under which Spark's
acceptance of one text stands for every text of the same shape (issue 31).

Spark's parse and analysis of `x = 2021` and `x = 2022` cannot differ: a literal compared with
`=`, `<>`, `<`, `<=`, `>`, `>=`, `<=>`, in `BETWEEN … AND …` or in an `IN (…)` list is typed
from its text alone, and analysis never evaluates it. So such a literal becomes a placeholder
naming what Spark types it as (INT or BIGINT by magnitude, DECIMAL by its digits, a string by
its quote). Everything else is kept exactly as written, token by token — quotes, backticks,
suffixes (`1L`), function arguments, LIMIT, ordinals, typed literals (`DATE '…'`) — because
Spark's verdict may depend on it; whether two tokens touched is kept too. Comments are dropped
only when they are plain (`/* … */` with no nesting or hint, `-- …`); any other text between
tokens (a `#`, a hint, a nested comment), or anything the tokenizer trips on, gives no key:
then the exact text is the only key.

>>> literal_free_key("select a from t where y = 2021") == literal_free_key(
...     "select a from t  where y = 1998 /* a comment */")
True
>>> literal_free_key("select a from t where y = 1") == literal_free_key(
...     "select a from t where y = 1.5")
False
"""

from __future__ import annotations

import re

from sqlglot.dialects.spark import Spark
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

COMPARISONS = frozenset({TokenType.EQ, TokenType.NEQ, TokenType.GT, TokenType.GTE,
                         TokenType.LT, TokenType.LTE, TokenType.NULLSAFE_EQ})  # fmt: skip
# What may follow a literal that stands alone as an operand (else it is part of more).
ENDS = frozenset({TokenType.AND, TokenType.OR, TokenType.R_PAREN, TokenType.GROUP_BY,
                  TokenType.ORDER_BY, TokenType.HAVING, TokenType.LIMIT, TokenType.UNION,
                  TokenType.EXCEPT, TokenType.INTERSECT, TokenType.WINDOW})  # fmt: skip
MAX_STRING = 256  # longer strings stay in the key (a size may matter to the sandbox)
INT_MAX, LONG_MAX = 2**31 - 1, 2**63 - 1
# Whitespace and plain comments: Spark and sqlglot read them alike.
_GAP = re.compile(r"(?:\s+|/\*(?!\+)(?:(?!/\*|\*/).)*\*/|--[^\n]*(?:\n|\Z))*", re.S)
_STRING = re.compile(r"""^(['"])[^'"\\$\n\r]*\1$""")
_TOKENIZER = Spark().tokenizer_class()


def literal_free_key(sql: str) -> str | None:
    """The text's shape with compared literals as typed placeholders, or None when it cannot
    be stated safely (then only the exact text stands for itself)."""
    found = _shape(sql)
    return None if found is None else found[0]


def literal_free_slots(sql: str) -> list[tuple[str, str]] | None:
    """The literals `literal_free_key` takes out, in order: ("string", contents) or
    ("number", as written); None when it gives no key."""
    found = _shape(sql)
    return None if found is None else found[1]


def _shape(sql: str) -> tuple[str, list[tuple[str, str]]] | None:
    try:
        tokens = _TOKENIZER.tokenize(sql)
    except (SqlglotError, ValueError, IndexError, KeyError, RecursionError):
        return None
    tokens = [t for i, t in enumerate(tokens) if i == 0 or t.start != tokens[i - 1].start]
    parts: list[str] = []
    slots: list[tuple[str, str]] = []
    end = -1
    in_lists: list[bool] = []  # per open bracket: whether it opened an IN list
    for i, token in enumerate(tokens):
        gap = sql[end + 1 : token.start]
        if _GAP.fullmatch(gap) is None:
            return None
        parts.append(" " if gap else "")
        raw = sql[token.start : token.end + 1]
        before = tokens[i - 1] if i else None
        after = tokens[i + 1] if i + 1 < len(tokens) else None
        placeholder = _placeholder(token, raw) if _compared(tokens, i, in_lists) else None
        if placeholder is not None and _ends(after, in_lists):
            parts.append(placeholder)
            number = token.token_type == TokenType.NUMBER
            slots.append(("number", raw) if number else ("string", token.text))
        else:
            parts.append(raw)
        if token.token_type == TokenType.L_PAREN:
            in_lists.append(before is not None and before.token_type == TokenType.IN)
        elif token.token_type == TokenType.R_PAREN and in_lists:
            in_lists.pop()
        end = token.end
    if _GAP.fullmatch(sql[end + 1 :]) is None:
        return None
    return "".join(parts), slots


def _compared(tokens: list[Token], i: int, in_lists: list[bool]) -> bool:
    """Whether tokens[i] stands where a compared operand starts."""
    before = tokens[i - 1].token_type if i else None
    if before in COMPARISONS or before == TokenType.BETWEEN:
        return True
    if before in (TokenType.L_PAREN, TokenType.COMMA) and in_lists and in_lists[-1]:
        return before == TokenType.COMMA or (i >= 2 and tokens[i - 2].token_type == TokenType.IN)
    # the upper bound of BETWEEN: `BETWEEN <literal> AND <here>`
    return (
        before == TokenType.AND
        and i >= 3
        and tokens[i - 3].token_type == TokenType.BETWEEN
        and tokens[i - 2].token_type in (TokenType.NUMBER, TokenType.STRING)
    )


def _ends(after: Token | None, in_lists: list[bool]) -> bool:
    if after is None or after.token_type in ENDS:
        return True
    return after.token_type == TokenType.COMMA and bool(in_lists) and in_lists[-1]


def _placeholder(token: Token, raw: str) -> str | None:
    """The literal's type as Spark reads it from the text, or None to keep it as written."""
    if token.token_type == TokenType.NUMBER and raw == token.text:
        if raw.isdigit():
            value = int(raw)
            return "?INT" if value <= INT_MAX else "?BIGINT" if value <= LONG_MAX else None
        whole, dot, fraction = raw.partition(".")
        if dot and whole.isdigit() and fraction.isdigit():
            return f"?DECIMAL{len(whole)}.{len(fraction)}"
        return None
    if token.token_type == TokenType.STRING and len(raw) <= MAX_STRING + 2:
        return f"?STRING{raw[0]}" if _STRING.match(raw) else None
    return None
