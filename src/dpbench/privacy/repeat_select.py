"""Private hyper-parameter selection: the RDP of repeating a private trial a random number of times
and releasing only the best (Papernot & Steinke, "Hyperparameter tuning with Rényi differential
privacy", ICLR 2022, arXiv:2110.03620v2).

The number of trials K is drawn from a public distribution: a truncated negative binomial
TNB(η, γ) of shape η ∈ (0, ∞) (η = 1 is the geometric law), the logarithmic law (η = 0), or Poisson
(η = ∞). Each trial is an RDP mechanism Q with curve ε(λ); the procedure releases the best trial's
output (and its score), nothing about the others. :func:`rdp_repeat_and_select` gives the curve of the
whole procedure, :func:`sample_trials` draws K. dp-accounting's ``RepeatAndSelectDpEvent`` implements
the same theorems; tests/privacy/test_repeat_select.py checks the two agree.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from dpbench.privacy._checks import check_positive


def _check(mean: float, shape: float) -> tuple[float, float]:
    if not (isinstance(mean, (int, float)) and math.isfinite(mean) and mean >= 1.0):
        raise ValueError(f"the mean number of trials must be finite and ≥ 1, got {mean!r}")
    if not (isinstance(shape, (int, float)) and shape >= 0.0 and not math.isnan(shape)):
        raise ValueError(f"the shape of the trial-count law must be ≥ 0 (inf = Poisson), got {shape!r}")
    return float(mean), float(shape)


def tnb_mean(gamma: float, shape: float) -> float:
    """E[K] of TNB(η = ``shape``, γ) (Papernot & Steinke Def. 1): η(1/γ − 1)/(1 − γ^η), the logarithmic
    limit (1/γ − 1)/log(1/γ) for η = 0, 1/γ for the geometric η = 1."""
    if not 0.0 < gamma <= 1.0:
        raise ValueError(f"gamma must be in (0, 1], got {gamma!r}")
    if gamma == 1.0:
        return 1.0
    if shape == 1.0:
        return 1.0 / gamma
    if shape == 0.0:
        return (1.0 / gamma - 1.0) / math.log(1.0 / gamma)
    return shape * (1.0 / gamma - 1.0) / -math.expm1(shape * math.log(gamma))


@functools.lru_cache(maxsize=64)
def tnb_gamma(mean: float, shape: float, rtol: float = 1e-12) -> float:
    """The γ with E[K] = ``mean`` under TNB(``shape``, γ), by bisection (E[K] falls as γ grows); the lower
    end of the final bracket is returned, whose mean is ≥ the one asked for — the conservative side,
    as the bound grows with log(1/γ) and log E[K] is charged at the requested mean. Cached: a run, or an
    audit drawing K for each of 10⁵ runs, asks for the same γ every time."""
    mean, shape = _check(mean, shape)
    if shape == 1.0:
        return 1.0 / mean
    low, high = 0.0, min(1.0, 2.0 * (shape + 1.0) / mean)  # E[K] ≤ 2(η + 1)/γ
    while high - low > rtol * high:
        mid = 0.5 * (low + high)
        if tnb_mean(mid, shape) < mean:
            high = mid
        else:
            low = mid
    return low


def delta_from_rdp(orders: np.ndarray, rdp: np.ndarray, epsilon: float) -> float:
    """The δ at which a mechanism with RDP curve ``rdp`` over ``orders`` is (ε, δ)-DP: the tight
    conversion (Canonne, Kamath & Steinke 2020 Prop. 12, as :func:`~dpbench.privacy.rdp.eps_from_rdp`
    uses in the other direction), with the bound √(1 − e^{−ε(λ)}) for small orders."""
    orders, rdp = np.asarray(orders, dtype=float), np.asarray(rdp, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = np.where(rdp > 0, 0.5 * np.log1p(-np.exp(-rdp)), -np.inf)
        conversion = (orders - 1.0) * (rdp - epsilon + np.log1p(-1.0 / orders)) - np.log(orders)
    log_delta = np.where(orders > 1.01, np.minimum(kl, conversion), kl)
    return float(min(1.0, math.exp(float(np.min(log_delta)))))


def rdp_repeat_and_select(orders: np.ndarray, rdp: np.ndarray, mean: float, shape: float) -> np.ndarray:
    """The RDP curve of releasing the best of K trials, each with curve ``rdp`` over ``orders``.

    Truncated negative binomial and logarithmic laws (Papernot & Steinke Thm 2, minimised over the
    free order λ̂ ∈ ``orders``):
        ε′(λ) = ε(λ) + (1 + η)·min_λ̂ [(1 − 1/λ̂)·ε(λ̂) + log(1/γ)/λ̂] + log E[K]/(λ − 1),
    then made monotone in λ (RDP is non-decreasing in the order). Poisson (η = ∞, Thm 6):
        ε′(λ) = ε(λ) + E[K]·δ̂ + log E[K]/(λ − 1),  δ̂ = δ of the trial at ε̂ = log(1 + 1/(λ − 1)).
    Orders ≤ 1 get ∞ (the theorems need λ > 1)."""
    mean, shape = _check(mean, shape)
    orders, rdp = np.asarray(orders, dtype=float), np.asarray(rdp, dtype=float)
    if orders.shape != rdp.shape:
        raise ValueError(f"orders and rdp must have the same shape, got {orders.shape} and {rdp.shape}")
    valid = orders > 1.0
    out = np.full(orders.shape, np.inf)
    if shape == math.inf:
        for i in np.flatnonzero(valid):
            delta_hat = delta_from_rdp(orders, rdp, math.log1p(1.0 / (orders[i] - 1.0)))
            out[i] = rdp[i] + mean * delta_hat + math.log(mean) / (orders[i] - 1.0)
        return out
    gamma = tnb_gamma(mean, shape)
    constant = (1.0 + shape) * float(np.min((1.0 - 1.0 / orders[valid]) * rdp[valid] - math.log(gamma) / orders[valid]))
    out[valid] = rdp[valid] + math.log(mean) / (orders[valid] - 1.0) + constant
    # monotonicity: ε′(λ) ≤ ε′(λ′) for every λ′ ≥ λ
    order = np.argsort(orders)
    out[order] = np.minimum.accumulate(out[order][::-1])[::-1]
    return out


def sample_trials(mean: float, shape: float, rng: np.random.Generator) -> int:
    """Draw K ≥ 1 from TNB(η, γ) with E[K] = ``mean`` (η = ``shape``; the logarithmic law for η = 0), or
    K from Poisson(mean) for η = ∞ (K = 0 is then possible: the procedure releases nothing)."""
    mean, shape = _check(mean, shape)
    check_positive("mean", mean)
    if shape == math.inf:
        return int(rng.poisson(mean))
    gamma = tnb_gamma(mean, shape)
    if gamma >= 1.0:
        return 1
    if shape == 0.0:
        return int(rng.logseries(1.0 - gamma))
    while True:  # NB(η, γ) failures before η successes, conditioned on ≥ 1 (Papernot & Steinke Def. 1)
        k = int(rng.negative_binomial(shape, gamma))
        if k >= 1:
            return k
