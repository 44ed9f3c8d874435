"""Spark's `TreeNode.toJSON` as a tree: nodes with their class, fields and children.

Spark writes a plan (or an expression) as a pre-order list of nodes, each with `num-children`;
expressions inside a plan node's fields, and subquery plans inside expressions, are nested lists
of the same shape. `PlanNode` rebuilds the tree so a check can skip a whole subtree (a model
view's body) and see every nested expression and subquery.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Fields that describe the node itself, never hold nested trees worth checking.
_STRUCTURAL = frozenset({"class", "num-children", "child", "children", "dataType", "exprId",
                         "qualifier", "metadata", "output", "resultId"})  # fmt: skip


@dataclass(frozen=True, slots=True)
class PlanNode:
    cls: str  # fully qualified JVM class name
    fields: Mapping[str, Any]
    children: tuple[PlanNode, ...]

    @property
    def name(self) -> str:
        return self.cls.rsplit(".", 1)[-1]

    def nested(self) -> Iterator[PlanNode]:
        """Roots of the trees held in this node's fields (expressions, subquery plans)."""
        for key, value in self.fields.items():
            if key not in _STRUCTURAL:
                yield from trees_in(value)


def is_tree(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(v, dict) and "class" in v and "num-children" in v for v in value)
    )


def trees_in(value: Any) -> Iterator[PlanNode]:
    """Every tree in a JSON value: a flattened tree, or lists and objects that hold some."""
    if is_tree(value):
        yield from build_forest(value)
    elif isinstance(value, list):
        for item in value:
            yield from trees_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from trees_in(item)


def build_forest(flat: Sequence[Mapping[str, Any]]) -> Iterator[PlanNode]:
    """Trees from a pre-order list (normally one; several only in odd serializations)."""
    position = 0
    while position < len(flat):
        node, position = _build(flat, position)
        yield node


def _build(flat: Sequence[Mapping[str, Any]], at: int) -> tuple[PlanNode, int]:
    # Iterative: a hostile query may nest thousands of levels, more than Python's stack.
    stack = [_Partial(flat[at])]
    at += 1
    while True:
        top = stack[-1]
        if len(top.children) < top.expected:
            if at >= len(flat):
                raise ValueError("truncated plan")
            stack.append(_Partial(flat[at]))
            at += 1
            continue
        node = PlanNode(str(top.raw["class"]), top.raw, tuple(top.children))
        stack.pop()
        if not stack:
            return node, at
        stack[-1].children.append(node)


class _Partial:
    __slots__ = ("raw", "expected", "children")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw
        self.expected = int(raw.get("num-children", 0))
        self.children: list[PlanNode] = []
