"""Rényi-DP curves ε(α) evaluated on arrays of orders α, and their conversion to (ε, δ)-DP.

Every curve function takes the mechanism's parameters and an array of orders and returns an
array of the same shape. Curves compose by addition (chen_lee Lemma 3). Formulas are the ones of
chen_lee Sec. 3 and App. B and of Google's ``dp-accounting`` (``rdp_privacy_accountant``), which
the tests cross-check to 1e-9 relative.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
from scipy.special import gammaln

from dpbench.privacy._checks import (
    check_delta,
    check_orders,
    check_positive,
    check_rate,
)

DEFAULT_ORDERS: np.ndarray = np.arange(2, 513, dtype=np.float64)
"""The integer orders 2..512 (chen_lee Sec. 4.3 suggests "integers between 2 and 500")."""
DEFAULT_ORDERS.setflags(write=False)

FILTER_ORDERS: np.ndarray = np.array(
    [2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 96, 128, 192, 256], dtype=np.float64
)
"""The orders of the ``filter`` conversion, fixed before any run (its price grows with log |Λ|, so a
coarse grid: 19 integer orders, each within a factor 1.5 of the next above 2)."""
FILTER_ORDERS.setflags(write=False)

CONVERSIONS = ("tight", "prop1", "filter")


def orders_for(conversion: str) -> np.ndarray:
    """The orders an RDP accountant uses by default for ``conversion``: :data:`FILTER_ORDERS` for
    ``filter``, :data:`DEFAULT_ORDERS` otherwise."""
    if conversion not in CONVERSIONS:
        raise ValueError(f"conversion must be one of {', '.join(CONVERSIONS)}, got {conversion!r}")
    return FILTER_ORDERS if conversion == "filter" else DEFAULT_ORDERS


RdpCurve = Callable[[np.ndarray], np.ndarray]


def rdp_gaussian(noise_multiplier: float, orders: np.ndarray) -> np.ndarray:
    """Gaussian mechanism, std σ × L2 sensitivity: ε(α) = α/(2σ²) (chen_lee Lemma 1; Mironov 2017 Prop. 7)."""
    sigma = check_positive("noise_multiplier", noise_multiplier)
    return check_orders(orders) / (2.0 * sigma**2)


def _laplace_rdp(epsilon: float, orders: np.ndarray) -> np.ndarray:
    """RDP of Laplace noise of scale Δ/ε (Mironov 2017 Prop. 6), as dp-accounting's ``_laplace_rdp``:

    ε(α) = (1/(α−1)) log[α/(2α−1) e^{(α−1)ε} + (α−1)/(2α−1) e^{−αε}]
         = ε + log1p((α−1)/(2α−1) · expm1((1−2α)ε)) / (α−1),

    the second form avoiding the overflow of e^{(α−1)ε}. Clipped to [0, ε]: the pure bound
    (α → ∞ limit) and non-negativity hold exactly and only rounding could break them.
    """
    curve = epsilon + np.log1p((orders - 1.0) * np.expm1(epsilon * (1.0 - 2.0 * orders)) / (2.0 * orders - 1.0)) / (
        orders - 1.0
    )
    return np.clip(curve, 0.0, epsilon)


def rdp_laplace(noise_multiplier: float, orders: np.ndarray) -> np.ndarray:
    """Laplace mechanism with scale b = noise_multiplier × L1 sensitivity (Mironov 2017 Prop. 6, ε = 1/b)."""
    b = check_positive("noise_multiplier", noise_multiplier)
    return _laplace_rdp(1.0 / b, check_orders(orders))


def rdp_pure(epsilon: float, orders: np.ndarray) -> np.ndarray:
    """Any ε-DP mechanism: ε(α) = min(ε, αε²/2) (chen_lee Lemma 2; ε-DP also gives (α, ε)-RDP)."""
    eps = check_positive("epsilon", epsilon)
    return np.minimum(eps, check_orders(orders) * eps**2 / 2.0)


def rdp_zcdp(rho: float, orders: np.ndarray) -> np.ndarray:
    """ρ-zCDP ⇒ (α, αρ)-RDP for every α > 1 (Bun & Steinke 2016 Def. 1.1)."""
    return check_positive("rho", rho) * check_orders(orders)


def rdp_laplace_above_threshold(epsilon1: float, epsilon2: float, orders: np.ndarray) -> np.ndarray:
    """Laplace AboveThreshold (threshold noise Lap(Δ/ε₁), query noise Lap(Δ/ε₂)): chen_lee Thm 2, eq. (4).

    Eq. (4) is the product inside the log of the Laplace H_α terms for a threshold shift of Δ
    (scale Δ/ε₁) and a query shift of 2Δ (scale Δ/ε₂), i.e. the sum of two Laplace RDP curves
    with ε = ε₁ and ε = 2ε₂ (App. B). Capped by the pure guarantee ε₁ + 2ε₂ (chen_lee Lemma 5).
    """
    eps1 = check_positive("epsilon1", epsilon1)
    eps2 = check_positive("epsilon2", epsilon2)
    alphas = check_orders(orders)
    return np.minimum(_laplace_rdp(eps1, alphas) + _laplace_rdp(2.0 * eps2, alphas), eps1 + 2.0 * eps2)


def rdp_gaussian_above_threshold(sigma1: float, sigma2: float, orders: np.ndarray) -> np.ndarray:
    """Gaussian AboveThreshold (threshold std Δσ₁, query std Δσ₂): chen_lee Thm 3, eq. (5).

    ε(α) = α(4σ₁² + σ₂²)/(2σ₁²σ₂²); with σ₁² = 3/(2ρ), σ₂² = 3/ρ this is αρ.
    """
    s1 = check_positive("sigma1", sigma1)
    s2 = check_positive("sigma2", sigma2)
    return check_orders(orders) * (4.0 * s1**2 + s2**2) / (2.0 * s1**2 * s2**2)


@functools.lru_cache(maxsize=8)
def _log_binomial_table(q: float, max_order: int) -> np.ndarray:
    """T[α−2, k−2] = log[C(α,k) q^k (1−q)^{α−k}] for integers 2 ≤ k ≤ α ≤ max_order; −inf if k > α.

    Cached (read-only): calibration re-evaluates subsampled curves at one q for many noise levels.
    """
    a = np.arange(2.0, max_order + 1.0)[:, None]
    k = a.T
    n_minus_k = np.maximum(a - k, 0.0)
    log_comb = gammaln(a + 1.0) - gammaln(k + 1.0) - gammaln(n_minus_k + 1.0)
    table = log_comb + k * math.log(q) + n_minus_k * math.log1p(-q)
    table[k > a] = -np.inf
    table.setflags(write=False)
    return table


def _log_binomial_pmf(alphas: np.ndarray, q: float) -> np.ndarray:
    """Rows of :func:`_log_binomial_table` for the integer orders ``alphas`` (columns k = 2..max α):
    the cached table itself (read-only) when ``alphas`` are 2..max α in order, as the default orders are."""
    top = int(alphas.max())
    rows = alphas.astype(np.int64) - 2
    table = _log_binomial_table(q, top)
    return table if rows.size == top - 1 and np.array_equal(rows, np.arange(top - 1)) else table[rows]


def _logsumexp_rows(x: np.ndarray) -> np.ndarray:
    """log Σ_j exp(x[i, j]) per row; rows may hold −inf (zero terms) and +inf. ``x`` is overwritten
    (callers pass a fresh block: no second copy of it)."""
    top = np.max(x, axis=1)
    shift = np.where(np.isfinite(top), top, 0.0)
    x -= shift[:, None]
    np.exp(x, out=x)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(x, axis=1)) + shift


def _log_expm1(x: np.ndarray) -> np.ndarray:
    """log(e^x − 1) for x ≥ 0 (−inf at 0), without overflow for large x nor cancellation for small x."""
    with np.errstate(divide="ignore"):
        small = np.log(np.expm1(np.minimum(x, 1.0)))
    large = x + np.log1p(-np.exp(-np.maximum(x, 1.0)))
    return np.where(x > 1.0, large, small)


def rdp_poisson_subsampled_gaussian(sampling_rate: float, noise_multiplier: float, orders: np.ndarray) -> np.ndarray:
    """Poisson-subsampled Gaussian mechanism, exact at integer orders (Mironov, Talwar & Zhang 2019 Sec. 3.3).

    ε(α) = log A_α / (α−1) with A_α = Σ_{k=0}^{α} C(α,k) q^k (1−q)^{α−k} e^{(k²−k)/(2σ²)}, the sum
    of dp-accounting's ``_compute_log_a_int``. Because the binomial weights sum to one and the
    k = 0, 1 exponents vanish, A_α = 1 + Σ_{k≥2} C(α,k) q^k (1−q)^{α−k} expm1((k²−k)/(2σ²)), a
    sum of positive terms: we take its logsumexp and then log1p, which keeps full relative
    precision when A_α − 1 is tiny (small q, large σ). q = 1 is the plain Gaussian.
    """
    q = check_rate(sampling_rate)
    sigma = check_positive("noise_multiplier", noise_multiplier)
    alphas = check_orders(orders, integer=True)
    if q == 1.0:
        return rdp_gaussian(sigma, alphas)
    flat = alphas.ravel()
    ks = np.arange(2.0, flat.max() + 1.0)
    log_terms = _log_binomial_pmf(flat, q) + _log_expm1((ks * ks - ks) / (2.0 * sigma**2))
    log_a = np.logaddexp(0.0, _logsumexp_rows(log_terms))
    return (log_a / (flat - 1.0)).reshape(alphas.shape)


def rdp_poisson_subsampled(sampling_rate: float, base_rdp: RdpCurve, orders: np.ndarray) -> np.ndarray:
    """Poisson subsampling of any RDP mechanism: chen_lee Lemma 4 (their ref. [11], Zhu & Wang 2019's general
    upper bound for Poisson subsampling; the Wang, Balle & Kasiviswanathan 2019 bound it resembles is for
    sampling without replacement).

    For integer α ≥ 2, with ε(·) the un-subsampled curve ``base_rdp`` (evaluated at l = 2..max α):

    ε'(α) ≤ (1/(α−1)) log{(1−q)^{α−1}(αq−q+1) + C(α,2) q² (1−q)^{α−2} e^{ε(2)}
                          + 3 Σ_{l=3}^{α} C(α,l) q^l (1−q)^{α−l} e^{(l−1)ε(l)}}.

    The first term is the binomial mass at l = 0, 1, so the braces equal 1 + Σ_{l≥2} C(α,l) q^l
    (1−q)^{α−l} c_l with c_2 = expm1(ε(2)) and c_l = 3e^{(l−1)ε(l)} − 1 for l ≥ 3, all ≥ 0: evaluated
    as log1p∘exp∘logsumexp. The result is also capped by the un-amplified ε(α), since subsampling
    never hurts (joint quasi-convexity of the Rényi divergence).
    """

    def log_terms(q: float, flat: np.ndarray, ls: np.ndarray, base: np.ndarray) -> np.ndarray:
        excess = np.where(
            ls == 2.0,
            _log_expm1(base),
            math.log(3.0) + (ls - 1.0) * base + np.log1p(-np.exp(-(ls - 1.0) * base) / 3.0),
        )
        log_weights = _log_binomial_pmf(flat, q)
        with np.errstate(invalid="ignore"):  # −inf weight (k > α) + inf excess: a zero term
            return np.where(np.isneginf(log_weights), -np.inf, log_weights + excess)

    return _amplified(sampling_rate, base_rdp, orders, log_terms)


def rdp_sampled_without_replacement(sampling_rate: float, base_rdp: RdpCurve, orders: np.ndarray) -> np.ndarray:
    """Subsampling without replacement, replace-one neighbours: Wang, Balle & Kasiviswanathan (2019),
    Theorem 9, for a mechanism whose ε(∞) is not used (taken as ∞, so every min{2, (e^{ε(∞)} − 1)^j}
    is 2). With γ the probability that the differing record is in the sample (m/n) and ε(·) the
    un-subsampled curve ``base_rdp`` (l = 2..max α), for integer α ≥ 2:

    ε'(α) ≤ (1/(α−1)) log{1 + γ² C(α,2) min[4(e^{ε(2)} − 1), 2e^{ε(2)}]
                           + Σ_{j=3}^{α} γ^j C(α,j) · 2e^{(j−1)ε(j)}}.

    For the Gaussian, (j−1)ε(j) is its CGF at j − 1; dp-accounting's ``_compute_rdp_sample_wor_gaussian``
    evaluates the same theorem and, below order 256, takes the minimum with the tighter forward-difference
    term of WBK19 Theorem 27, so this curve is never below it and equals it above 256 (the tests check
    both). The result is capped by the un-amplified ε(α) (joint quasi-convexity of the Rényi divergence:
    subsampling never hurts). Logs throughout, so huge terms neither overflow nor lose small ones.
    """

    def log_terms(q: float, flat: np.ndarray, ls: np.ndarray, base: np.ndarray) -> np.ndarray:
        factor = np.where(
            ls == 2.0,
            np.minimum(math.log(4.0) + _log_expm1(base), math.log(2.0) + base),
            math.log(2.0) + (ls - 1.0) * base,
        )
        a = flat[:, None]
        log_comb = gammaln(a + 1.0) - gammaln(ls + 1.0) - gammaln(np.maximum(a - ls, 0.0) + 1.0)
        return np.where(ls <= a, log_comb + ls * math.log(q) + factor, -np.inf)

    return _amplified(sampling_rate, base_rdp, orders, log_terms)


def _amplified(sampling_rate: float, base_rdp: RdpCurve, orders: np.ndarray, log_terms) -> np.ndarray:
    """min(ε(α), log(1 + Σ_l exp(log_terms[α, l]))/(α − 1)) at integer ``orders``: the shared frame of the
    subsampling bounds above; ``log_terms(q, α's, l = 2..max α, ε(l))`` gives the (α, l) terms."""
    q = check_rate(sampling_rate)
    alphas = check_orders(orders, integer=True)
    flat = alphas.ravel()
    ls = np.arange(2.0, flat.max() + 1.0)
    base = np.asarray(base_rdp(ls), dtype=np.float64)
    if base.shape != ls.shape or np.any(np.isnan(base)) or np.any(base < 0.0):
        raise ValueError(f"base_rdp must map orders to non-negative RDP values of the same shape, got {base!r}")
    unamplified = base[flat.astype(np.int64) - 2]
    if q == 1.0:
        return unamplified.reshape(alphas.shape)
    amplified = np.logaddexp(0.0, _logsumexp_rows(log_terms(q, flat, ls, base))) / (flat - 1.0)
    return np.minimum(amplified, unamplified).reshape(alphas.shape)


def eps_from_rdp(orders: np.ndarray, rdp: np.ndarray, delta: float, method: str = "tight") -> tuple[float, float]:
    """Convert an RDP curve to (ε, δ)-DP; returns (ε, the order attaining it).

    ``method="prop1"``: ε = min_α rdp(α) + log(1/δ)/(α−1) (chen_lee Prop. 1; Mironov 2017 Prop. 3).
    ``method="filter"``: ε = min_α rdp(α) + log(|Λ|/δ)/(α−1) over the |Λ| given orders — the rule
    that stays valid when the releases are chosen adaptively and the run stops once no order can pay
    (see :func:`conversion_offsets`).
    ``method="tight"``: ε = min_α rdp(α) + log1p(−1/α) − (log δ + log α)/(α−1), clipped at 0
    (Canonne, Kamath & Steinke 2020 / Balle et al. 2020 Thm 21), exactly as dp-accounting's
    ``compute_epsilon``: orders ≤ 1.01 are skipped for numerical stability and an order whose
    rdp(α) satisfies δ² > 1 − e^{−rdp(α)} gives ε = 0 (total variation ≤ √(1 − e^{−KL}) ≤ δ).
    It is never larger than prop1. Infinite RDP values are allowed; if all are infinite, ε = inf
    and the order is NaN.
    """
    alphas = check_orders(orders)
    values = np.asarray(rdp, dtype=np.float64)
    d = check_delta(delta)
    if alphas.ndim != 1 or values.shape != alphas.shape:
        raise ValueError(f"orders and rdp must be 1-D of equal length, got shapes {alphas.shape} and {values.shape}")
    if np.any(np.isnan(values)) or np.any(values < 0.0):
        raise ValueError(f"rdp values must be >= 0 (inf allowed), got {values!r}")
    return eps_from_offsets(values, conversion_offsets(alphas, d, method), alphas, d, method)


def conversion_offsets(orders: np.ndarray, delta: float, method: str) -> np.ndarray:
    """The order-wise term the RDP → (ε, δ) conversion adds to rdp(α) (see :func:`eps_from_rdp`):
    log(1/δ)/(α−1) for ``prop1``; log1p(−1/α) − (log δ + log α)/(α−1), and ∞ for α ≤ 1.01, for
    ``tight``; log(|Λ|/δ)/(α−1) for ``filter``. Depends only on the orders and δ, so accountants
    compute it once.

    Why ``filter`` is valid for adaptive runs (a multi-order Rényi filter). Let release t be chosen
    from the outputs before it, with RDP curve ρ_t(α) fixed before it runs, and let the run make
    release t only if some α ∈ Λ has Σ_{s≤t} ρ_s(α) + log(|Λ|/δ)/(α−1) ≤ ε. With L_t the privacy
    loss after t releases, Z_t(α) = exp((α−1)(L_t − Σ_{s≤t} ρ_s(α))) is a non-negative
    supermartingale with Z_0 = 1 (E[e^{(α−1)ℓ_t} | past] = e^{(α−1)D_α} ≤ e^{(α−1)ρ_t(α)}; Feldman &
    Zrnic 2021, Whitehouse et al. 2023), hence so is their average Z_t over Λ. At the last release T
    some α* passed the test, so L_T > ε forces Z_T(α*) > |Λ|/δ, i.e. Z_T > 1/δ, which by Ville's
    inequality has probability ≤ δ: P(L_T > ε) ≤ δ, and the run is (ε, δ)-DP. The post-hoc
    minimum of ``tight`` or ``prop1`` over α is proven only for a composition fixed in advance (or
    a filter on one order chosen before the run), so adaptive methods must not use it."""
    if method == "prop1":
        return math.log(1.0 / delta) / (orders - 1.0)
    if method == "filter":
        return math.log(orders.size / delta) / (orders - 1.0)
    if method == "tight":
        offsets = np.log1p(-1.0 / orders) - (math.log(delta) + np.log(orders)) / (orders - 1.0)
        return np.where(orders > 1.01, offsets, np.inf)
    raise ValueError(f"method must be one of {', '.join(CONVERSIONS)}, got {method!r}")


def eps_from_offsets(
    values: np.ndarray, offsets: np.ndarray, orders: np.ndarray, delta: float, method: str
) -> tuple[float, float]:
    """:func:`eps_from_rdp` given precomputed :func:`conversion_offsets` (no input checks: the hot path, a few
    array operations). A NaN anywhere in the curve gives ε = NaN, which every budget check refuses."""
    eps = values + offsets
    if method == "tight":
        eps[delta**2 + np.expm1(-values) > 0.0] = 0.0
    best = int(eps.argmin())  # the first NaN, if any
    value = float(eps[best])
    if value == math.inf or math.isnan(value):
        return value, math.nan
    return max(0.0, value), float(orders[best])
