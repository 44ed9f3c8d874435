"""The suggested model spliced into the user's own YAML text (`suggest --model M -o OUT`).

Every byte the suggestion does not change is kept — comments, blank lines, key order, quoting,
flow or block style — and what it adds is inserted as new text where it belongs, indented like
the blocks around it. PyYAML drops comments, so the text is not re-serialized; instead the new
document is walked against the nodes of the old text (`yaml.compose` marks each node's index,
line and column): a value left alone is kept; a mapping that gained keys gets them after its
last key; a list that grew gets its new items after its last item; any other change replaces
that one node's text. A round-trip library (ruamel.yaml) would do the same for one more
dependency; the model's changes are all appends, which this small walk covers.

Shapes where splicing is unsafe are refused with a reason (the caller re-serializes): anchors
and aliases, merge keys, a repeated key, a flow-style `lattices: [...]` that would change. The
spliced text must read back as the new document, else it is refused too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import yaml

from mvlattice.suggest.yaml_text import (
    DEFAULT,
    WIDTH,
    Layout,
    block,
    comment_line,
    flow,
    inline,
    mapping_lines,
    plain,
    scalar,
    sequence_lines,
    under,
    unwrap,
)


@dataclass(frozen=True, slots=True)
class Kept:
    """The spliced text, or None and why formatting cannot be kept."""

    text: str | None
    reason: str = ""


def keep_format(text: str, document: Mapping[str, Any]) -> Kept:
    """`text` (a YAML model) changed into `document` (values may be `Commented`), keeping the
    text's own formatting wherever the document does not change it."""
    try:
        root = _compose(text)
        splicer = _Splicer(text, layout_of(root), root)
        splicer.visit(root, document, _Place("root", 0, 0, ()))
        out = splicer.result()
        same = yaml.safe_load(out) == plain(document)
    except _Unsafe as exc:
        return Kept(None, str(exc))
    except yaml.YAMLError:
        same = False
    if not same:  # a bug of the walk, never the user's: the caller falls back, safely
        return Kept(None, "the spliced text did not read back as the suggested model")
    return Kept(out)


class _Unsafe(Exception):  # internal signal: becomes Kept's reason
    pass


_MERGE = "tag:yaml.org,2002:merge"


@dataclass(frozen=True, slots=True)
class _Place:
    """Where a node sits: the root, a block mapping's value (`column` of its key, whose text
    ends at `key_end`), a block list's item (`column` of its `-`), or inside a flow collection."""

    kind: str  # root | key | item | flow
    column: int
    key_end: int
    path: tuple[Any, ...]


