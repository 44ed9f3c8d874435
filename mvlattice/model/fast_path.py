"""`fast_path:` in the model: which rewritten queries the tile engine answers in the driver.

    fast_path:
      max_rows: 5000000     # the largest tile (or materialization) it reads, in rows
      max_bytes: 256MiB     # ... and in bytes on storage
      cache_bytes: 1GiB     # Arrow data of small tiles kept in memory, per (tile, version)
      answer_bytes: 64MiB   # answers kept per query text, served while their tiles are fresh

Sizes are numbers of bytes or strings with a unit (KB, MB, GB, KiB, MiB, GiB). `max_rows: 0`
turns the tile engine off for the model; `answer_bytes: 0` keeps no answers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mvlattice.document import Problems, child

KEYS = ("max_rows", "max_bytes", "cache_bytes", "answer_bytes")

_UNITS = {
    "": 1, "b": 1,
    "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
    "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
}  # fmt: skip


@dataclass(kw_only=True, frozen=True, slots=True)
class FastPath:
    max_rows: int = 5_000_000
    max_bytes: int = 256 * 2**20
    cache_bytes: int = 2**30
    answer_bytes: int = 64 * 2**20

    @property
    def enabled(self) -> bool:
        return self.max_rows > 0 and self.max_bytes > 0


def parse_fast_path(root: Mapping[str, Any], problems: Problems) -> FastPath:
    if "fast_path" not in root:
        return FastPath()
    section = problems.mapping(root["fast_path"], "fast_path", "fast_path")
    if section is None:
        return FastPath()
    problems.check_keys(section, "fast_path", KEYS)
    found: dict[str, int] = {}
    for key in KEYS:
        if key in section:
            value = _size(section[key], child("fast_path", key), problems)
            if value is not None:
                found[key] = value
    return FastPath(**found)


def _size(value: Any, path: str, problems: Problems) -> int | None:
    """A whole number, or a string such as `256MiB`."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", value)
        if match and match.group(2).lower() in _UNITS:
            return int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    problems.add(
        path, f"must be a whole number of at least 0 or a size such as 256MiB, got {value!r}"
    )
    return None
