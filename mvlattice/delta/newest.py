"""The newest commit of a local Delta log, asked on every query (freshness) for each tile and
source: one `stat` of the log directory when nothing was committed since it was last listed.

Adding a commit file to `_delta_log` (Spark and delta-rs both write a temporary file there and
rename it into place), or removing one, changes the directory's modification time; a table
deleted and recreated has a new directory. So a listing stays valid while the directory's
(inode, modification time) is the one it was listed at. One exception makes that unsafe: file
systems stamp times by a coarse clock (a tick of a few milliseconds; a whole second on some),
so a second commit within the same tick as the listed state leaves the time as it was. A
listing is therefore reused only when the directory's time was at least `SETTLED_NS` old when
it was listed (as git treats "racily clean" index entries): any later change carries a later
time.
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass

_COMMIT = re.compile(r"^(\d{20})\.json$")
SETTLED_NS = 2_000_000_000  # a directory time this old is past any file system's tick
_LIMIT = 4096  # directories remembered


@dataclass(frozen=True, slots=True)
class NewestCommit:
    """The highest `<n>.json` of a log directory, with its file's modification time and size
    (a table recreated to the same version has another file there)."""

    version: int
    mtime_ns: int
    size: int


_LISTED: dict[str, tuple[tuple[int, int], NewestCommit | None]] = {}
_LOCK = threading.Lock()


def newest_commit(log: str) -> NewestCommit | None:
    """The newest commit of the local log directory `log`; None when it holds no commit file
    (absent, empty, checkpoints only) or cannot be read."""
    try:
        stat = os.stat(log)
    except OSError:
        return None
    stamp = (stat.st_ino, stat.st_mtime_ns)
    with _LOCK:
        found = _LISTED.get(log)
    if found is not None and found[0] == stamp:
        return found[1]
    newest = _list(log)
    if time.time_ns() - stat.st_mtime_ns >= SETTLED_NS:
        with _LOCK:
            if len(_LISTED) >= _LIMIT:
                _LISTED.clear()
            _LISTED[log] = (stamp, newest)
    return newest


def _list(log: str) -> NewestCommit | None:
    try:
        names = os.listdir(log)
    except OSError:
        return None
    version = max((int(m.group(1)) for m in map(_COMMIT.match, names) if m), default=None)
    if version is None:
        return None
    try:
        stat = os.stat(os.path.join(log, f"{version:020d}.json"))
    except OSError:
        return None  # removed meanwhile: the caller lists again next time
    return NewestCommit(version, stat.st_mtime_ns, stat.st_size)
