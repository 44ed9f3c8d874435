"""The tile engine's kept answers (their budget and what an entry remembers) and its watchdog
(one thread interrupting queries at their deadline or on cancel), without Spark or DuckDB."""

from __future__ import annotations

import threading
import time

from mvlattice.engine.answer_cache import AnswerCache, answer_size, snapshots_of
from mvlattice.engine.tile_engine import LocalAnswer
from mvlattice.engine.watchdog import Watchdog
from mvlattice.jobs.catalog import ApprovedSnapshot
from mvlattice.model.fast_path import FastPath
from mvlattice.mvrewrite.rewriter import RewriteResult

REWRITE = RewriteResult(True, "SELECT 1", ("mvlattice.t",))
APPROVED = {"mvlattice.t": ApprovedSnapshot(location="/w/t", version=3, rows=2, size_bytes=100)}


def answer(rows: int, text: str = "x") -> LocalAnswer:
    return LocalAnswer(("a", "b"), tuple((i, text) for i in range(rows)))


def test_an_entry_remembers_the_snapshot_of_each_table_read() -> None:
    cache = AnswerCache(1 << 20)
    approved = {
        **APPROVED,
        "mvlattice.u": ApprovedSnapshot(location="/w/u", version=0, rows=1, size_bytes=1),
    }
    cache.put("q", REWRITE, approved, answer(2))
    found = cache.get("q")
    assert found is not None
    assert found.snapshots == (("mvlattice.t", "/w/t", 3), ("mvlattice.u", "/w/u", 0))
    assert found.snapshots == snapshots_of(approved)
    assert found.answer == answer(2) and found.rewrite == REWRITE
    assert cache.get("other") is None


def test_the_least_recently_used_answers_leave_first_within_the_budget() -> None:
    size = answer_size(answer(10))
    cache = AnswerCache(10 * size)  # room for 10 of the 12
    for key in "abcdefghijkl":
        cache.put(key, REWRITE, APPROVED, answer(10))
        assert cache.bytes <= cache.budget_bytes
    kept = [k for k in "abcdefghijkl" if cache.get(k) is not None]
    assert kept == list("cdefghijkl")
    cache.get(kept[0])  # used again: now the last to leave
    cache.put("m", REWRITE, APPROVED, answer(10))
    assert cache.get(kept[0]) is not None and cache.get(kept[1]) is None


def test_an_answer_over_an_eighth_of_the_budget_is_not_kept() -> None:
    cache = AnswerCache(8 * answer_size(answer(100)) - 1)
    cache.put("big", REWRITE, APPROVED, answer(100))
    assert cache.get("big") is None and cache.bytes == 0
    cache.put("small", REWRITE, APPROVED, answer(1))
    assert cache.get("small") is not None


def test_no_answer_is_kept_with_a_zero_budget() -> None:
    cache = AnswerCache(FastPath(answer_bytes=0).answer_bytes)
    cache.put("q", REWRITE, APPROVED, answer(1))
    assert cache.get("q") is None


def test_a_dropped_entry_gives_its_bytes_back() -> None:
    cache = AnswerCache(1 << 20)
    cache.put("q", REWRITE, APPROVED, answer(5))
    cache.put("q", REWRITE, APPROVED, answer(6))  # replaced, not counted twice
    assert cache.bytes == answer_size(answer(6))
    cache.drop("q")
    assert cache.get("q") is None and cache.bytes == 0


def test_long_strings_count_for_more() -> None:
    assert answer_size(answer(3, "x" * 1000)) > answer_size(answer(3)) + 3 * 1000


class Cursor:
    def __init__(self) -> None:
        self.interrupted = threading.Event()

    def interrupt(self) -> None:
        self.interrupted.set()


def test_a_query_past_its_deadline_is_interrupted_and_says_why() -> None:
    dog = Watchdog()
    cursor = Cursor()
    watch = dog.watch(cursor, 0.05, None)
    assert cursor.interrupted.wait(2.0)
    assert "after 0.05 s" in watch.why


def test_a_cancelled_query_is_interrupted() -> None:
    dog = Watchdog()
    cursor, cancel = Cursor(), threading.Event()
    watch = dog.watch(cursor, 60.0, cancel)
    time.sleep(0.05)
    assert not cursor.interrupted.is_set()
    cancel.set()
    assert cursor.interrupted.wait(2.0)
    assert watch.why == "query cancelled: the client went away"


def test_a_query_that_ended_is_never_interrupted() -> None:
    dog = Watchdog()
    ended, running = Cursor(), Cursor()
    dog.done(dog.watch(ended, 0.05, None))
    dog.watch(running, 0.05, None)
    assert running.interrupted.wait(2.0)
    time.sleep(0.1)
    assert not ended.interrupted.is_set()


def test_many_queries_share_one_thread() -> None:
    dog = Watchdog()
    before = threading.active_count()
    watches = [dog.watch(Cursor(), 60.0, None) for _ in range(50)]
    assert threading.active_count() <= before + 1
    for w in watches:
        dog.done(w)
