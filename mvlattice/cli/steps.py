"""Timed progress lines for a command's long steps, on stderr (issue 36: no silent minutes).

Each line is stamped with the seconds since the command began; each step opens with a line
saying what it does and closes with "done in N s" (or "failed after N s"), so a newcomer sees
what a long wait is spent on and how long each part took. stdout is left alone: it carries the
command's result (with --json, one JSON document). The library never prints: it is handed a
step's `say` (a `Callable[[str], None]`) and says its lines through it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from mvlattice.jobs.batch import Progress, ProgressEvent
    from mvlattice.workspace import Workspace

Say = Callable[[str], None]
Clock = Callable[[], float]


class Steps:
    """One command's progress: `say` a stamped line, or run a `step` that times itself."""

    def __init__(self, stream: TextIO | None = None, clock: Clock = time.monotonic) -> None:
        self._stream = stream
        self._clock = clock
        self._start = clock()

    def say(self, line: str) -> None:
        # sys.stderr is looked up per line, not kept: tests capture it by swapping it.
        stream = self._stream or sys.stderr
        sys.stdout.flush()  # what the command printed before comes first in a shared log file
        print(f"[{self._clock() - self._start:6.1f}s] {line}", file=stream, flush=True)

    @contextmanager
    def step(self, what: str) -> Iterator[Say]:
        """Say `what …` now and `what: done in N s` at the end; inside, the step's own lines
        (the `say` it yields) are indented under it."""
        self.say(f"{what} …")
        began = self._clock()
        try:
            yield lambda line: self.say(f"  {line}")
        except BaseException:
            self.say(f"{what}: failed after {seconds(self._clock() - began)}")
            raise
        self.say(f"{what}: done in {seconds(self._clock() - began)}")

    def done(self, command: str) -> None:
        """The command's own wall time, its last progress line."""
        self.say(f"{command}: done in {seconds(self._clock() - self._start)}")


def start_spark(steps: Steps, ws: Workspace) -> None:
    """Spark's start-up as a step of its own: a JVM with Delta's jars, then the model's tables
    registered — the first 5 to 30 s of most commands, silent otherwise."""
    ws.on_spark_start = None  # this step says it
    with steps.step(f"starting Spark ({ws.master}) and registering the model's tables"):
        ws.spark  # noqa: B018 - the property starts the session


def build_lines(say: Say) -> Progress:
    """A jobs batch's progress as lines: each target as it starts and how it ended."""

    def hear(event: ProgressEvent) -> None:
        head = f"{event.index}/{event.total} {event.target.name}"
        r = event.result
        if r is None:
            say(f"{head} …")
            return
        rows = f", {r.rows:,} rows" if r.rows is not None else ""
        say(f"{head}: {r.status}{rows}, {seconds(r.seconds)}" + (f": {r.error}" if r.error else ""))

    return hear


def seconds(value: float) -> str:
    """A duration for reading: tenths under a minute, whole seconds above.

    >>> seconds(3.14159), seconds(212.6)
    ('3.1 s', '213 s')
    """
    return f"{value:.1f} s" if value < 60 else f"{value:.0f} s"
