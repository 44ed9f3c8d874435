"""The tile engine's answers kept per query text, and served again only while every tile they
were read from is still the one freshness approves now.

A dashboard asks the same few queries over and over; between two refreshes their answers do
not change. An entry holds the rewrite, the answer, and the snapshot (location, Delta version)
of each table the answer was read from. Before an entry is served, the caller decides
freshness again, exactly as for a new query, and the entry counts only if freshness approves
the very same snapshot of every table: a refresh, an append to a source, a recreated source or
a tile edited outside mvlattice each change what freshness approves, so the old answer is never
served again (and ages out). What the answer is does not depend on anything else: the tile
engine answers only from those snapshots, deterministically (a LIMIT needs an ORDER BY of every
output, functions of time or chance are not on its allow-list).

Entries are kept least recently used first out, under a byte budget (`fast_path.answer_bytes`);
an answer larger than an eighth of it is not kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mvlattice.engine.results import LocalAnswer
    from mvlattice.jobs.catalog import ApprovedSnapshot
    from mvlattice.mvrewrite.rewriter import RewriteResult

# (table lower case, location, Delta version) of each table an answer was read from
Snapshots = tuple[tuple[str, str, int], ...]


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    rewrite: RewriteResult
    snapshots: Snapshots
    answer: LocalAnswer
    size_bytes: int
    # Whether deciding the tables' freshness again reads only local Delta logs (no Spark, no
    # remote store): then a server may check and serve the entry on its event loop.
    decided_locally: bool = False


def snapshots_of(approved: Mapping[str, ApprovedSnapshot]) -> Snapshots:
    return tuple(sorted((name, snap.location, snap.version) for name, snap in approved.items()))


class AnswerCache:
    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self._entries: OrderedDict[Hashable, CachedAnswer] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0  # kept answers served
        self.dropped = 0  # kept answers found no longer approved (and dropped)

    @property
    def bytes(self) -> int:
        return self._bytes

    def get(self, key: Hashable) -> CachedAnswer | None:
        """The entry kept for `key`, if any: the caller still checks its snapshots."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def served(self, hit: bool) -> None:
        """Count a kept answer served (`hit`), or found no longer approved."""
        with self._lock:
            if hit:
                self.hits += 1
            else:
                self.dropped += 1

    def put(
        self,
        key: Hashable,
        rewrite: RewriteResult,
        approved: Mapping[str, ApprovedSnapshot],
        answer: LocalAnswer,
        decided_locally: bool = False,
    ) -> None:
        size = answer_size(answer)
        if size > self.budget_bytes // 8:
            return
        entry = CachedAnswer(rewrite, snapshots_of(approved), answer, size, decided_locally)
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.size_bytes
            while self._entries and self._bytes + size > self.budget_bytes:
                self._bytes -= self._entries.popitem(last=False)[1].size_bytes
            self._entries[key] = entry
            self._bytes += size

    def drop(self, key: Hashable) -> None:
        """Forget an entry whose snapshots freshness no longer approves."""
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.size_bytes

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


def answer_size(answer: LocalAnswer) -> int:
    """About how many bytes of memory the answer's Python rows hold (an estimate that errs
    high: a tuple of pointers per row, and each value's own object)."""
    size = 64 + 64 * len(answer.columns)
    for row in answer.rows:
        size += 56 + 8 * len(row)
        for value in row:
            size += _value_size(value)
    return size


def _value_size(value: Any) -> int:  # noqa: ANN401 - any value a query returns
    if value is None or isinstance(value, bool):
        return 0  # shared objects
    if isinstance(value, str | bytes):
        return 64 + 4 * len(value)
    return 48
