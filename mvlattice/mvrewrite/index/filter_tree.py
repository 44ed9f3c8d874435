"""GL01 §4's filter tree: the views a query block could match, found without matching them.

The tree has one level per filter condition, declared once in `LEVELS`; each level's nodes
are lattice-of-sets indexes (`set_index`) keyed by one of the view's keys (`filter_keys`), so
a query block descends only into the partitions whose key passes that level's test, and each
view sits in exactly one leaf. The levels, in the order they are searched:

    hub           the view's hub tables are a subset of the query's tables          (§4.2.1)
    tables        the view shares a table with the query; which tables it lacks (joined back)
    grouping      an aggregated view only serves a grouped query                    (§4.2.4)
    outputs       the view outputs every column the query reads from it (§4.2.2), and an
                  aggregated view stores or can compute every aggregate it needs (§4.2.4)
                  — one index over both: columns are (table, column) pairs, aggregates
                  (function, argument) pairs, so the two never collide
    ranges        the view constrains no string/boolean column the query leaves free (§4.2.3)
    union ranges  the view constrains at most one more column (read the rest by a union)
    residuals     every residual predicate of the view is one of the query's        (§4.2.5);
                  the view outputs the columns of the query's predicates it lacks

Every test is a necessary condition of full matching (`match`), loosened wherever the
matcher has a way around it (see `filter_keys`), so a view that would match is never left out.
Views are added and removed one at a time (a refresh, a new tile, a dropped tile).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from mvlattice.mvrewrite.index.filter_keys import ViewKeys, groups_of, view_keys
from mvlattice.mvrewrite.index.filter_query import QueryKeys
from mvlattice.mvrewrite.index.set_index import SetIndex
from mvlattice.mvrewrite.match.keys import Keys
from mvlattice.mvrewrite.match.outer_joins import Joined, as_inner, lossless, outer_tables
from mvlattice.mvrewrite.model_context import RewriteContext
from mvlattice.mvrewrite.views import View
from mvlattice.sql.spjg import Spjg

GROUPED: frozenset[str] = frozenset({"grouped"})
ROWS: frozenset[str] = frozenset()
Node = SetIndex[Any]  # inner levels hold SetIndexes, the last one buckets of handles


@dataclass(frozen=True, slots=True)
class Probe:
    """A query block on its way down: its keys, and the partition the levels above chose."""

    query: QueryKeys
    tables: frozenset[tuple[str, int]] = frozenset()
    view_grouped: bool = False
    outputs: frozenset = frozenset()
    ranges: frozenset = frozenset()


Search = Callable[[Node, Probe], Iterator[tuple[frozenset, Probe]]]


@dataclass(frozen=True, slots=True)
class Level:
    name: str
    key: Callable[[ViewKeys], frozenset]
    search: Search


def _hub(node: Node, probe: Probe) -> Iterator[tuple[frozenset, Probe]]:
    for key in node.subsets_of(probe.query.tables):
        yield key, probe


def _tables(node: Node, probe: Probe) -> Iterator[tuple[frozenset, Probe]]:
    counts = probe.query.counts
    for key in node:
        if any(table in counts for table, _ in key):
            yield key, Probe(probe.query, key)


def _grouping(node: Node, probe: Probe) -> Iterator[tuple[frozenset, Probe]]:
    if ROWS in node:
        yield ROWS, probe
    if GROUPED in node and probe.query.grouped:
        yield GROUPED, Probe(probe.query, probe.tables, True)


def _outputs(node: Node, probe: Probe) -> Iterator[tuple[frozenset, Probe]]:
    query, tables, grouped = probe.query, probe.tables, probe.view_grouped
    needed: frozenset[Hashable] = query.outputs(tables, grouped)
    if grouped:
        needed |= query.aggregates(tables)
    for key in node.supersets_of(needed):
        yield key, Probe(query, tables, grouped, key)


def _ranges(node: Node, probe: Probe) -> Iterator[tuple[frozenset, Probe]]:
    for key in node.subsets_of(probe.query.ranges):
        yield key, replace(probe, ranges=key) if key else probe


def _union_ranges(node: Node, probe: Probe) -> Iterator[tuple[frozenset, Probe]]:
    for key in node.within(probe.query.loose_ranges, 1):
        yield key, replace(probe, ranges=probe.ranges | key) if key else probe


def _residuals(node: Node, probe: Probe) -> Iterator[tuple[frozenset, Probe]]:
    """Also: the view outputs the columns of the query's predicates it does not apply."""
    query = probe.query
    for key in node.subsets_of(query.residuals):
        if query.compensation(probe.tables, probe.ranges, key) <= probe.outputs:
            yield key, probe


