"""Budgets users think in: bytes (`500MB`, `2GiB`) or a share of the fact table (`5%`).

A tile's bytes are estimated as rows × stored columns × bytes per value. Bytes per value are
measured on the lattice's built tiles (their Delta size over rows × columns, so Parquet's
compression and per-file overhead are in it) when there are any; else DEFAULT_BYTES_PER_VALUE,
a plain 8-byte value (a BIGINT, a DOUBLE, a short string), which over-estimates compressed
Parquet for the small tiles planning picks and so keeps a budget on the safe side.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from mvlattice.errors import UsageError
from mvlattice.lattice.lattice import Measure
from mvlattice.lattice.measures import stored_columns

DEFAULT_BYTES_PER_VALUE = 8.0

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "k": 2**10,
    "kib": 2**10,
    "m": 2**20,
    "mib": 2**20,
    "g": 2**30,
    "gib": 2**30,
    "t": 2**40,
    "tib": 2**40,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)\s*$")


def parse_bytes(text: str) -> float:
    """'500MB' (10^6), '2GiB' (2^30), '1.5g', '1024' -> bytes."""
    found = _SIZE.match(text)
    unit = found.group(2).lower() if found else ""
    if found is None or unit not in _UNITS:
        raise UsageError(
            f"'{text}' is not a size: write a number with an optional unit "
            "(B, KB, MB, GB, TB; KiB, MiB, GiB, TiB), e.g. 500MB or 2GiB"
        )
    return float(found.group(1)) * _UNITS[unit]


def parse_share(text: str) -> float:
    """'5%' or '0.05' -> 0.05; a share of the fact table's bytes, in (0, 1]... or above."""
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise UsageError(f"'{text}' is not a share: write a percentage like 5% or 0.05") from None
    if not value > 0 or value == float("inf"):
        raise UsageError(f"a share must be more than 0, got '{text}'")
    return value


@dataclass(frozen=True, slots=True)
class Budget:
    """What the plan may spend in bytes (`max_bytes`, None: no byte limit), how bytes are
    estimated (`bytes_per_value`, `measured`: from built tiles), and the fact table's bytes
    when known (what `--max-share` is a share of)."""

    max_bytes: float | None = None
    bytes_per_value: float = DEFAULT_BYTES_PER_VALUE
    measured: bool = False
    fact_bytes: float | None = None
    share: float | None = None


@dataclass(frozen=True, slots=True)
class Limits:
    """What a user limits a plan by, as `plan` and `materialize` take it: summed rows, bytes,
    or a share of the fact table's bytes (`--max-rows`, `--max-bytes`, `--max-share`)."""

    max_rows: float | None = None
    max_bytes: float | None = None
    max_share: float | None = None


def resolve(limits: Limits | None, measured: float | None, fact_bytes: float | None) -> Budget:
    """The byte budget of `limits`: the smaller of `max_bytes` and `max_share` × the fact
    table's bytes; bytes per value measured on built tiles when known."""
    limits = limits or Limits()
    caps = [limits.max_bytes] if limits.max_bytes is not None else []
    if limits.max_share is not None:
        if fact_bytes is None:
            raise UsageError("--max-share needs the fact table's size, which is not known here")
        caps.append(limits.max_share * fact_bytes)
    return Budget(
        max_bytes=min(caps) if caps else None,
        bytes_per_value=measured if measured is not None else DEFAULT_BYTES_PER_VALUE,
        measured=measured is not None,
        fact_bytes=fact_bytes,
        share=limits.max_share,
    )


def stored_width(dimensions: Iterable[str], measures: Iterable[Measure]) -> int:
    """Columns a tile stores: one per dimension, one or more per measure."""
    names = {c.name for m in measures for c in stored_columns(m)}
    return len(tuple(dimensions)) + len(names)


def tile_bytes(rows: float, width: int, bytes_per_value: float) -> float:
    return rows * width * bytes_per_value


def measured_bytes_per_value(tiles: Iterable[tuple[int | None, int | None, int]]) -> float | None:
    """From built tiles' (size_bytes, rows, stored columns): total bytes over total values;
    None when no built tile has rows."""
    size = values = 0
    for size_bytes, rows, width in tiles:
        if size_bytes and rows and width:
            size += size_bytes
            values += rows * width
    return size / values if values else None
