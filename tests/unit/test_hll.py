"""The profiler's HyperLogLog (statistics.hll): estimates within 2 % from one value to millions,
merging is the union, set hashes tell column order and combinations apart. Pure numpy."""

from __future__ import annotations

import numpy as np
import pytest

from mvlattice.statistics.hll import estimate, leading_zeros, set_hash, update

P = 16


def distinct_hashes(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    found = np.unique(rng.integers(0, 2**63, n, dtype=np.int64).view(np.uint64) * np.uint64(2))
    assert found.size == n  # 2⁶³ values: no repeats at these sizes for these seeds
    return found


def sketch(hashes: np.ndarray) -> np.ndarray:
    registers = np.zeros(1 << P, np.uint8)
    update(registers, hashes, P)
    return registers


@pytest.mark.parametrize("n", [1, 2, 17, 1_000, 40_000, 120_000, 400_000, 3_000_000])
def test_estimate_is_within_two_percent(n: int) -> None:
    hashes = distinct_hashes(n, seed=n)
    got = estimate(sketch(np.concatenate([hashes, hashes[: n // 2]])))  # repeats count once
    assert abs(got - n) / n <= 0.02, (n, got)


def test_no_values_estimate_zero() -> None:
    assert estimate(np.zeros(1 << P, np.uint8)) == 0.0


def test_merging_registers_is_the_union() -> None:
    a, b = distinct_hashes(50_000, 1), distinct_hashes(70_000, 2)
    merged = np.maximum(sketch(a), sketch(b))
    assert np.array_equal(merged, sketch(np.concatenate([a, b])))


def test_leading_zeros_match_python() -> None:
    values = [1, 2, 3, 255, 2**32, 2**63 - 1, 2**63, 2**64 - 1, 12345678901234567]
    got = leading_zeros(np.array(values, np.uint64))
    assert got.tolist() == [64 - v.bit_length() for v in values]


def test_set_hashes_tell_order_and_combinations_apart() -> None:
    a = np.array([1, 2, 3], np.uint64)
    b = np.array([2, 1, 3], np.uint64)
    ab, ba = set_hash([a, b]), set_hash([b, a])
    assert ab[0] != ba[0] and ab[0] == ba[1]  # (1, 2) vs (2, 1) differ; (1, 2) is (1, 2)
    assert len(set(ab.tolist())) == 3
    assert np.array_equal(set_hash([a]), a)  # one column: its own hash
    assert set_hash([a, a, a])[0] != set_hash([a, a])[0]
