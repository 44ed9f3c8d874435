"""Reading model documents (YAML or JSON) and collecting located problems in them."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from mvlattice.errors import ModelError, Problem


def read_document(path: Path) -> Any:
    """Parse a model file; YAML is a superset of JSON, but JSON files get JSON's messages."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ModelError([Problem(str(path), "", "file not found")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError([Problem(str(path), "", f"cannot read file: {exc}")]) from None
    try:
        if path.suffix.lower() == ".json":
            _check_json_depth(text)
            return json.loads(text)
        return yaml.load(text, Loader=_DepthLimitedLoader)  # a SafeLoader
    except _TooDeep as exc:
        where = f"line {exc.line}, column {exc.column}"
        raise ModelError([Problem(str(path), where, _TOO_DEEP)]) from None
    except RecursionError:  # the checks above should make this unreachable; never a traceback
        raise ModelError([Problem(str(path), "", _TOO_DEEP)]) from None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise ModelError([Problem(str(path), where, f"invalid JSON: {exc.msg}")]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        reason = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ModelError([Problem(str(path), where, f"invalid YAML: {reason}")]) from None


# Real models nest about 7 levels (schemas > tables > foreignKeys > columns). Python's parsers
# recurse once per level (json's C scanner, PyYAML's composer) and die of RecursionError near
# 1,000, so a document is refused far below that, with a location.
MAX_DEPTH = 64
_TOO_DEEP = f"model nests deeper than {MAX_DEPTH} levels (lists and mappings inside each other)"


class _TooDeep(Exception):  # internal signal, becomes a ModelError
    def __init__(self, line: int, column: int) -> None:
        super().__init__(f"line {line}, column {column}")
        self.line, self.column = line, column


class _DepthLimitedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing nodes nested deeper than MAX_DEPTH (its composer is
    recursive; construction is not, so composing is the one place to count)."""

    depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        nesting = self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent)
        if nesting and self.depth >= MAX_DEPTH:
            mark = self.peek_event().start_mark
            raise _TooDeep(mark.line + 1, mark.column + 1)
        self.depth += nesting
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= nesting


def _check_json_depth(text: str) -> None:
    """Raise _TooDeep at the first bracket nested deeper than MAX_DEPTH, without recursing
    (brackets inside strings do not count; malformed JSON is left to json's own messages)."""
    depth, in_string, escaped = 0, False, False
    for i, c in enumerate(text):
        if in_string:
            escaped, in_string = (not escaped and c == "\\"), (escaped or c != '"')
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line_start = text.rfind("\n", 0, i) + 1
                raise _TooDeep(text.count("\n", 0, i) + 1, i - line_start + 1)
        elif c in "]}":
            depth -= 1


def suggest(name: str, choices: Iterable[str]) -> str:
    """' (did you mean 'x'?)' for the closest choice, or '' when nothing is close."""
    pool = list(choices)
    close = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in pool}
        close = [lowered[name.lower()]] if name.lower() in lowered else []
    return f" (did you mean '{close[0]}'?)" if close else ""


@dataclass
class Problems:
    """Accumulates every problem of one document so they are reported together."""

    file: str
    items: list[Problem] = field(default_factory=list)

    def add(self, path: str, message: str) -> None:
        self.items.append(Problem(self.file, path, message))

    def raise_if_any(self) -> None:
        if self.items:
            raise ModelError(self.items)

    def mapping(self, value: Any, path: str, what: str) -> Mapping[str, Any] | None:
        if isinstance(value, Mapping):
            return value
        self.add(path, f"{what} must be a mapping, got {_kind(value)}")
        return None

    def check_keys(
        self,
        value: Mapping[str, Any],
        path: str,
        allowed: Iterable[str],
        required: Iterable[str] = (),
    ) -> None:
        allowed = tuple(allowed)
        for key in value:
            if key not in allowed:
                self.add(_join(path, str(key)), f"unknown key '{key}'{suggest(str(key), allowed)}")
        for key in required:
            if key not in value:
                self.add(path, f"missing required key '{key}'")

    def string(self, value: Any, path: str, what: str = "value") -> str | None:
        if isinstance(value, str) and value.strip():
            return value
        self.add(path, f"{what} must be a non-empty string, got {_kind(value)}")
        return None

    def string_list(self, value: Any, path: str, what: str = "value") -> tuple[str, ...]:
        if isinstance(value, str):
            return (value,)
        if not isinstance(value, list):
            self.add(path, f"{what} must be a list of strings, got {_kind(value)}")
            return ()
        out = []
        for i, item in enumerate(value):
            text = self.string(item, f"{path}[{i}]", what)
            if text is not None:
                out.append(text)
        return tuple(out)

    def boolean(self, value: Any, path: str) -> bool | None:
        if isinstance(value, bool):
            return value
        self.add(path, f"must be true or false, got {_kind(value)}")
        return None

    def number(self, value: Any, path: str, minimum: float | None = None) -> float | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.add(path, f"must be a number, got {_kind(value)}")
            return None
        if minimum is not None and value < minimum:
            self.add(path, f"must be at least {minimum:g}, got {value}")
            return None
        return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def child(path: str, key: str | int) -> str:
    """The document path of a key or list index below `path`."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return _join(path, key)


def _kind(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, str):
        return f"a string ('{value}')" if len(value) < 40 else "a string"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__
