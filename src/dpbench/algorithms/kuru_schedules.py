"""Step sizes, stages and privacy-noise schedules of kuru_acc (Kuru, Birbil, Gürbüzbalaban &
Yıldırım, SIAM J. Optim. 2022), Sections 3–4. Data-free: everything here is a function of public
constants (T, c, L, μ, S₁, n, m, ε), so it can be computed, plotted and tested without data.

Notation: a run of T iterations has step sizes α_1..α_T and stage indices s_1..s_T (all 1 except
for multistage NAG); r_t = 1 − √(μα_t) is the contraction of iteration t. The error bound of
noisy NAG/MASG (eqs. 4.3 and 4.8) reads E_T ≤ a_{T,0}E_0 + Σ_t a_{T,t}(b_t²d + σ_s²/2) with

    a_{T,t} = 2^{s_T − s_t} · Π_{i=t+1}^{T} r_i · α_t(1 + α_t L),   a_{T,0} = 2^{s_T − s_0} · Π_{i=1}^{T} r_i,

(for NAG every s_t = 1 and the powers of two vanish; s_0 = 1, the stage of the initial point).
The authors' code (sibirbil/DPAccGradMethods, ``opt_noise_dist_NAG.m``) computes both with α_t/2
in place of α_t (line 24) and with 2^{s_T} in a_{T,0} (line 37), i.e. ``step_factor`` = 1/2 and
``start_stage`` = s_0 = 0 below; only the choice of T′ sees the difference, as the optimal split
depends on the ratios of the a_{T,t} alone.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import logsumexp

_BUDGET_RTOL = 1e-12  # schedules spend ε(1 − 1e-12): exact to far better than 1e-9, never above
_EXP_SAFE = 700.0  # as in dpbench.privacy.pure: above it, e^x would overflow


# ----------------------------------------------------------------------------- privacy of one iteration
def epsilon_per_iteration(sensitivity: float, noise: np.ndarray | float, n: int, m: int) -> np.ndarray | float:
    """ε(S, b, n, m) = ln[(e^{S/(bm)} − 1)·m/n + 1] (kuru_acc eq. 3.3): the privacy loss of one
    Laplace(b) gradient on a size-m subsample drawn without replacement from n records (the
    ledger's :func:`~dpbench.privacy.pure.amplify_pure`, elementwise)."""
    u = sensitivity / (np.asarray(noise, dtype=float) * m)
    with np.errstate(over="ignore"):
        direct = np.log1p((m / n) * np.expm1(u))
    return np.where(u > _EXP_SAFE, u + np.log1p((1.0 - m / n) * np.expm1(-u)), direct)


def noise_for_epsilon(sensitivity: float, epsilon: np.ndarray | float, n: int, m: int) -> np.ndarray | float:
    """b = S/(m·ε₀) with ε₀ = ln[1 + (e^{ε_t} − 1)·n/m] (eqs. 3.4–3.5): the inverse of
    :func:`epsilon_per_iteration` in b (ε₀ = ε_t + log1p(−expm1(−ε_t)(n/m − 1)) where e^{ε_t}
    would overflow)."""
    eps = np.asarray(epsilon, dtype=float)
    with np.errstate(over="ignore"):
        direct = np.log1p(np.expm1(eps) * (n / m))
    eps0 = np.where(eps > _EXP_SAFE, eps + np.log1p(-np.expm1(-eps) * (n / m - 1.0)), direct)
    return sensitivity / (m * eps0)


# ----------------------------------------------------------------------------- steps and stages
def constant_steps(T: int, c: float, L: float) -> tuple[np.ndarray, np.ndarray]:
    """(α_t, s_t) of DP-GD, DP-HB and DP-NAG: α = c/L for every iteration, one stage."""
    return np.full(T, c / L), np.ones(T, dtype=int)


def masg_steps(T: int, c: float, L: float, mu: float, p: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(α_t, s_t) of DP-MASG (eq. 4.7, step sizes scaled by c as in Sec 5).

    Stage 1 has α = c/L and length n_1 = min(T, ⌈2√κ ln √κ⌉) (eq. 4.7 only asks n_1 ≥ 1; this is
    the authors' choice in DP_NAG_LR.m); stage k ≥ 2 has α = c/(2^{2k}L) and length
    2^k⌈√κ ln 2^{p+2}⌉; the last stage is cut at T. κ = L/μ.
    """
    kappa = L / mu
    first = min(T, max(1, math.ceil(2.0 * math.sqrt(kappa) * math.log(math.sqrt(kappa)))))
    unit = math.ceil(math.sqrt(kappa) * math.log(2.0 ** (p + 2)))
    alphas, stages = [c / L] * first, [1] * first
    k = 1
    while len(alphas) < T:
        k += 1
        length = min(2**k * unit, T - len(alphas))
        alphas += [c / (2 ** (2 * k) * L)] * length
        stages += [k] * length
    return np.asarray(alphas), np.asarray(stages)


def momentum(alphas: np.ndarray, mu: float) -> np.ndarray:
    """β_t = (1 − √(μα_t))/(1 + √(μα_t)) (Thm 4.1; Sec 5 for DP-HB and the MASG stages)."""
    root = np.sqrt(mu * np.asarray(alphas))
    return (1.0 - root) / (1.0 + root)


# ----------------------------------------------------------------------------- the error bound
def _log_terms(alphas: np.ndarray, stages: np.ndarray, mu: float, L: float, step_factor: float = 1.0):
    """Prefix sums P_k = Σ_{i≤k} ln r_i (P_0 = 0), and w_t = ln(f·α_t(1 + α_tL)) − P_t − s_t ln 2
    with f = ``step_factor`` (1 in eqs. 4.3 and 4.8)."""
    alphas = np.asarray(alphas, dtype=float)
    if np.any(mu * alphas >= 1.0):
        raise ValueError("every step size must satisfy μα < 1")
    prefix = np.concatenate([[0.0], np.cumsum(np.log1p(-np.sqrt(mu * alphas)))])
    w = np.log(step_factor * alphas * (1.0 + alphas * L)) - prefix[1:] - np.asarray(stages) * math.log(2.0)
    return prefix, w


def error_weights(
    alphas: np.ndarray,
    stages: np.ndarray,
    mu: float,
    L: float,
    *,
    step_factor: float = 1.0,
    start_stage: int = 1,
) -> tuple[float, np.ndarray]:
    """(a_{T,0}, [a_{T,1}, …, a_{T,T}]) of eq. 4.3 (NAG) / eq. 4.8 (MASG) for the whole run; s_0 =
    ``start_stage`` and α_t scaled by ``step_factor`` in a_{T,t} (the module docstring's authors' variant)."""
    prefix, w = _log_terms(alphas, stages, mu, L, step_factor)
    head = prefix[-1] + stages[-1] * math.log(2.0)
    return float(np.exp(head - start_stage * math.log(2.0))), np.exp(head + w)


def optimal_epsilons(a: np.ndarray, epsilon: float) -> np.ndarray:
    """ε_t = ε·a_{T,t}^{1/3} / Σ_j a_{T,j}^{1/3} (Prop. 4.2 written as a budget split)."""
    log_third = np.log(np.asarray(a, dtype=float)) / 3.0
    return epsilon * np.exp(log_third - logsumexp(log_third))


def optimal_bound(a0: float, a: np.ndarray, E0: float, d: int, sensitivity: float, n: int, epsilon: float) -> float:
    """The optimised bound (4.6): a_{T,0}E_0 + d·S₁²/(n²ε²)·(Σ_t a_{T,t}^{1/3})³."""
    return a0 * E0 + d * sensitivity**2 / (n * epsilon) ** 2 * float(np.sum(np.cbrt(a))) ** 3


def choose_iterations(
    alphas: np.ndarray,
    stages: np.ndarray,
    mu: float,
    L: float,
    *,
    E0: float,
    d: int,
    sensitivity: float,
    n: int,
    epsilon: float,
    step_factor: float = 1.0,
    start_stage: int = 1,
) -> int:
    """T' = argmin_{T' ≤ T} of bound (4.6) for the run cut after T' iterations (Remark 4.1, Sec 5:
    "computed the bound in (4.6) for each T' ≤ T"), all T' at once in log space; ``step_factor`` and
    ``start_stage`` as in :func:`error_weights`."""
    prefix, w = _log_terms(alphas, stages, mu, L, step_factor)
    heads = prefix[1:] + np.asarray(stages) * math.log(2.0)  # ln of a_{T',t}/exp(w_t), for each T'
    log_sum_cbrt = heads / 3.0 + np.logaddexp.accumulate(w / 3.0)  # ln Σ_{t≤T'} a_{T',t}^{1/3}
    log_noise = math.log(d * sensitivity**2 / (n * epsilon) ** 2) + 3.0 * log_sum_cbrt
    log_start = heads - start_stage * math.log(2.0) + math.log(E0)
    return int(np.argmin(np.logaddexp(log_start, log_noise))) + 1


# ----------------------------------------------------------------------------- noise schedules
def uniform_noise(sensitivity: float, epsilon: float, T: int, n: int, m: int) -> np.ndarray:
    """b_t of Prop. 3.1 for every t: ε/T per iteration through eqs. (3.4)–(3.5), the total kept
    at or just under ε."""
    return np.full(T, float(noise_for_epsilon(sensitivity, epsilon * (1.0 - _BUDGET_RTOL) / T, n, m)))


def split_noise(a: np.ndarray, sensitivity: float, epsilon: float, n: int, m: int) -> np.ndarray:
    """b_t spending ε_t = ε·a_{T,t}^{1/3}/Σ_j a_{T,j}^{1/3} (Prop. 4.2's split, optimal for m = n) through
    eqs. (3.4)–(3.5) for m of n: under subsampling, Prop. 4.2 used "as a guide" (Remark 4.2), as Sec 5
    and the authors' code do (``opt_noise_dist_NAG.m`` line 51, ``DP_NAG_LR.m`` line 88). The total
    is kept at or just under ε."""
    return noise_for_epsilon(sensitivity, optimal_epsilons(a, epsilon * (1.0 - _BUDGET_RTOL)), n, m)


def optimal_noise(a: np.ndarray, sensitivity: float, epsilon: float, n: int, m: int) -> np.ndarray:
    """b_t minimising Σ a_{T,t}b_t² subject to Σ ε(S₁, b_t, n, m) = ε (problem 4.4).

    m = n: the closed form of Prop. 4.2, b_t = S₁Σ_j a_j^{1/3} / (a_t^{1/3} n ε) (eq. 4.5).
    m < n: with u_t = S₁/(m b_t) the per-iteration ε₀, the stationarity condition of the
    Lagrangian is a_t·φ(u_t) = λ' with φ(u) = ((1 − q)e^{−u} + q)/u³ (q = m/n), strictly
    decreasing, so each u_t is a 1-D root for a given λ' and the budget Σ ln(1 + q(e^{u_t} − 1))
    is increasing in 1/λ'; an outer root-find on ln λ' meets it. The m = n schedule
    (Remark 4.2) brackets the search. The total is ε(1 − 1e-12), never above ε.
    """
    a = np.asarray(a, dtype=float)
    if m >= n:
        return split_noise(a, sensitivity, epsilon, n, n)
    target = epsilon * (1.0 - _BUDGET_RTOL)
    q = m / n
    log_a = np.log(a)

    def log_phi(u: np.ndarray) -> np.ndarray:
        return np.log((1.0 - q) * np.exp(-u) + q) - 3.0 * np.log(u)

    def u_for(log_lam: float) -> np.ndarray:
        # solve ln a_t + ln φ(u_t) = ln λ' for every t at once, by bisection on ln u
        lo, hi = np.full(a.shape, -40.0), np.full(a.shape, 40.0)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            above = log_a + log_phi(np.exp(mid)) > log_lam
            lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
        return np.exp(0.5 * (lo + hi))

    def excess(log_lam: float) -> float:
        return float(np.sum(np.log1p(q * np.expm1(u_for(log_lam))))) - target

    # bracket ln λ' with the values the m = n split of Remark 4.2 would imply
    start_u = np.log1p(np.expm1(optimal_epsilons(a, target)) / q)
    implied = log_a + log_phi(start_u)
    lo_lam, hi_lam = float(implied.min()) - 1.0, float(implied.max()) + 1.0
    while excess(lo_lam) < 0:
        lo_lam -= 10.0
    while excess(hi_lam) > 0:
        hi_lam += 10.0
    u = u_for(brentq(excess, lo_lam, hi_lam, xtol=1e-13, maxiter=500))
    eps_t = np.log1p(q * np.expm1(u))
    eps_t *= target / float(np.sum(eps_t))  # absorb the root-finder's last rounding
    return noise_for_epsilon(sensitivity, eps_t, n, m)
