"""Pure ε-DP: privacy amplification by Poisson subsampling."""

from __future__ import annotations

import math

from dpbench.privacy._checks import check_positive, check_rate

_EXP_SAFE = 700.0  # e^700 is finite in float64; above it the overflow-free forms are used


def amplify_pure(epsilon: float, sampling_rate: float) -> float:
    """An ε-DP mechanism run on a Poisson subsample of rate q is ln(1 + q(e^ε − 1))-DP.

    The amplification used by kuru_acc eq. (3.3) (their Thm A.3 = Balle, Barthe & Gaboardi 2018
    Thm 9 for sampling without replacement; Thm 8 there gives the same bound for Poisson sampling
    and add/remove neighbours), computed as log1p(q · expm1(ε)) for accuracy at small ε and q, and
    as ε + log1p((1 − q)·expm1(−ε)) (the same value) where e^ε would overflow.
    """
    eps = check_positive("epsilon", epsilon)
    q = check_rate(sampling_rate)
    if eps > _EXP_SAFE:
        return eps + math.log1p((1.0 - q) * math.expm1(-eps))
    return math.log1p(q * math.expm1(eps))
