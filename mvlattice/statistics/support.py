"""Which dependencies sketched distinct counts can support: the profiler's rule for claiming one.

X → y is read off counts as d(X ∪ {y}) = d(X). A violation — one value of X with two values of
y — adds at least one combination: d(X ∪ {y}) ≥ d(X) + 1. So a count can support X → y only
where its error is below one value; "equal within 2 %" supports nothing at 1,000 values (where
2 % is 20 combinations: `store_sales, gross_weight -> brand_name` on FoodMart).

**Large counts (no claim).** A HyperLogLog sketch of m = 2^p registers has relative standard
error σ = 1.04/√m (p = 16: 0.41 %). X and X ∪ {y} hash differently (`hll.set_hash`), so their
errors are independent and the difference of the two estimates has standard error
σ·√(d(X)² + d(X ∪ {y})²) ≈ 1.41·σ·n. A confidence bound of z such errors rules out only
violations larger than z·1.41·σ·n combinations — at n = 1,000, p = 16, z = 3, up to 17 violating
combinations are invisible. Requiring that band to be below one, so that one violating pair moves
the estimate by more than the error, gives n < 1/(1.41·z·σ): 58 for p = 16, z = 3. Below that,
with whole-number counts (`sketch._bounded` rounds), "within the bound" means "equal".

**Small counts (the claim).** Below √m the sketch is linear counting in effect: n hashes in
distinct registers estimate n exactly after rounding (Ertl's correction, ≈ n²/2m, rounds to 0),
and each pair of hashes sharing a register loses one value; the sketch never overshoots there.
So a violation (d(X ∪ {y}) ≥ n + 1) hides behind equal estimates n = n only if the sketch of
X ∪ {y} lost a value to a shared register. By the union bound over pairs, that happens with
probability at most (n + 1)·n / 2m. Claim X → y from sketches only when

    d̂(X ∪ {y}) = d̂(X) = n   and   (n + 1)·n / 2m ≤ α,

α = 1 %: n ≤ 35 for p = 16 (this bound is the stricter of the two). Exact counts claim on
equality alone, and a dependency the star's joins guarantee (`statistics.implied`) needs no
evidence from counts. Everything else is not claimed, and the planner's estimator never takes
it for a dependency, only for its measured ratio d(X ∪ {y}) / d(X) (`estimate`, rule 1).
"""

from __future__ import annotations

import math

SKETCH_PRECISION = 16  # p: the profiler's sketches have 2^p registers
FALSE_CLAIM = 0.01  # α: the most a claimed dependency may be a hidden violation, per claim


def largest_supported(p: int = SKETCH_PRECISION, alpha: float = FALSE_CLAIM) -> int:
    """The largest count n at which equal sketched counts support a dependency:
    (n + 1)·n / 2^(p + 1) ≤ alpha (module docstring).

    >>> largest_supported(16)
    35
    >>> largest_supported(4)
    0
    """
    budget = alpha * 2.0 ** (p + 1)
    n = math.isqrt(int(budget))
    while n > 0 and (n + 1) * n > budget:
        n -= 1
    return n


SUPPORTED = largest_supported()


def sketch_supports(determinant: float, target: float, limit: float = SUPPORTED) -> bool:
    """Whether sketched counts d̂(X) = `determinant`, d̂(X ∪ {y}) = `target` support X → y."""
    return target == determinant and target <= limit
