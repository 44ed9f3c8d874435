"""JSON as people and old tools write it: unquoted keys, 'single quotes', trailing commas,
// and /* */ comments (the FoodMart query set's older releases are written like this).

The text is rewritten token by token into strict JSON and handed to `json.loads`, so numbers,
nesting and error positions behave as in JSON.
"""

from __future__ import annotations

import json
import re
from typing import Any

_TOKEN = re.compile(
    r"""
    (?P<dq>"(?:[^"\\]|\\.)*")
   |(?P<sq>'(?:[^'\\]|\\.)*')
   |(?P<comment>//[^\n]*|/\*.*?\*/)
   |(?P<num>-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
   |(?P<word>[A-Za-z_$][\w$]*)
   |(?P<ws>\s+)
   |(?P<punct>[{}\[\],:])
    """,
    re.S | re.X,
)
_LITERALS = {"true", "false", "null"}
_ESCAPE = re.compile(r"\\(.)|\"", re.S)


def loads(text: str) -> Any:
    """Parse lenient JSON; raises json.JSONDecodeError (with a position) when it is not."""
    return json.loads(to_strict(text))


def to_strict(text: str) -> str:
    """The same document as strict JSON text."""
    out: list[str] = []
    position = 0
    for match in _TOKEN.finditer(text):
        if match.start() != position:
            break
        position = match.end()
        kind, value = match.lastgroup, match.group()
        if kind in ("ws", "comment"):
            continue
        if kind == "punct" and value in "]}" and out and out[-1] == ",":
            out.pop()  # a trailing comma
        out.append(_strict_token(kind, value))
    if position != len(text):
        raise json.JSONDecodeError("unexpected character", text, position)
    return "".join(out)


def _strict_token(kind: str | None, value: str) -> str:
    if kind == "sq":
        return '"' + _ESCAPE.sub(_requote, value[1:-1]) + '"'
    if kind == "word" and value not in _LITERALS:
        return json.dumps(value)
    return value


def _requote(match: re.Match[str]) -> str:
    escaped = match.group(1)
    if escaped is None:
        return '\\"'  # a bare " inside '…'
    return "'" if escaped == "'" else "\\" + escaped
