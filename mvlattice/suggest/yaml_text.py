"""A small YAML writer that keeps comments: PyYAML drops them, and the suggested model says in
comments which queries produced each lattice and tile.

Values are what `yaml.safe_load` gives (dicts, lists, strings, numbers, booleans, None); wrap
one in `Commented` to put `# …` lines above its key or list item. Lists of scalars (and lists
of such lists) are written in flow style, `[a, b]`, as the model files are. A `Layout` gives the
indentation, so text spliced into a user's file (`keep_format`) matches the blocks around it.
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


@dataclass(frozen=True, slots=True)
class Layout:
    """Indentation: of a block mapping under its key, of a block list's `-` under its key
    (0: the list sits at the key's column), and from a `-` to its item's text."""

    mapping: int = 2
    sequence: int = 2
    dash: int = 2

    def __post_init__(self) -> None:
        if self.mapping < 1 or self.sequence < 0 or self.dash < 2:
            raise ValueError(f"not a YAML block layout: {self}")


DEFAULT = Layout()


def dump(value: Any, header: tuple[str, ...] = ()) -> str:
    lines = [comment_line(c, 0) for c in header]
    lines += block(value, 0)
    return "\n".join(lines) + "\n"


def plain(value: Any) -> Any:
    """The value without its `Commented` wrappers (what reading the dumped text gives)."""
    value, _ = unwrap(value)
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def flow(value: Any) -> str:
    """One-line flow text of any value (comments dropped): for a flow collection's items."""
    value, _ = unwrap(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{scalar(k)}: {flow(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(flow(v) for v in value) + "]"
    return scalar(value)


def inline(value: Any, used: int) -> str | None:
    """The value's text on the line of its key or `-` (`used` columns taken), if it goes there."""
    value, _ = unwrap(value)
    return _fitting(_flow(value), used, value)


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


def comment_line(text: str, indent: int) -> str:
    return " " * indent + ("# " + text if text else "#")


def unwrap(value: Any) -> tuple[Any, tuple[str, ...]]:
    if isinstance(value, Commented):
        return value.value, value.comment
    return value, ()


def block(value: Any, indent: int, layout: Layout = DEFAULT) -> list[str]:
    """Lines of a block value whose first line starts at column `indent`."""
    value, _ = unwrap(value)
    if isinstance(value, Mapping):
        return mapping_lines(value, indent, layout)
    if isinstance(value, list | tuple):
        return sequence_lines(value, indent, layout)
    return [" " * indent + scalar(value)]


def under(value: Any, key_column: int, layout: Layout = DEFAULT) -> int:
    """The column of a block value under a key at `key_column`."""
    value, _ = unwrap(value)
    step = layout.sequence if isinstance(value, list | tuple) else layout.mapping
    return key_column + step


def mapping_lines(value: Mapping, indent: int, layout: Layout = DEFAULT) -> list[str]:
    lines: list[str] = []
    pad = " " * indent
    for key, raw in value.items():
        item, comment = unwrap(raw)
        lines += [comment_line(c, indent) for c in comment]
        text = _fitting(_flow(item), indent + len(str(key)) + 2, item)
        if text is not None:
            lines.append(f"{pad}{scalar(key)}: {text}")
        else:
            lines.append(f"{pad}{scalar(key)}:")
            lines += block(item, under(item, indent, layout), layout)
    return lines


def sequence_lines(value: list | tuple, indent: int, layout: Layout = DEFAULT) -> list[str]:
    lines: list[str] = []
    dash = "-".ljust(layout.dash)
    pad = " " * indent
    for raw in value:
        item, comment = unwrap(raw)
        lines += [comment_line(c, indent) for c in comment]
        text = _fitting(_flow(item), indent + layout.dash, item)
        if text is not None:
            lines.append(f"{pad}{dash}{text}")
            continue
        inner = block(item, indent + layout.dash, layout)
        lines.append(f"{pad}{dash}{inner[0][indent + layout.dash :]}")
        lines += inner[1:]
    return lines
