"""Arrow data of tiles per (location, version), read with delta-rs and kept in memory under a
byte budget (least recently used first out). A new version is a new key: the old one is never
read again and ages out."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

from mvlattice.delta import reader

if TYPE_CHECKING:
    import pyarrow as pa


class TileCache:
    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self._tables: OrderedDict[tuple[str, int], pa.Table] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.peak_bytes = 0

    @property
    def bytes(self) -> int:
        return self._bytes

    def table(self, location: str, version: int) -> pa.Table:
        """The table at `location` as of Delta `version` (raises what delta-rs raises)."""
        key = (location, version)
        with self._lock:
            found = self._tables.get(key)
            if found is not None:
                self._tables.move_to_end(key)
                self.hits += 1
                return found
            self.misses += 1
        table = read_snapshot(location, version)
        self._keep(key, table)
        return table

    def _keep(self, key: tuple[str, int], table: pa.Table) -> None:
        size = table.nbytes
        if size > self.budget_bytes:
            return  # read for this query only
        with self._lock:
            if key in self._tables:
                return
            stale = [k for k in self._tables if k[0] == key[0]]  # older versions of the tile
            for old in stale:
                self._drop(old)
            while self._tables and self._bytes + size > self.budget_bytes:
                self._drop(next(iter(self._tables)))
            self._tables[key] = table
            self._bytes += size
            self.peak_bytes = max(self.peak_bytes, self._bytes)

    def _drop(self, key: tuple[str, int]) -> None:
        self._bytes -= self._tables.pop(key).nbytes

    def clear(self) -> None:
        with self._lock:
            self._tables.clear()
            self._bytes = 0


def read_snapshot(location: str, version: int) -> pa.Table:
    """Every row of the Delta table at `location` as of `version` (delta-rs, no JVM)."""
    return reader.rows(location, version)
