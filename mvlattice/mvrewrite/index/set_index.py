"""A lattice-of-sets index (GL01 §4.1): sets as keys, each with a payload, searched for the
keys that are subsets of a set, supersets of it, or miss at most a few of its elements.

GL01 keeps the keys in a lattice (each key linked to its immediate subsets and supersets) and
walks it from the top or the bottom. Here each element keeps the keys that contain it (an
inverted list), which answers the same questions and is updated by a key insertion or removal
without restructuring anything:

- subsets of Q: count, for every key, how many of its elements Q holds (walking the lists of
  Q's elements only); a key whose count equals its size is a subset. When Q is small, probing
  every subset of Q directly is cheaper, and is used instead;
- supersets of Q: intersect the lists of Q's elements, shortest first;
- keys missing at most `slack` elements of Q: the counting walk again, plus the keys of at most
  `slack` elements that Q does not touch at all.

Keys come back in no particular order.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from itertools import combinations
from typing import Generic, TypeVar

P = TypeVar("P")
Key = frozenset
PROBE_LIMIT = 12  # probe the subsets of a query set of at most this many elements


class SetIndex(Generic[P]):
    """Keys (frozensets of hashable elements) -> payloads, with subset/superset search."""

    __slots__ = ("_payloads", "_postings", "_by_size")

    def __init__(self) -> None:
        self._payloads: dict[Key, P] = {}
        self._postings: dict[Hashable, set[Key]] = {}
        self._by_size: dict[int, set[Key]] = {}

    # -- the mapping --------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._payloads)

    def __contains__(self, key: object) -> bool:
        return key in self._payloads

    def __getitem__(self, key: Key) -> P:
        return self._payloads[key]

    def __iter__(self) -> Iterator[Key]:
        return iter(self._payloads)

    def setdefault(self, key: Key, factory: Callable[[], P]) -> P:
        """The payload of `key`, inserting `factory()` if the key is new."""
        found = self._payloads.get(key)
        if found is not None or key in self._payloads:
            return found  # type: ignore[return-value]
        payload = self._payloads[key] = factory()
        for element in key:
            self._postings.setdefault(element, set()).add(key)
        self._by_size.setdefault(len(key), set()).add(key)
        return payload

    def copy(self, payload: Callable[[P], P]) -> SetIndex[P]:
        """An independent index with the same keys, each payload copied by `payload`."""
        out: SetIndex[P] = SetIndex()
        out._payloads = {key: payload(value) for key, value in self._payloads.items()}
        out._postings = {element: set(keys) for element, keys in self._postings.items()}
        out._by_size = {size: set(keys) for size, keys in self._by_size.items()}
        return out

    def pop(self, key: Key) -> P:
        payload = self._payloads.pop(key)
        for element in key:
            _discard(self._postings, element, key)
        _discard(self._by_size, len(key), key)
        return payload

    # -- search -------------------------------------------------------------------------------
    def subsets_of(self, query: frozenset) -> Iterator[Key]:
        """Keys K with K <= query."""
        if len(query) <= PROBE_LIMIT and 1 << len(query) <= len(self._payloads):
            yield from self._probe(query)
        else:
            yield from self.within(query, 0)

    def supersets_of(self, query: frozenset) -> Iterator[Key]:
        """Keys K with K >= query."""
        if not query:
            yield from self._payloads
            return
        lists = []
        for element in query:
            found = self._postings.get(element)
            if not found:
                return
            lists.append(found)
        lists.sort(key=len)
        yield from lists[0].intersection(*lists[1:]) if len(lists) > 1 else lists[0]

    def within(self, query: frozenset, slack: int) -> Iterator[Key]:
        """Keys K with at most `slack` elements outside `query`: len(K - query) <= slack."""
        counts: dict[Key, int] = {}
        for element in query:
            for key in self._postings.get(element, ()):
                counts[key] = counts.get(key, 0) + 1
        for key, inside in counts.items():
            if len(key) - inside <= slack:
                yield key
        for size in range(slack + 1):
            for key in self._by_size.get(size, ()):
                if key not in counts:
                    yield key

    def _probe(self, query: frozenset) -> Iterator[Key]:
        elements = tuple(query)
        payloads = self._payloads
        for size in range(len(elements) + 1):
            if size not in self._by_size:
                continue
            for chosen in combinations(elements, size):
                key = frozenset(chosen)
                if key in payloads:
                    yield key


def _discard(index: dict, slot: Hashable, key: Key) -> None:
    keys = index[slot]
    keys.discard(key)
    if not keys:
        del index[slot]
