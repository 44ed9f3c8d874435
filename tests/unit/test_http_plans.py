"""The Lattices page's plans: ready ones at once, else what the planner does now, planned in a
thread of its own (issue 36: the page said "loading…" for 165 s while the server profiled)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from mvlattice.errors import NotFoundError
from mvlattice.http.plans import Key, Plans
from mvlattice.http.ui.lattices_view import lattices_html

KEY = ("shop", "star")


class SlowPlanner:
    """Says a line, then waits until released; counts its plannings."""

    def __init__(self) -> None:
        self.release, self.said = threading.Event(), threading.Event()
        self.calls = 0

    def __call__(self, key: Key, say: Callable[[str], None]) -> dict:
        self.calls += 1
        say("profiling 38 columns")
        self.said.set()
        assert self.release.wait(30)
        return {"rows": 42.0, "key": list(key)}


def test_a_slow_plan_shows_progress_then_the_plan_planned_once() -> None:
    planner, now = SlowPlanner(), [100.0]
    plans = Plans(planner, clock=lambda: now[0])
    assert plans.plan_or_progress(KEY, wait=0.05).startswith("0 s so far: ")  # the thread's
    assert planner.said.wait(5)
    now[0] = 112.0
    assert plans.plan_or_progress(KEY, wait=0.05) == "12 s so far: profiling 38 columns"
    planner.release.set()
    assert plans.plan_or_progress(KEY, wait=5) == {"rows": 42.0, "key": ["shop", "star"]}
    assert plans.plan(KEY)["rows"] == 42.0 and planner.calls == 1  # kept
    plans.forget()
    assert plans.plan(KEY)["rows"] == 42.0 and planner.calls == 2


def test_a_failed_plan_is_the_waiting_requests_error_and_is_tried_again() -> None:
    attempts = []

    def failing(key: Key, say: Callable[[str], None]) -> dict:
        attempts.append(key)
        if len(attempts) == 1:
            raise NotFoundError("no table shop.sales")
        raise RuntimeError("JVM gone\nat java…")

    plans = Plans(failing)
    with pytest.raises(NotFoundError, match="no table shop.sales"):
        plans.plan_or_progress(KEY, wait=5)
    with pytest.raises(Exception, match="^planning failed: JVM gone$"):
        plans.plan_or_progress(KEY, wait=5)
    assert len(attempts) == 2


def test_the_page_says_what_planning_does() -> None:
    doc = {"name": "star", "model": "shop", "planning": "12 s so far: pass 1 <of 2>"}
    html = lattices_html([doc])
    assert "planning its tiles, 12 s so far: pass 1 &lt;of 2&gt;" in html and "no plan" not in html