def _compose(text: str) -> yaml.Node:
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise _Unsafe("the file uses anchors and aliases (&name, *name)")
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise _Unsafe(f"the file does not parse as YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(root, yaml.MappingNode):
        raise _Unsafe("the file's root is not a mapping")
    # constructing a node with merge keys rewrites the node itself (PyYAML flattens it)
    if any(
        k.tag == _MERGE for n in _nodes(root) if isinstance(n, yaml.MappingNode) for k, _ in n.value
    ):
        raise _Unsafe("the file uses merge keys (<<)")
    return root


def layout_of(root: yaml.Node) -> Layout:
    """The indentation the file itself uses (the first example of each step), else 2."""
    found: dict[str, int] = {}
    for node in _nodes(root):
        if _is_block(node, yaml.MappingNode):
            for key, value in node.value:
                if _is_block(value, yaml.MappingNode):
                    found.setdefault("mapping", value.start_mark.column - key.start_mark.column)
                if _is_block(value, yaml.SequenceNode):
                    found.setdefault("sequence", value.start_mark.column - key.start_mark.column)
        elif _is_block(node, yaml.SequenceNode):
            first = node.value[0]
            if first.start_mark.line == node.start_mark.line:
                found.setdefault("dash", first.start_mark.column - node.start_mark.column)
    try:
        return Layout(**found)
    except ValueError:  # an odd file (a one-space `-x`?): its additions use the default
        return DEFAULT


def _nodes(node: yaml.Node) -> list[yaml.Node]:
    out, stack = [], [node]
    while stack:
        current = stack.pop()
        out.append(current)
        if isinstance(current, yaml.MappingNode):
            stack.extend(n for pair in reversed(current.value) for n in reversed(pair))
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(reversed(current.value))
    return out


def _is_block(node: yaml.Node, kind: type[yaml.CollectionNode]) -> bool:
    return isinstance(node, kind) and not node.flow_style and bool(node.value)


def _last(node: yaml.Node) -> yaml.Node:
    """The node whose text ends a block collection (itself, for a scalar or flow collection)."""
    while isinstance(node, yaml.MappingNode | yaml.SequenceNode) and not node.flow_style:
        last = node.value[-1]
        node = last[1] if isinstance(last, tuple) else last
    return node


def _value(node: yaml.Node) -> Any:
    """What the node reads as (PyYAML's safe constructor, for this node alone)."""
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_document(node)
    finally:
        loader.dispose()


class _Splicer:
    """Collects edits (start, end, new text) over the original text, then applies them."""

    def __init__(self, text: str, layout: Layout, root: yaml.Node) -> None:
        self.text = text
        self.layout = layout
        # the file's one-line flow lists and mappings, to write a copy as the user wrote it
        self.flows = [
            (_value(n), text[n.start_mark.index : n.end_mark.index])
            for n in _nodes(root)
            if isinstance(n, yaml.CollectionNode)
            and n.flow_style
            and n.value
            and n.start_mark.line == n.end_mark.line
        ]
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.edits: list[tuple[int, int, str]] = []
        self.ended = False  # a line break was added after a last line that had none

    def visit(self, node: yaml.Node, new: Any, place: _Place) -> None:
        value, _ = unwrap(new)
        if _value(node) == plain(value):
            return
        grows = isinstance(node, yaml.SequenceNode) and isinstance(value, list)
        if grows and place.path[-1:] == ("lattices",) and node.flow_style:
            raise _Unsafe("'lattices:' is a flow-style list ([...]) and would change")
        if isinstance(node, yaml.MappingNode) and isinstance(value, Mapping):
            if self._mapping(node, value, place):
                return
        elif grows and len(value) >= len(node.value):
            self._sequence(node, value, place)
            return
        self._replace(node, value, place)

    def _mapping(self, node: yaml.MappingNode, new: Mapping, place: _Place) -> bool:
        """Walks a mapping that keeps its keys, in order, and may gain more; False otherwise."""
        pairs = [(self._key(k), k, v) for k, v in node.value]
        keys = [key for key, _, _ in pairs]
        if len(set(keys)) != len(keys):
            raise _Unsafe("a mapping in the file repeats a key")
        if list(new)[: len(keys)] != keys:
            return False
        for key, key_node, value_node in pairs:
            self.visit(value_node, new[key], self._inside(node, key_node, place, key))
        added = {k: new[k] for k in list(new)[len(keys) :]}
        if added:
            self._add_keys(node, added)
        return True

    def _key(self, node: yaml.Node) -> Any:
        key = _value(node)
        if not isinstance(key, str | int | float | bool) and key is not None:
            raise _Unsafe("the file has a key that is not a plain value")
        return key

    def _sequence(self, node: yaml.SequenceNode, new: list, place: _Place) -> None:
        for i, (item_node, item) in enumerate(zip(node.value, new, strict=False)):
            self.visit(item_node, item, self._inside(node, item_node, place, i))
        added = new[len(node.value) :]
        if added:
            self._add_items(node, added)

    def _inside(self, parent: yaml.Node, at: yaml.Node, place: _Place, step: Any) -> _Place:
        path = (*place.path, step)
        if parent.flow_style or place.kind == "flow":
            return _Place("flow", 0, 0, path)
        if isinstance(parent, yaml.MappingNode):
            return _Place("key", at.start_mark.column, at.end_mark.index, path)
        return _Place("item", parent.start_mark.column, 0, path)

    def _add_keys(self, node: yaml.MappingNode, added: Mapping) -> None:
        if node.flow_style:
            if "lattices" in added:
                raise _Unsafe("lattices would go into a flow-style mapping ({...})")
            self._add_flow(node, [f"{scalar(k)}: {self._flow(v)}" for k, v in added.items()])
            return
        column, lines = node.start_mark.column, []
        for key, value in added.items():
            known = self._known(value)
            if known is None:
                lines += mapping_lines({key: value}, column, self.layout)
            else:
                lines += [comment_line(c, column) for c in unwrap(value)[1]]
                lines.append(f"{' ' * column}{scalar(key)}: {known}")
        self._add_lines(node, lines)

    def _known(self, value: Any) -> str | None:
        """The file's own text of an equal flow list or mapping (a pinned tile's `measures`
        copy `defaultMeasures`): the copy is written as the user wrote the original."""
        wanted = plain(value)
        if not isinstance(wanted, list | dict) or not wanted:
            return None
        return next((text for found, text in self.flows if found == wanted), None)

    def _flow(self, value: Any) -> str:
        known = self._known(value)
        return known if known is not None else flow(value)

    def _add_items(self, node: yaml.SequenceNode, added: list) -> None:
        if node.flow_style:
            self._add_flow(node, [self._flow(v) for v in added])
            return
        lines = sequence_lines(added, node.start_mark.column, self._dash_layout(node))
        self._add_lines(node, lines)

    def _dash_layout(self, node: yaml.SequenceNode) -> Layout:
        """The list's own gap from `-` to its items' text, where it shows one."""
        first = node.value[0]
        gap = first.start_mark.column - node.start_mark.column
        same_line = first.start_mark.line == node.start_mark.line
        return replace(self.layout, dash=gap) if same_line and gap >= 2 else self.layout

    def _add_flow(self, node: yaml.Node, items: list[str]) -> None:
        """After a flow collection's last item (its own commas and comments stay as they are);
        an item that would pass the width starts a line of its own, indented under the key."""
        if node.value:
            last = node.value[-1]
            at = (last[1] if isinstance(last, tuple) else last).end_mark.index
        else:
            at = node.start_mark.index + 1  # just inside `[` or `{`
        line = self.text[self.text.rfind("\n", 0, at) + 1 : at]
        pad = " " * (len(line) - len(line.lstrip()) + self.layout.mapping)
        used, parts = len(line), []
        for i, item in enumerate(items):
            sep = ", " if node.value or i else ""
            if used + len(sep) + len(item) > WIDTH and used > len(pad):
                sep, used = sep.rstrip() + "\n" + pad, len(pad)
            else:
                used += len(sep)
            parts.append(sep + item)
            used += len(item)
        self._edit(at, at, "".join(parts))

    def _add_lines(self, node: yaml.Node, lines: list[str]) -> None:
        """Whole lines, after the line where the block's content ends (its trailing comment
        stays on it; comments and blank lines after it stay after), or after a block scalar's
        own trailing lines (`|+` keeps them in its value)."""
        leaf = _last(node)
        at = leaf.end_mark.index
        if not (isinstance(leaf, yaml.ScalarNode) and leaf.style in ("|", ">")):
            at = self._end(leaf)
        if self.text[at - 1 : at] != "\n":  # not at a line's start: after the line
            newline = self.text.find("\n", at)
            at = len(self.text) if newline < 0 else newline + 1
        if at == len(self.text) and not self.text.endswith("\n") and not self.ended:
            self._edit(at, at, "\n")  # the file's last line had no line break: once, first
            self.ended = True
        self._edit(at, at, "\n".join(lines) + "\n")

    def _replace(self, node: yaml.Node, new: Any, place: _Place) -> None:
        start, end = node.start_mark.index, self._end(node)
        if place.kind == "root":
            raise _Unsafe("the document would change at its root")
        if place.kind == "flow":
            self._edit(start, end, flow(new))
        elif place.kind == "item":
            column = max(node.start_mark.column, place.column + 2)
            self._edit(start, end, self._in_place(new, column, start))
        else:
            self._replace_value(node, new, place, (start, end))

    def _replace_value(
        self, node: yaml.Node, new: Any, place: _Place, span: tuple[int, int]
    ) -> None:
        """A block mapping's value: on the key's line if it fits, else as a block below."""
        start, end = span
        column = node.start_mark.column
        was_block = isinstance(node, yaml.MappingNode | yaml.SequenceNode) and not node.flow_style
        text = inline(new, column)
        if text is None and was_block and (column > place.column or isinstance(new, list)):
            self._edit(start, end, self._in_place(new, column, start))  # at the old block's place
            return
        colon = self.text.find(":", place.key_end, start + 1)
        if colon < 0:
            raise _Unsafe("a key's ':' was not found where expected")
        if text is not None:
            self._edit(colon + 1, end, " " + text)
            return
        lines = block(new, under(new, place.column, self.layout), self.layout)
        self._edit(colon + 1, end, "\n" + "\n".join(lines))

    def _in_place(self, new: Any, column: int, start: int) -> str:
        """Text for a value starting at `start`, in column `column` (its own first line)."""
        text = inline(new, column)
        if text is None:
            text = "\n".join(block(new, column, self.layout))[column:]
        before = self.text[start - 1] if start > 0 else "\n"
        return text if before in " \t\r\n" else " " + text

    def _end(self, node: yaml.Node) -> int:
        """Where the node's own text ends: a block collection's ends with its last value (its
        end mark is the next token, past comments); a block scalar's without its line breaks."""
        node = _last(node)
        end = node.end_mark.index
        while end > node.start_mark.index and self.text[end - 1] in " \t\r\n":
            end -= 1
        return end

    def _edit(self, start: int, end: int, text: str) -> None:
        self.edits.append((start, end, text.replace("\n", self.newline)))

    def result(self) -> str:
        """The text with every edit; at one position, the edit made first comes first."""
        order = sorted(range(len(self.edits)), key=lambda i: (self.edits[i][0], i), reverse=True)
        out, limit = self.text, len(self.text)
        for i in order:
            start, end, text = self.edits[i]
            if end > limit:
                raise _Unsafe("two changes overlap")
            out, limit = out[:start] + text + out[end:], start
        return out
