"""The newest commit of a local Delta log, listed again only when the log directory changed —
and always while its modification time is too recent to tell two changes apart."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from mvlattice.delta import newest


@pytest.fixture
def log(tmp_path: Path) -> Path:
    directory = tmp_path / "_delta_log"
    directory.mkdir()
    commit(directory, 0)
    return directory


def commit(log: Path, version: int, text: str = "{}") -> None:
    (log / f"{version:020d}.json").write_text(text)


def settle(log: Path, seconds_ago: float = 10.0) -> tuple[int, int]:
    """Date the directory back, as if its last change were long ago; its (atime, mtime) ns."""
    stamp = time.time_ns() - int(seconds_ago * 1e9)
    os.utime(log, ns=(stamp, stamp))
    return stamp, stamp


def listings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = newest._list

    def counted(log: str):
        calls.append(log)
        return real(log)

    monkeypatch.setattr(newest, "_list", counted)
    return calls


def test_the_newest_commit_and_its_file(log: Path) -> None:
    commit(log, 1, "{}" * 10)
    (log / "00000000000000000001.checkpoint.parquet").write_text("")
    (log / "00000000000000000002.crc").write_text("")
    found = newest.newest_commit(str(log))
    assert found is not None and (found.version, found.size) == (1, 20)
    assert newest.newest_commit(str(log.parent / "nothing")) is None
    empty = log.parent / "empty"
    empty.mkdir()
    assert newest.newest_commit(str(empty)) is None


def test_a_settled_log_is_listed_once(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = listings(monkeypatch)
    settle(log)
    for _ in range(3):
        found = newest.newest_commit(str(log))
        assert found is not None and found.version == 0
    assert len(calls) == 1


def test_a_commit_to_a_settled_log_is_seen_at_once(log: Path) -> None:
    settle(log)
    assert newest.newest_commit(str(log)).version == 0  # type: ignore[union-attr]
    commit(log, 1)  # the directory's time is now
    assert newest.newest_commit(str(log)).version == 1  # type: ignore[union-attr]


def test_a_recent_log_is_listed_every_time(log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = listings(monkeypatch)
    stamp = settle(log, seconds_ago=0.5)  # within a coarse clock's tick of a next change
    assert newest.newest_commit(str(log)).version == 0  # type: ignore[union-attr]
    commit(log, 1)
    os.utime(log, ns=stamp)  # the second change stamped within the same tick: same time
    assert newest.newest_commit(str(log)).version == 1  # type: ignore[union-attr]
    assert len(calls) == 2


def test_a_recreated_log_is_listed_again(log: Path) -> None:
    settle(log)
    assert newest.newest_commit(str(log)).version == 0  # type: ignore[union-attr]
    for name in os.listdir(log):
        os.remove(log / name)
    log.rmdir()
    log.mkdir()
    commit(log, 0, '{"recreated": true}')
    found = newest.newest_commit(str(log))
    assert found is not None and found.size == len('{"recreated": true}')
