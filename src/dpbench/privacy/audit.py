"""Statistical privacy auditing: high-confidence lower bounds on ε from samples of a mechanism on
two neighbouring inputs (the Clopper–Pearson method of Jagielski, Ullman & Oprea 2020, Sec. 3)."""

from __future__ import annotations

import math
from numbers import Integral, Real

from scipy.stats import beta


def _check_counts(successes: object, trials: object) -> tuple[int, int]:
    if isinstance(trials, bool) or not isinstance(trials, Integral) or trials < 1:
        raise ValueError(f"trials must be an integer >= 1, got {trials!r}")
    if isinstance(successes, bool) or not isinstance(successes, Integral) or not 0 <= successes <= trials:
        raise ValueError(f"successes must be an integer in [0, trials={trials}], got {successes!r}")
    return int(successes), int(trials)


def _check_level(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {value!r}")
    return float(value)


def clopper_pearson(successes: int, trials: int, confidence: float) -> tuple[float, float]:
    """Two-sided exact (Clopper & Pearson 1934) interval for a binomial proportion at level ``confidence``.

    Each end is also the one-sided bound at level (1 + confidence)/2.
    """
    k, n = _check_counts(successes, trials)
    tail = (1.0 - _check_level("confidence", confidence)) / 2.0
    lo = 0.0 if k == 0 else float(beta.ppf(tail, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1.0 - tail, k + 1, n - k))
    return lo, hi


def epsilon_lower_bound(k1: int, n1: int, k0: int, n0: int, *, delta: float = 0.0, confidence: float = 0.99) -> float:
    """A lower bound, holding with probability ≥ ``confidence``, on ln((p₁ − δ)/p₀).

    p₁ = P[M(D) ∈ S] is estimated by k1 hits in n1 runs on D and p₀ = P[M(D′) ∈ S] by k0 hits in n0
    runs on D′. A one-sided Clopper–Pearson lower bound for p₁ and upper bound for p₀, each at
    level (1 − confidence)/2, hold jointly with probability ≥ ``confidence`` (union bound). An
    (ε, δ)-DP mechanism has p₁ ≤ e^ε p₀ + δ, so a result above ε refutes the claim. Returns −inf
    when the lower bound on p₁ is ≤ δ.
    """
    if isinstance(delta, bool) or not isinstance(delta, Real) or not 0.0 <= delta < 1.0:
        raise ValueError(f"delta must be in [0, 1), got {delta!r}")
    p1_lo = clopper_pearson(k1, n1, confidence)[0]
    p0_hi = clopper_pearson(k0, n0, confidence)[1]
    if p1_lo <= delta:
        return -math.inf
    return math.log((p1_lo - delta) / p0_hi)