LEVELS: tuple[Level, ...] = (
    Level("hub", lambda k: k.hub, _hub),
    Level("tables", lambda k: k.tables, _tables),
    Level("grouping", lambda k: GROUPED if k.grouped else ROWS, _grouping),
    Level("outputs", lambda k: k.outputs | k.aggregates, _outputs),
    Level("ranges", lambda k: k.strict_ranges, _ranges),
    Level("union ranges", lambda k: k.split_ranges, _union_ranges),
    Level("residuals", lambda k: k.residuals, _residuals),
)


class FilterTree:
    """Views (each under a caller's handle) indexed for `candidates(query)`."""

    def __init__(self, keys: Keys) -> None:
        self.keys = keys
        self._groups = groups_of(keys)
        self._root: Node = SetIndex()
        self._paths: dict[Hashable, tuple[tuple[frozenset, ...], int]] = {}
        self._next = 0
        self._outer: dict[Hashable, frozenset[Joined]] = {}  # views with outer joins

    def __len__(self) -> int:
        return len(self._paths)

    def __contains__(self, handle: object) -> bool:
        return handle in self._paths

    def add(self, handle: Hashable, view: View) -> bool:
        """Index `view` under `handle` (replacing what the handle held). False when full
        matching always rejects the view (its SQL is not understood, or has HAVING, LIMIT
        or DISTINCT over groups): it is not indexed and never a candidate."""
        self.remove(handle)
        if view.block is not None and view.block.outer:
            # An inner-join query is matched by the view's LEFT joins made inner (a FULL join:
            # never), so those are the keys; a query with outer joins by the same joins.
            self._outer[handle] = outer_tables(lossless(view.block, self.keys))
            inner = as_inner(view.block)
            if inner is None:
                self._paths[handle] = ((), self._next)
                self._next += 1
                return True
            view = replace(view, block=inner)
        found = view_keys(view, self.keys, self._groups)
        if found is None:
            self._outer.pop(handle, None)
            return False
        path = tuple(level.key(found) for level in LEVELS)
        node: Any = self._root  # SetIndexes down to the last level's bucket (a dict)
        for depth, key in enumerate(path):
            last = depth == len(LEVELS) - 1
            node = node.setdefault(key, dict if last else SetIndex)
        node[handle] = None
        self._paths[handle] = (path, self._next)
        self._next += 1
        return True

    def remove(self, handle: Hashable) -> bool:
        """Forget the view under `handle`; False if there was none."""
        found = self._paths.pop(handle, None)
        if found is None:
            return False
        path = found[0]
        self._outer.pop(handle, None)
        if not path:
            return True
        nodes = [self._root]
        for key in path[:-1]:
            nodes.append(nodes[-1][key])
        bucket = nodes[-1][path[-1]]
        del bucket[handle]
        if not bucket:
            for node, key in zip(reversed(nodes), reversed(path), strict=True):
                node.pop(key)
                if len(node):
                    break
        return True

    def candidates(self, query: Spjg) -> list[Hashable]:
        """Handles of the views that pass every level, in the order they were added."""
        found: list[Hashable] = []
        if query.outer:  # the matcher's query: lossless LEFT joins made inner
            query = lossless(query, self.keys)
        if query.outer:  # only a view with the same outer joins may match
            need = outer_tables(query)
            found = [h for h, joined in self._outer.items() if need <= joined]
        else:
            _collect(self._root, 0, Probe(QueryKeys(query, self._groups)), found)
        paths = self._paths
        return sorted(found, key=lambda h: paths[h][1])

    def copy(self) -> FilterTree:
        """An independent tree with the same views (cheaper than adding them again)."""
        out = FilterTree.__new__(FilterTree)
        out.keys, out._groups, out._next = self.keys, self._groups, self._next
        out._root = _copy(self._root, 0)
        out._paths = dict(self._paths)
        out._outer = dict(self._outer)
        return out


