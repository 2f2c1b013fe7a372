"""The sensitivities kusner_bo's releases are calibrated to (Algorithms 1–3, Theorems 1, 3, 5, 7).

Every function returns the bound Δ for ONE release; the Laplace scale is Δ/ε and the exponential
mechanism samples ∝ exp(εμ/(2Δ)). Under Assumption 1 (the validation gains of all validation sets
are jointly a GP with kernel k₁(V, V′)·k₂(λ, λ′)) the bounds of Theorems 1, 3 and 5 hold with
probability ≥ 1 − δ, which makes the releases (ε, δ)-DP (Corollaries 1–3); Theorem 7's bound
holds always under Assumption 2 (ε-DP, Corollary 4).
"""

from __future__ import annotations

import math

from dpbench.bo.gp import beta

__all__ = [
    "alg1_value_sensitivity",
    "alg2_value_sensitivity",
    "alg3_value_sensitivity",
    "c_term",
    "hyperparameter_sensitivity",
    "q_term",
]


def _check(name: str, value: float, *, low: float = 0.0, high: float = math.inf, closed_low: bool = False) -> float:
    ok = math.isfinite(value) and (value >= low if closed_low else value > low) and value < high
    if not ok:
        raise ValueError(f"{name} must be in {'[' if closed_low else '('}{low:g}, {high:g}), got {value!r}")
    return float(value)


def c_term(k1: float, n_candidates: int, delta: float, *, union: int = 3) -> float:
    """c = 2√((1 − k₁(V, V′)) log(union·|Λ|/δ)): Alg. 1 (union = 3) and Alg. 2 (union = 2).

    Bounds |f_V(λ) − f_V′(λ)| on all of Λ with probability ≥ 1 − δ/union (proof of Thm 1)."""
    _check("k1", k1, high=1.0, closed_low=True)
    _check("delta", delta, high=1.0)
    return 2.0 * math.sqrt((1.0 - k1) * math.log(union * n_candidates / delta))


def q_term(noise_std: float, delta: float) -> float:
    """q = σ√(4 log(3/δ)) (Alg. 1): bounds twice the largest observation noise w.p. ≥ 1 − δ/3 (Thm 3)."""
    _check("noise_std", noise_std, closed_low=True)
    _check("delta", delta, high=1.0)
    return noise_std * math.sqrt(4.0 * math.log(3.0 / delta))


def hyperparameter_sensitivity(iterations: int, n_candidates: int, delta: float, k1: float) -> float:
    """Δ = 2√β_{T+1} + c of Alg. 1's exponential mechanism on μ_T (Thm 1, Thm 2). Sec. 4 uses the
    same release without observation noise (Theorems 1–2 hold with q = 0)."""
    return 2.0 * math.sqrt(beta(iterations + 1, n_candidates, delta)) + c_term(k1, n_candidates, delta)


def alg1_value_sensitivity(
    iterations: int, n_candidates: int, delta: float, k1: float, noise_variance: float, gamma_t: float
) -> float:
    """Δ = √(C₁β_Tγ_T/T) + c + q (Thm 3), C₁ = 8/log(1 + σ⁻²): Alg. 1's Laplace scale times ε."""
    variance = _check("noise_variance", noise_variance)
    c1 = 8.0 / math.log1p(1.0 / variance)
    regret = math.sqrt(c1 * beta(iterations, n_candidates, delta) * _check("gamma_t", gamma_t) / iterations)
    return regret + c_term(k1, n_candidates, delta) + q_term(math.sqrt(variance), delta)


def alg2_value_sensitivity(a: float, tau: float, dim: int, n_candidates: int, delta: float, k1: float) -> float:
    """Δ = A e^{−2τ/(log 2)^{d/4}} + c (Thm 5, c with log(2|Λ|/δ)): Alg. 2's Laplace scale times ε.

    A and τ are the constants of de Freitas et al. (2012)'s regret bound, inputs of Alg. 2."""
    regret = _check("A", a) * math.exp(-2.0 * _check("tau", tau) / math.log(2.0) ** (dim / 4.0))
    return regret + c_term(k1, n_candidates, delta, union=2)


def alg3_value_sensitivity(
    lipschitz: float, validation_size: int, lambda_min: float, lambda_max: float, g_max: float
) -> float:
    """Δ = min{g*/m, L/(mλ_min)} + (λ_max − λ_min)L/(λ_maxλ_min) (Thm 7 and the display after it):
    Alg. 3's Laplace scale times ε, for models trained by eq. (10) with a 1-Lipschitz convex loss
    and an L-Lipschitz validation loss g ≤ g* on m validation records."""
    L = _check("lipschitz", lipschitz)
    lo, hi = _check("lambda_min", lambda_min), _check("lambda_max", lambda_max)
    if hi < lo:
        raise ValueError(f"lambda_max ({hi!r}) must be ≥ lambda_min ({lo!r})")
    if validation_size < 1:
        raise ValueError(f"validation_size must be ≥ 1, got {validation_size!r}")
    swap = min(_check("g_max", g_max) / validation_size, L / (validation_size * lo))
    return swap + (hi - lo) * L / (hi * lo)
