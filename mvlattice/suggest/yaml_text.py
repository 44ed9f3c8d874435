"""A small YAML writer that keeps comments: PyYAML drops them, and the suggested model says in
comments which queries produced each lattice and tile.

Values are what `yaml.safe_load` gives (dicts, lists, strings, numbers, booleans, None); wrap
one in `Commented` to put `# …` lines above its key or list item. Lists of scalars (and lists
of such lists) are written in flow style, `[a, b]`, as the model files are.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")  # fullmatch: "$" would let "a\n" through
_RESERVED = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}
WIDTH = 100  # a flow list longer than this is written one item per line


@dataclass(frozen=True, slots=True)
class Commented:
    value: Any
    comment: tuple[str, ...]


def dump(value: Any, header: tuple[str, ...] = ()) -> str:
    lines = [_comment(c, 0) for c in header]
    lines += _block(value, 0)
    return "\n".join(lines) + "\n"


def scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
            return str(int(value))
        return repr(value) if math.isfinite(value) else json.dumps(str(value))
    text = str(value)
    if _PLAIN.fullmatch(text) and text.lower() not in _RESERVED:
        return text
    # A JSON string is a YAML double-quoted scalar; escape what YAML reads as breaks or controls
    quoted = json.dumps(text, ensure_ascii=False)
    return "".join(c if c.isprintable() else _escape(c) for c in quoted)


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _flow(value: Any) -> str | None:
    """Flow text for scalars, {} and [], and lists of flowable values; None otherwise."""
    if isinstance(value, Commented):
        return None
    if isinstance(value, Mapping):
        return "{}" if not value else None
    if isinstance(value, list | tuple):
        parts = [_flow(v) for v in value]
        if any(p is None for p in parts) or any(isinstance(v, Mapping) for v in value):
            return None
        return "[" + ", ".join(p for p in parts if p is not None) + "]"
    return scalar(value)


def _fitting(flow: str | None, used: int, value: Any) -> str | None:
    """The flow text, unless it is a non-empty list too wide for one line."""
    too_wide = flow is not None and used + len(flow) > WIDTH
    return None if too_wide and isinstance(value, list | tuple) and value else flow


def _comment(text: str, indent: int) -> str:
    return " " * indent + ("# " + text if text else "#")


def _unwrap(value: Any) -> tuple[Any, tuple[str, ...]]:
    if isinstance(value, Commented):
        return value.value, value.comment
    return value, ()


def _block(value: Any, indent: int) -> list[str]:
    value, _ = _unwrap(value)
    if isinstance(value, Mapping):
        return _mapping(value, indent)
    if isinstance(value, list | tuple):
        return _sequence(value, indent)
    return [" " * indent + scalar(value)]


def _mapping(value: Mapping, indent: int) -> list[str]:
    lines: list[str] = []
    pad = " " * indent
    for key, raw in value.items():
        item, comment = _unwrap(raw)
        lines += [_comment(c, indent) for c in comment]
        flow = _fitting(_flow(item), indent + len(str(key)) + 2, item)
        if flow is not None:
            lines.append(f"{pad}{scalar(key)}: {flow}")
        else:
            lines.append(f"{pad}{scalar(key)}:")
            lines += _block(item, indent + 2)
    return lines


def _sequence(value: list | tuple, indent: int) -> list[str]:
    lines: list[str] = []
    pad = " " * indent
    for raw in value:
        item, comment = _unwrap(raw)
        lines += [_comment(c, indent) for c in comment]
        flow = _fitting(_flow(item), indent + 2, item)
        if flow is not None:
            lines.append(f"{pad}- {flow}")
            continue
        inner = _block(item, indent + 2)
        lines.append(f"{pad}- {inner[0][indent + 2 :]}")
        lines += inner[1:]
    return lines