def _collect(node: Any, depth: int, probe: Probe, found: list[Hashable]) -> None:
    if depth == len(LEVELS):
        found.extend(node)
        return
    for key, below in LEVELS[depth].search(node, probe):
        _collect(node[key], depth + 1, below, found)


def _copy(node: Any, depth: int) -> Any:
    if depth == len(LEVELS):
        return dict(node)
    return node.copy(lambda child: _copy(child, depth + 1))


# -- one tree per rewrite context ---------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ContextIndex:
    """The filter tree of a context's views; a view's handle is its `id()` (the context
    holds the views, so no handle is reused while the index lives)."""

    context: RewriteContext
    tree: FilterTree
    positions: dict[int, tuple[int, ...]]  # view handle -> positions in context.views

    def candidates(self, query: Spjg) -> list[int]:
        """Positions in `context.views` of the candidate views, in order."""
        handles = cast(list[int], self.tree.candidates(query))  # this index's handles are ints
        found = [p for handle in handles for p in self.positions[handle]]
        return sorted(found)


CACHE_SIZE = 4
_cache: OrderedDict[int, ContextIndex] = OrderedDict()
_lock = threading.Lock()


def index_for(context: RewriteContext) -> ContextIndex:
    """The context's filter tree, built on first use. A context whose views differ from a
    recent context's by a few (a refresh, a new or dropped tile) starts from a copy of that
    context's tree and adds and removes only the views that changed."""
    with _lock:
        found = _cache.get(id(context))
        if found is not None and found.context is context:
            _cache.move_to_end(id(context))
            return found
        positions = _positions(context.views)
        bases = [i for i in _cache.values() if i.context.keys == context.keys]
        index = _derive(bases, context, positions) or _build(context, positions)
        _cache[id(context)] = index
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
        return index


def candidate_positions(query: Spjg, context: RewriteContext) -> list[int]:
    """Positions in `context.views` of the views `query` could match, in order."""
    return index_for(context).candidates(query)


def _positions(views: Sequence[View]) -> dict[int, tuple[int, ...]]:
    out: dict[int, tuple[int, ...]] = {}
    for position, view in enumerate(views):
        out[id(view)] = out.get(id(view), ()) + (position,)
    return out


def _build(context: RewriteContext, positions: dict[int, tuple[int, ...]]) -> ContextIndex:
    tree = FilterTree(context.keys)
    for handle, (first, *_) in positions.items():
        tree.add(handle, context.views[first])
    return ContextIndex(context, tree, positions)


def _derive(
    bases: list[ContextIndex], context: RewriteContext, positions: dict[int, tuple[int, ...]]
) -> ContextIndex | None:
    """From the cached index whose views differ least, if they differ in under half."""
    changes = [(_difference(b.positions, positions), b) for b in bases]
    if not changes:
        return None
    (gone, new), base = min(changes, key=lambda c: len(c[0][0]) + len(c[0][1]))
    if len(gone) + len(new) > len(positions) // 2:
        return None
    tree = base.tree.copy()
    for handle in gone:
        tree.remove(handle)
    for handle in new:
        tree.add(handle, context.views[positions[handle][0]])
    return ContextIndex(context, tree, positions)


def _difference(old: dict, new: dict) -> tuple[set, set]:
    return old.keys() - new.keys(), new.keys() - old.keys()
