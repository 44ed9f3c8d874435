"""The last few hundred rewrite/query requests, in memory, for the status page and
`GET /v1/querylog`.

The Delta query log is the record (`mvlattice log` reads it); reading it costs a Spark job, far
too much for a page that polls every two seconds, so the service also keeps this bounded ring.
A miss's explanation is kept when the request asked for one; otherwise the page asks for it
later (`explained`) and the entry says the explanation is from then, not from the request.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from mvlattice.errors import Outcome
from mvlattice.querylog.log import Request

HISTORY = 500


@dataclass(frozen=True, slots=True)
class Recent:
    id: int
    request: Request
    explain: tuple[dict[str, Any], ...] | None = None  # per view considered, when known
    explained_later: bool = False  # the explanation was asked for after the request

    @property
    def miss(self) -> bool:
        """Valid SQL that no view answered — the entries worth explaining."""
        return self.request.outcome == Outcome.OK and not self.request.rewritten

    def to_json(self) -> dict[str, Any]:
        r = self.request
        return {
            "id": self.id,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(r.at)),
            "kind": r.kind,
            "sql": r.sql,
            "model": r.model,
            "rewritten": r.rewritten,
            "views": list(r.views),
            "latency_ms": round(r.latency_ms, 3),
            "outcome": r.outcome,
            "message": r.message,
            "engine": r.engine,
            "explain": None if self.explain is None else [dict(e) for e in self.explain],
            "explained_later": self.explained_later,
        }


class RecentQueries:
    """A thread-safe ring of the newest requests (handlers run on several threads)."""

    def __init__(self, size: int = HISTORY) -> None:
        self._items: deque[Recent] = deque(maxlen=size)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

    def add(self, request: Request, explain: Any = None) -> Recent:
        with self._lock:
            item = Recent(next(self._ids), request, _explanations(explain))
            self._items.append(item)
        return item

    def newest(self, limit: int = 100) -> tuple[Recent, ...]:
        with self._lock:
            items = list(self._items)
        return tuple(reversed(items[-limit:])) if limit > 0 else ()

    def explained(self, entry_id: int, explain: Any) -> Recent | None:
        """Attach an explanation found after the request; None when the entry is gone."""
        with self._lock:
            for i, item in enumerate(self._items):
                if item.id == entry_id:
                    found = _explanations(explain) or ()
                    self._items[i] = dataclasses.replace(item, explain=found, explained_later=True)
                    return self._items[i]
        return None


def _explanations(explain: Any) -> tuple[dict[str, Any], ...] | None:
    if explain is None:
        return None
    return tuple(dict(e) for e in explain if isinstance(e, dict))
