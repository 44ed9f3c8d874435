"""Each served lattice's plan, computed once and kept until a build changes what it rests on.

The JSON API waits for a plan. The status page's Lattices does not: planning can profile for
minutes on a new warehouse, so the page gets the plan when it is ready and, until then, what the
planner is doing (its last progress line) while a thread of its own plans (issue 36: the page
said "loading…" for 165 s).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mvlattice.errors import JobError, MvlatticeError, first_line

Key = tuple[str, str]  # (model, lattice)
Plan = dict[str, Any]
# Plans one lattice, telling `say` what it does: `Workspace.plan`, summarized for the API.
Planner = Callable[[Key, Callable[[str], None]], Plan]


@dataclass
class _Running:
    began: float
    line: str = "starting"
    error: MvlatticeError | None = None
    done: threading.Event = field(default_factory=threading.Event)

    def say(self, line: str) -> None:
        self.line = line


class Plans:
    def __init__(self, planner: Planner, clock: Callable[[], float] = time.monotonic) -> None:
        self._planner = planner
        self._clock = clock
        self._kept: dict[Key, Plan] = {}
        self._running: dict[Key, _Running] = {}
        self._lock = threading.Lock()

    def plan(self, key: Key) -> Plan:
        """The lattice's plan, planned here when none is kept."""
        with self._lock:
            if key in self._kept:
                return self._kept[key]
        plan = self._planner(key, lambda _line: None)
        with self._lock:
            self._kept[key] = plan
        return plan

    def plan_or_progress(self, key: Key, wait: float) -> Plan | str:
        """The plan if it is kept or ready within `wait` seconds; else what its planning (in a
        thread of its own, started here if none runs) does now, as one line. A planning that
        failed raises its error to the request that waited for it."""
        with self._lock:
            plan, running = self._kept.get(key), self._running.get(key)
            if plan is None and running is None:
                running = self._running[key] = _Running(self._clock())
                threading.Thread(target=self._plan_aside, args=(key, running), daemon=True,
                                 name=f"mvlattice-plan-{key[1]}").start()  # fmt: skip
        if plan is not None:
            return plan
        assert running is not None
        running.done.wait(wait)
        if running.error is not None:
            raise running.error
        with self._lock:
            plan = self._kept.get(key)
        if plan is not None:
            return plan
        return f"{self._clock() - running.began:.0f} s so far: {running.line}"

    def forget(self) -> None:
        """A build may have changed statistics and the stored plans: plan anew when asked."""
        with self._lock:
            self._kept.clear()

    def _plan_aside(self, key: Key, running: _Running) -> None:
        try:
            plan = self._planner(key, running.say)
        except MvlatticeError as exc:
            running.error = exc
        except Exception as exc:  # noqa: BLE001 - reported to the page as this lattice's error
            running.error = JobError(f"planning failed: {first_line(exc)}")
        else:
            with self._lock:
                self._kept[key] = plan
        finally:
            with self._lock:
                if self._running.get(key) is running:
                    del self._running[key]
            running.done.set()
