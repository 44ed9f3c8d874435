"""The query gate admits first come, first served: a freed slot goes to the query that has
waited longest, and a query arriving meanwhile queues behind the waiting ones (before, a
newcomer could take a freed slot first; under load one query waited out its whole deadline)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from mvlattice.errors import QueryTimeoutError
from mvlattice.http.gate import QueryGate


def recording(started: list[str], name: str, until: threading.Event | None = None):
    """Work that records its start under `name`, then waits for `until` (if given)."""

    def run() -> str:
        started.append(name)
        if until is not None:
            until.wait(10)
        return name

    return run


def test_waiting_queries_get_slots_in_order_of_arrival_and_newcomers_queue_behind() -> None:
    async def scenario() -> list[str]:
        gate = QueryGate(running=1, waiting=10)
        started: list[str] = []
        hold = threading.Event()

        deadline = time.monotonic() + 30
        first = asyncio.create_task(
            gate.run(recording(started, "first", hold), deadline, threading.Event(), "t")
        )
        await asyncio.sleep(0.05)
        waiting = []
        for name in ("a", "b", "c"):
            waiting.append(
                asyncio.create_task(
                    gate.run(recording(started, name), deadline, threading.Event(), "t")
                )
            )
            await asyncio.sleep(0.02)  # arrival order is a, b, c
        assert gate.queued == 3
        hold.set()
        await first  # its slot is freed on the loop: it passes to `a`, not to a newcomer
        late = asyncio.create_task(
            gate.run(recording(started, "late"), deadline, threading.Event(), "t")
        )
        await asyncio.gather(*waiting, late)
        await asyncio.sleep(0.05)  # the last slot is freed on the loop, after the answer
        assert (gate.active, gate.queued) == (0, 0)
        return started

    assert asyncio.run(scenario()) == ["first", "a", "b", "c", "late"]


def test_a_waiter_that_times_out_leaves_the_line_and_the_slot_goes_on() -> None:
    async def scenario() -> list[str]:
        gate = QueryGate(running=1, waiting=10)
        started: list[str] = []
        hold = threading.Event()

        far = time.monotonic() + 30
        first = asyncio.create_task(
            gate.run(recording(started, "first", hold), far, threading.Event(), "t")
        )
        await asyncio.sleep(0.05)
        soon = asyncio.create_task(
            gate.run(
                recording(started, "impatient"), time.monotonic() + 0.2, threading.Event(), "0.2 s"
            )
        )
        await asyncio.sleep(0.02)
        patient = asyncio.create_task(
            gate.run(recording(started, "patient"), far, threading.Event(), "t")
        )
        with pytest.raises(QueryTimeoutError, match="waiting for a query slot"):
            await soon
        assert gate.queued == 1
        hold.set()
        await asyncio.gather(first, patient)
        await asyncio.sleep(0.05)
        assert (gate.active, gate.queued) == (0, 0)
        return started

    assert asyncio.run(scenario()) == ["first", "patient"]
