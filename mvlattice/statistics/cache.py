"""The caching decorator (Calcite's CachingLatticeStatisticProvider), persistent.

`CachingCounter` wraps any `SetCounter`: sets already in the store are answered from it, the
rest are counted by the wrapped counter in one pass and written back. The store is opened on
first use, so the Delta versions it is keyed on are the ones current when counting starts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from mvlattice.lattice.statistic_provider import ColumnSet, Counts, SetCounter


class CountStore(Protocol):
    def load(self) -> Counts | None: ...

    def save(self, counts: Counts) -> None: ...


class CachingCounter:
    """A `SetCounter` that remembers. `hits`/`misses` count sets served and sets counted."""

    def __init__(
        self, inner: SetCounter, store: CountStore | Callable[[], CountStore | None] | None
    ) -> None:
        self.inner = inner
        self._open = store if callable(store) else (lambda: store)
        self._store: CountStore | None = None
        self._known: Counts | None = None
        self.hits = 0
        self.misses = 0
        self.persistent: bool | None = None  # known after the first count

    @property
    def exact(self) -> bool:
        return self.inner.exact

    @property
    def description(self) -> str:
        return self.inner.description

    @property
    def known(self) -> Counts | None:
        """Everything counted so far, here or (for the same data) by earlier runs."""
        return self._load()

    def count(self, column_sets: Sequence[ColumnSet]) -> Counts:
        known = self._load()
        wanted = list(dict.fromkeys(column_sets))
        missing = [s for s in wanted if known is None or s not in known.distinct]
        if known is None or missing:
            fresh = self.inner.count(missing)
            known = Counts(fresh.rows, {**(known.distinct if known else {}), **fresh.distinct},
                           self.exact)  # fmt: skip
            self._known = known
            if self._store is not None:
                self._store.save(known)
        self.hits += len(wanted) - len(missing)
        self.misses += len(missing)
        return Counts(known.rows, {s: known.distinct[s] for s in wanted}, self.exact)

    def _load(self) -> Counts | None:
        if self.persistent is None:
            self._store = self._open()
            self.persistent = self._store is not None
            loaded = self._store.load() if self._store is not None else None
            if loaded is not None and loaded.exact == self.exact:
                self._known = loaded
        return self._known
