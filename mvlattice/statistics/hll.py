"""HyperLogLog over numpy arrays of 64-bit hashes: registers, merging, and Ertl's estimate.

The profiler hashes each column once in Spark (`counting_sql.column_hashes`) and hands the hash
columns to Python in Arrow batches; every column set's hash is then a few vectorized integer
operations over those columns, and its sketch a `np.maximum.at` into 2^p one-byte registers.
That replaces one interpreted `hll_sketch_agg` per set and row (bench/profile.py: the per-row
cost was ~100 ns per set) with ~20 vectorized passes of a few ns per row.

Estimate: Ertl, "New cardinality estimation algorithms for HyperLogLog sketches" (2017), the
improved raw estimator. It is unbiased from one value up to 2^64 without HLL++'s empirical bias
tables, with relative standard error ~1.04/√m (p = 16: 0.41 %).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

U64 = np.uint64
# Odd multipliers (golden ratio, and the two of murmur3's fmix64) place each column of a set
# apart, so that (a, b) and (b, a) hash differently.
POSITION = (U64(0x9E3779B97F4A7C15), U64(0xFF51AFD7ED558CCD), U64(0xC4CEB9FE1A85EC53))


def set_hash(columns: Sequence[np.ndarray]) -> np.ndarray:
    """One well-mixed 64-bit hash per row for a set of per-column hashes (uint64 arrays).

    A single column's hash (xxhash64) is used as it is. Several are weighted by position,
    summed (wrapping) and mixed by murmur3's fmix64, a bijection: two different combinations
    collide with probability ~2⁻⁶⁴ per pair, far below the sketch's own error."""
    if len(columns) == 1:
        return columns[0]
    total = columns[0] * POSITION[0]
    for i, column in enumerate(columns[1:], start=1):
        total += column * POSITION[i % len(POSITION)] + U64(i)
    return fmix64(total)


def fmix64(x: np.ndarray) -> np.ndarray:
    x = x ^ (x >> U64(33))
    x *= U64(0xFF51AFD7ED558CCD)
    x ^= x >> U64(33)
    x *= U64(0xC4CEB9FE1A85EC53)
    x ^= x >> U64(33)
    return x


def update(registers: np.ndarray, hashes: np.ndarray, p: int) -> None:
    """Fold `hashes` (uint64) into `registers` (uint8, 2^p of them), in place: the first p bits
    pick the register, the rank of the first 1 in the other 64 - p bits is kept if larger."""
    index = (hashes >> U64(64 - p)).astype(np.intp)
    rest = (hashes << U64(p)) | U64(1 << (p - 1))  # a sentinel bit caps the rank at 65 - p
    np.maximum.at(registers, index, leading_zeros(rest) + np.uint8(1))


def leading_zeros(x: np.ndarray) -> np.ndarray:
    """Leading zero bits of each uint64 (x > 0), as uint8: 64 minus the bits after smearing the
    highest 1 down (numpy has no clz; float conversion of uint64 measured 4× slower)."""
    x = x | (x >> U64(1))
    x |= x >> U64(2)
    x |= x >> U64(4)
    x |= x >> U64(8)
    x |= x >> U64(16)
    x |= x >> U64(32)
    return (np.uint8(64) - np.bitwise_count(x)).astype(np.uint8)


def estimate(registers: np.ndarray) -> float:
    """Ertl's improved raw estimate of the number of distinct hashes folded in."""
    m = registers.size
    p = m.bit_length() - 1
    q = 64 - p
    counts = np.bincount(registers, minlength=q + 2).astype(float)
    z = m * _tau(1.0 - counts[q + 1] / m)
    for k in range(q, 0, -1):
        z = 0.5 * (z + counts[k])
    z += m * _sigma(counts[0] / m)
    return m * m / (2.0 * math.log(2.0)) / z if z > 0 else 0.0


def _sigma(x: float) -> float:
    if x == 1.0:
        return math.inf
    y, z = 1.0, x
    while True:
        x *= x
        previous = z
        z += x * y
        y += y
        if z == previous:
            return z


def _tau(x: float) -> float:
    if x in (0.0, 1.0):
        return 0.0
    y, z = 1.0, 1.0 - x
    while True:
        x = math.sqrt(x)
        previous = z
        y *= 0.5
        z -= (1.0 - x) ** 2 * y
        if z == previous:
            return z / 3.0
