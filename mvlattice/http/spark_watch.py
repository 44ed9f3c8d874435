"""Whether Spark's JVM still answers, probed off the event loop.

A query that exhausts the JVM (or a JVM killed from outside) used to leave every later Spark
query failing while `/healthz` said "ok". A thread probes the JVM every second; `/healthz` and
the query route read the last result (a probe that hangs must not hang them). Once the JVM has
been down or unresponsive for `give_up_after` seconds, `on_lost` runs: `serve` stops and exits
with EXIT_SPARK_LOST for its supervisor to restart it (a SparkContext cannot be made again in a
process whose JVM died).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

EXIT_SPARK_LOST = 70  # EX_SOFTWARE: the supervisor restarts the service
PROBE_SECONDS = 1.0
UNRESPONSIVE_AFTER = 15.0  # a probe that has not come back by then: the JVM hangs
# One failed probe is not a dead JVM: a busy gateway can fail a call now and then (a CI run
# once saw a live service answer 503 to its first query). Down means failing this long.
DOWN_AFTER = 2.0


class SparkWatch:
    def __init__(
        self,
        alive: Callable[[], bool],
        on_lost: Callable[[str], None],
        give_up_after: float = 10.0,
    ) -> None:
        self.alive, self.on_lost, self.give_up_after = alive, on_lost, give_up_after
        self._answered = time.monotonic()  # when a probe last came back
        self._down_since: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mvlattice-spark-watch",
                                        daemon=True)  # fmt: skip

    def start(self) -> SparkWatch:
        self._answered = time.monotonic()  # Spark's start-up is not a hanging probe
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def state(self) -> str:
        """ok | down | unresponsive."""
        down_since = self._down_since
        if down_since is not None and time.monotonic() - down_since >= DOWN_AFTER:
            return "down"
        if time.monotonic() - self._answered > UNRESPONSIVE_AFTER:
            return "unresponsive"
        return "ok"

    def _run(self) -> None:
        while not self._stop.wait(PROBE_SECONDS):
            ok = self.alive()
            now = time.monotonic()
            self._answered = now
            if ok:
                self._down_since = None
                continue
            self._down_since = self._down_since or now
            if now - self._down_since >= self.give_up_after:
                self.on_lost("Spark's JVM is gone")
                return
