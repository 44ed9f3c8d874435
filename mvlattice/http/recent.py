"""The last few hundred rewrite/query requests, in memory, for the status page and
`GET /v1/querylog`.

The Delta query log is the record (`mvlattice log` reads it); reading it costs a Spark job, far
too much for a page that polls every two seconds, so the service also keeps this bounded ring.
A miss's explanation is kept when the request asked for one; otherwise the page asks for it
later (`explained`) and the entry says the explanation is from then, not from the request.

With `serve --query-log-literals blank` every entry is shown as the Delta log stores it: its
SQL with literals as `?` (none when it does not parse), and its message and explanations — which
quote the SQL — with what reads as a literal as `?`. The ring itself keeps the text as sent, in
memory only: the status page explains a miss by rewriting it again.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from mvlattice.errors import Outcome
from mvlattice.querylog.log import Literals, Request
from mvlattice.sql.fingerprint import blank_literals, blank_text

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

    def to_json(self, literals: Literals = "keep") -> dict[str, Any]:
        """The entry as shown; `blank`: without its literals (see the module's docstring)."""
        r = self.request
        doc = {
            "id": self.id,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(r.at)),
            "kind": r.kind,
            "sql": r.sql,
            "sql_form": "full",
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
        return _blanked(doc) if literals == "blank" else doc


def _blanked(doc: dict[str, Any]) -> dict[str, Any]:
    sql, form = blanked_sql(doc["sql"])
    message = doc["message"]
    explain = [
        {**e, "message": blank_text(e["message"])} if isinstance(e.get("message"), str) else e
        for e in doc["explain"] or ()
    ]
    return {
        **doc,
        "sql": sql,
        "sql_form": form,
        "message": None if message is None else blank_text(message),
        "explain": None if doc["explain"] is None else explain,
    }


@functools.lru_cache(maxsize=HISTORY)  # the status page shows the same entries every poll
def blanked_sql(sql: str) -> tuple[str, str]:
    """(the SQL with literals as `?`, "blanked"), or ("", "omitted") when it does not parse —
    as the query log stores it (`querylog.log.to_record`)."""
    text = blank_literals(sql)
    return (text, "blanked") if text is not None else ("", "omitted")


class RecentQueries:
    """A thread-safe ring of the newest requests (handlers run on several threads)."""

    def __init__(self, size: int = HISTORY, literals: Literals = "keep") -> None:
        self.literals = literals  # `serve --query-log-literals`: how entries are shown
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

    def shown(self, limit: int = 100) -> list[dict[str, Any]]:
        """The newest entries as `GET /v1/querylog` and the status page show them (blanking
        parses SQL: call it off the event loop)."""
        return [e.to_json(self.literals) for e in self.newest(limit)]

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
