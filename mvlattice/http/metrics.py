"""Service metrics in the Prometheus text exposition format (version 0.0.4), kept by hand.

Counters and one histogram, guarded by a lock; `render()` writes the text `GET /metrics` serves:

- `mvlattice_http_requests_total{method, route, status}`
- `mvlattice_rewrites_total{outcome}`: rewritten | not_rewritten | error (rewrite and query)
- `mvlattice_rewrite_hit_ratio`: rewritten / (rewritten + not_rewritten)
- `mvlattice_rewrite_latency_seconds`: histogram of rewrite time (requests that rewrite)
- `mvlattice_queries_total{engine}`: queries answered, by who answered (local | spark)
- `mvlattice_rewrite_runs_total`: rewrites the serving pipeline ran (one per rewriting request)
- `mvlattice_refreshes_total{trigger, outcome}`: refresh and materialize runs (http, schedule)
- `mvlattice_query_log_pending`, `mvlattice_query_log_dropped_total`: the query log's writer
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
REWRITE_OUTCOMES = ("rewritten", "not_rewritten", "error")


class Histogram:
    def __init__(self, buckets: tuple[float, ...] = LATENCY_BUCKETS) -> None:
        self.buckets = tuple(sorted(buckets))
        self.counts = [0] * (len(self.buckets) + 1)  # the last one is +Inf
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.sum += value

    def lines(self, name: str) -> list[str]:
        out, running = [], 0
        for bound, count in zip((*self.buckets, None), self.counts, strict=True):
            running += count
            le = "+Inf" if bound is None else _number(bound)
            out.append(f'{name}_bucket{{le="{le}"}} {running}')
        out.append(f"{name}_sum {_number(self.sum)}")
        out.append(f"{name}_count {running}")
        return out


class Metrics:
    """What the service counts. Thread-safe; cheap enough for every request."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: dict[tuple[str, str, str], int] = {}
        self.rewrites = dict.fromkeys(REWRITE_OUTCOMES, 0)
        self.refreshes: dict[tuple[str, str], int] = {}
        self.answers: dict[str, int] = {}  # engine -> queries it answered
        self.latency = Histogram()
        self.gauges: dict[str, Callable[[], float]] = {}

    def request(self, method: str, route: str, status: int) -> None:
        key = (method, route, str(status))
        with self._lock:
            self.requests[key] = self.requests.get(key, 0) + 1

    def rewrite(self, outcome: str, seconds: float | None = None) -> None:
        """One rewrite attempt: its outcome, and the time the rewrite itself took."""
        with self._lock:
            self.rewrites[outcome] = self.rewrites.get(outcome, 0) + 1
            if seconds is not None:
                self.latency.observe(seconds)

    def answered(self, engine: str) -> None:
        """One query answered, by `engine` (local: the tile engine; spark)."""
        with self._lock:
            self.answers[engine] = self.answers.get(engine, 0) + 1

    def refresh(self, trigger: str, outcome: str) -> None:
        with self._lock:
            key = (trigger, outcome)
            self.refreshes[key] = self.refreshes.get(key, 0) + 1

    def hit_ratio(self) -> float:
        hits, misses = self.rewrites["rewritten"], self.rewrites["not_rewritten"]
        return hits / (hits + misses) if hits + misses else 0.0

    def render(self) -> str:
        with self._lock:
            lines = (
                self._requests() + self._rewrites() + self._answers() + self._refreshes()
                + self._gauges()
            )  # fmt: skip
        return "\n".join(lines) + "\n"

    def _requests(self) -> list[str]:
        name = "mvlattice_http_requests_total"
        out = _head(name, "counter", "HTTP requests by method, route and status")
        for (method, route, status), n in sorted(self.requests.items()):
            out.append(f"{name}{_labels(method=method, route=route, status=status)} {n}")
        return out

    def _rewrites(self) -> list[str]:
        name = "mvlattice_rewrites_total"
        out = _head(name, "counter", "rewrite attempts by outcome")
        out += [f"{name}{_labels(outcome=k)} {v}" for k, v in sorted(self.rewrites.items())]
        out += _head("mvlattice_rewrite_hit_ratio", "gauge", "share of rewrites that used a view")
        out.append(f"mvlattice_rewrite_hit_ratio {_number(self.hit_ratio())}")
        latency = "mvlattice_rewrite_latency_seconds"
        out += _head(latency, "histogram", "time spent rewriting SQL")
        return out + self.latency.lines(latency)

    def _answers(self) -> list[str]:
        name = "mvlattice_queries_total"
        out = _head(name, "counter", "queries answered, by the engine that answered")
        # both engines always, so that a rate of either is defined from the start
        counts = {"local": 0, "spark": 0} | self.answers
        return out + [f"{name}{_labels(engine=k)} {v}" for k, v in sorted(counts.items())]

    def _refreshes(self) -> list[str]:
        name = "mvlattice_refreshes_total"
        out = _head(name, "counter", "refresh and materialize runs by trigger and outcome")
        for (trigger, outcome), n in sorted(self.refreshes.items()):
            out.append(f"{name}{_labels(trigger=trigger, outcome=outcome)} {n}")
        return out

    def _gauges(self) -> list[str]:
        out: list[str] = []
        for name, read in sorted(self.gauges.items()):
            kind = "counter" if name.endswith("_total") else "gauge"
            out += _head(name, kind, name.removeprefix("mvlattice_").replace("_", " "))
            out.append(f"{name} {_number(read())}")
        return out


def _head(name: str, kind: str, text: str) -> list[str]:
    return [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]


def _labels(**labels: str) -> str:
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items())
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    return repr(float(value)) if value != int(value) else str(int(value))
