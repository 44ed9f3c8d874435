"""`GET /v1/advice`'s runner without Spark: one computation per query-log version, joined by a
request with the same arguments, 503 for other arguments while it runs, stopped when every
waiting client has gone."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

import pytest

from mvlattice.errors import OverloadedError, QueryTimeoutError
from mvlattice.http.advice import AdviceRunner


class Client:
    def __init__(self) -> None:
        self.gone = False

    async def is_disconnected(self) -> bool:
        return self.gone


class Advisor:
    """Advice that takes until `release` is set (or until it is told to stop)."""

    def __init__(self) -> None:
        self.version = 1
        self.release = threading.Event()
        self.started = threading.Event()
        self.stopped = threading.Event()
        self.calls: list[tuple[str | None, str | None]] = []

    def compute(
        self, model: str | None, since: str | None, stop: Callable[[], bool]
    ) -> list[dict[str, Any]]:
        self.calls.append((model, since))
        self.started.set()
        while not self.release.wait(0.01):
            if stop():
                self.stopped.set()
                raise QueryTimeoutError("advice cancelled")
        return [{"model": model, "since": since, "version": self.version}]

    def versions(self, _model: str | None) -> tuple[int, ...]:
        return (self.version,)


async def started(advisor: Advisor) -> None:
    while not advisor.started.is_set():
        await asyncio.sleep(0.01)  # polls a thread's event from the loop


def run(test: Callable[[AdviceRunner, Advisor], Any]) -> None:
    advisor = Advisor()
    asyncio.run(test(AdviceRunner(advisor.compute, advisor.versions), advisor))


def test_advice_is_kept_until_the_log_changes() -> None:
    async def test(runner: AdviceRunner, advisor: Advisor) -> None:
        advisor.release.set()
        first = await runner.advice("shop", "2h", Client())
        assert await runner.advice("shop", "2h", Client()) is first
        assert runner.computed == 1
        advisor.version = 2  # a query was logged
        assert (await runner.advice("shop", "2h", Client()))[0]["version"] == 2
        runner.forget()  # a build finished here
        await runner.advice("shop", "2h", Client())
        assert runner.computed == 3 and len(advisor.calls) == 3

    run(test)


def test_one_computation_at_a_time() -> None:
    async def test(runner: AdviceRunner, advisor: Advisor) -> None:
        first = asyncio.ensure_future(runner.advice("shop", None, Client()))
        await started(advisor)
        second = asyncio.ensure_future(runner.advice("shop", None, Client()))
        with pytest.raises(OverloadedError, match="other arguments") as refused:
            await runner.advice("shop", "1d", Client())
        assert refused.value.retry_after > 0
        advisor.release.set()
        assert await first == await second and runner.computed == 1
        assert advisor.calls == [("shop", None)]

    run(test)


def test_the_computation_stops_when_every_client_has_gone() -> None:
    async def test(runner: AdviceRunner, advisor: Advisor) -> None:
        one, two = Client(), Client()
        first = asyncio.ensure_future(runner.advice("shop", None, one))
        await started(advisor)
        second = asyncio.ensure_future(runner.advice("shop", None, two))
        one.gone = True
        assert await first is None
        assert not advisor.stopped.is_set() and runner.running  # the second still waits
        two.gone = True
        assert await second is None
        while runner.running:
            await asyncio.sleep(0.01)  # the thread notices the stop between two misses
        assert advisor.stopped.is_set()
        advisor.release.set()
        advisor.started.clear()
        assert (await runner.advice("shop", None, Client()))[0]["model"] == "shop"
        assert runner.computed == 2  # the cancelled one was not kept

    run(test)
