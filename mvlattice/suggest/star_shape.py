"""The shape of a star: a root table and the paths of many-to-one steps out of it.

A node is named by its path from the root, so two queries that reach `product_class` through
`product` on the same columns name the same node, whatever aliases they use; a table reached by
two different paths (a self-join, order and ship dates on one time table) is two nodes. Merging
stars (Calcite's "evolve") is then the union of their paths.
"""

from __future__ import annotations

from dataclasses import dataclass

from mvlattice.suggest.table_catalog import TableKey


@dataclass(frozen=True, slots=True, order=True)
class Step:
    """A many-to-one join out of a node: to `table`, `parent_columns` = `columns`."""

    table: TableKey
    parent_columns: tuple[str, ...]
    columns: tuple[str, ...]

    @staticmethod
    def of(table: TableKey, parent_columns: tuple[str, ...], columns: tuple[str, ...]) -> Step:
        pairs = sorted(zip(parent_columns, columns, strict=True), key=lambda p: p[0].lower())
        return Step(table, tuple(p for p, _ in pairs), tuple(c for _, c in pairs))

    def key(self) -> tuple:
        """Case-insensitive identity (SQL names compare without case here)."""
        return (
            tuple(x.lower() for x in self.table),
            tuple(c.lower() for c in self.parent_columns),
            tuple(c.lower() for c in self.columns),
        )


Path = tuple[Step, ...]


@dataclass(frozen=True, slots=True)
class Shape:
    root: TableKey
    paths: frozenset[Path] = frozenset()  # prefix-closed; the root's path () is implied

    def __post_init__(self) -> None:
        for path in self.paths:
            if path[:-1] and path[:-1] not in self.paths:
                raise ValueError("a shape's paths must be closed under prefixes")

    def children(self, path: Path) -> tuple[Path, ...]:
        found = [p for p in self.paths if len(p) == len(path) + 1 and p[:-1] == path]
        return tuple(sorted(found, key=_sort_key))

    def ordered(self) -> tuple[Path, ...]:
        """Every node's path, root first, depth-first in name order."""
        out: list[Path] = [()]
        for child in self.children(()):
            out.extend(self._subtree(child))
        return tuple(out)

    def _subtree(self, path: Path) -> list[Path]:
        out = [path]
        for child in self.children(path):
            out.extend(self._subtree(child))
        return out

    def union(self, other: Shape) -> Shape:
        if _lower(self.root) != _lower(other.root):
            raise ValueError("only stars on the same root table merge")
        mine: dict[tuple, Path] = {(): (), **{_path_key(p): p for p in self.paths}}
        for path in sorted(other.paths, key=len):
            key = _path_key(path)
            if key not in mine:
                mine[key] = mine[key[:-1]] + path[-1:]  # keep this shape's spelling of the prefix
        return Shape(self.root, frozenset(p for p in mine.values() if p))

    def same(self, other: Shape) -> bool:
        return self.identity() == other.identity()

    def identity(self) -> tuple:
        return (_lower(self.root), frozenset(_path_key(p) for p in self.paths))

    def table(self, path: Path) -> TableKey:
        return path[-1].table if path else self.root

    def describe(self) -> str:
        """Calcite's notation: `emp (dept:deptno)`, `sales (product:product_id (…) time:…)`."""
        return self.root[1] + self._describe_children(())

    def _describe_children(self, path: Path) -> str:
        kids = self.children(path)
        if not kids:
            return ""
        parts = [
            f"{k[-1].table[1]}:{','.join(k[-1].parent_columns)}" + self._describe_children(k)
            for k in kids
        ]
        return " (" + " ".join(parts) + ")"


def _lower(key: TableKey) -> tuple[str, str]:
    return (key[0].lower(), key[1].lower())


def _path_key(path: Path) -> tuple:
    return tuple(step.key() for step in path)


def _sort_key(path: Path) -> tuple:
    return path[-1].key()
