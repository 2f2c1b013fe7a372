"""RDP curves, conversions and closed forms: pinned values, dp-accounting cross-checks, paper formulas."""

from __future__ import annotations

import math
from decimal import Decimal, getcontext

import dp_accounting
import dp_accounting.rdp
import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import norm

from dpbench.privacy.pure import amplify_pure
from dpbench.privacy.rdp import (
    DEFAULT_ORDERS,
    eps_from_rdp,
    rdp_gaussian,
    rdp_gaussian_above_threshold,
    rdp_laplace,
    rdp_laplace_above_threshold,
    rdp_poisson_subsampled,
    rdp_poisson_subsampled_gaussian,
    rdp_pure,
    rdp_sampled_without_replacement,
    rdp_zcdp,
)
from dpbench.privacy.zcdp import zcdp_epsilon, zcdp_rho_for_epsilon

CHECK_ORDERS = np.array([2, 3, 4, 5, 6, 8, 11, 16, 24, 32, 48, 64, 100, 128, 256], dtype=float)
GRID_Q = [0.01, 0.05, 0.1, 0.3, 0.5, 0.9, 0.99]
GRID_SIGMA = [0.5, 0.8, 1.0, 1.5, 2.0, 5.0]


def assert_rel(actual, expected, rtol):
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=0.0)


# --- pinned values -------------------------------------------------------------------------------


def test_default_orders_are_integers_2_to_512():
    assert DEFAULT_ORDERS[0] == 2 and DEFAULT_ORDERS[-1] == 512 and DEFAULT_ORDERS.size == 511
    assert np.all(np.diff(DEFAULT_ORDERS) == 1)


def test_pinned_subsampled_gaussian():
    # The pins have 10 decimals, so they agree to half a unit of the 10th decimal (3e-9 relative
    # at order 2); the dp-accounting cross-checks below hold to 1e-9 relative.
    actual = rdp_poisson_subsampled_gaussian(0.1, 1.0, [2, 8])
    np.testing.assert_allclose(actual, [0.0170368632, 1.3783614113], rtol=0.0, atol=5e-11)


def test_pinned_laplace_and_pure_amplification():
    assert_rel(rdp_laplace(1.0, [2.0]), [0.619123629999], 1e-11)
    assert round(amplify_pure(1.0, 0.1), 6) == 0.158565


# --- dp-accounting cross-checks ------------------------------------------------------------------


def dp_accounting_rdp(event, count=1):
    """dp-accounting's RDP curve of ``count`` copies of ``event`` at CHECK_ORDERS."""
    accountant = dp_accounting.rdp.RdpAccountant(orders=list(CHECK_ORDERS))
    accountant.compose(event, count)
    return accountant.rdp


@pytest.mark.parametrize("q", GRID_Q)
@pytest.mark.parametrize("sigma", GRID_SIGMA)
def test_subsampled_gaussian_matches_dp_accounting(q, sigma):
    expected = dp_accounting_rdp(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), 7)
    assert_rel(7 * rdp_poisson_subsampled_gaussian(q, sigma, CHECK_ORDERS), expected, 1e-9)


def _decimal_subsampled_gaussian(q: float, sigma: float, order: int) -> float:
    """Mironov, Talwar & Zhang 2019 A_α summed term by term in 60-digit decimal arithmetic."""
    getcontext().prec = 60
    qd, s2 = Decimal(q), Decimal(sigma) ** 2
    a = sum(
        math.comb(order, k) * qd**k * (1 - qd) ** (order - k) * (Decimal(k * k - k) / (2 * s2)).exp()
        for k in range(order + 1)
    )
    return float(a.ln() / (order - 1))


@pytest.mark.parametrize(("q", "sigma"), [(1e-4, 50.0), (1e-3, 10.0), (1e-4, 0.7), (0.999, 3.0)])
def test_subsampled_gaussian_accurate_where_dp_accounting_loses_digits(q, sigma):
    # Tiny q with large σ makes A_α − 1 ~ 1e-12: dp-accounting's plain logsumexp keeps only ~4 digits there.
    orders = [2, 3, 10, 64]
    expected = [_decimal_subsampled_gaussian(q, sigma, a) for a in orders]
    assert_rel(rdp_poisson_subsampled_gaussian(q, sigma, orders), expected, 1e-11)


@pytest.mark.parametrize(("q", "sigma"), [(2 / 32_560, 3.0), (1 / 1628, 0.5), (0.01, 1.0), (0.1, 2.0), (0.5, 0.8)])
def test_sampled_without_replacement_gaussian_is_wbk_theorem_9(q, sigma):
    """WBK19 Thm 9 for the Gaussian: never below dp-accounting's WOR curve (which also takes the tighter
    Thm 27 term below order 256; both capped by the un-amplified curve), equal to it above 256 and at
    α = 2, and written out by hand at α = 2 and 3."""
    orders = np.array([2, 3, 4, 5, 6, 8, 11, 16, 32, 64, 128, 200, 256, 257, 300, 400, 512], dtype=float)
    ours = rdp_sampled_without_replacement(q, lambda ls: rdp_gaussian(sigma, ls), orders)
    theirs = np.array(
        [dp_accounting.rdp.rdp_privacy_accountant._compute_rdp_sample_wor_gaussian_scalar(q, sigma, a) for a in orders]
    )
    theirs = np.minimum(theirs, rdp_gaussian(sigma, orders))
    assert np.all(ours >= theirs * (1 - 1e-12))
    assert_rel(ours[orders > 256], theirs[orders > 256], 1e-12)
    assert_rel(ours[0], theirs[0], 1e-12)
    e2, e3 = 1 / sigma**2, 3 / (2 * sigma**2)
    two = q**2 * min(4 * math.expm1(e2), 2 * math.exp(e2))
    assert_rel(
        ours[:2], [min(math.log1p(two), e2), min(math.log1p(3 * two + q**3 * 2 * math.exp(2 * e3)) / 2, e3)], 1e-12
    )
    assert np.all(ours <= rdp_gaussian(sigma, orders))


def test_sampled_without_replacement_is_priced_by_the_rdp_accountant():
    from dpbench.privacy.accountants import make_accountant
    from dpbench.privacy.events import GaussianEvent, SampledWithoutReplacementEvent
    from dpbench.privacy.ledger import Ledger

    event = SampledWithoutReplacementEvent(1, 1628, GaussianEvent(1.5))
    ledger = Ledger(1.0, 1e-5, make_accountant("rdp"))
    ledger.charge(event, 1000)
    curve = 1000 * rdp_sampled_without_replacement(1 / 1628, lambda ls: rdp_gaussian(1.5, ls), DEFAULT_ORDERS)
    assert ledger.eps_spent == pytest.approx(eps_from_rdp(DEFAULT_ORDERS, curve, 1e-5)[0], rel=1e-12)
    full = Ledger(100.0, 1e-5, make_accountant("rdp"))
    full.charge(SampledWithoutReplacementEvent(5, 5, GaussianEvent(1.5)))
    assert full.eps_spent == pytest.approx(eps_from_rdp(DEFAULT_ORDERS, rdp_gaussian(1.5, DEFAULT_ORDERS), 1e-5)[0])


@pytest.mark.parametrize("b", [0.05, 0.3, 1.0, 2.5, 20.0])
def test_laplace_matches_dp_accounting(b):
    assert_rel(rdp_laplace(b, CHECK_ORDERS), dp_accounting_rdp(dp_accounting.LaplaceDpEvent(b)), 1e-9)


def test_laplace_is_mironov_prop6_and_below_pure_bound():
    b, orders = 0.7, np.array([2.0, 3.5, 10.0])
    h = orders / (2 * orders - 1) * np.exp((orders - 1) / b) + (orders - 1) / (2 * orders - 1) * np.exp(-orders / b)
    direct = np.log(h) / (orders - 1)
    assert_rel(rdp_laplace(b, orders), direct, 1e-12)
    huge = rdp_laplace(0.01, DEFAULT_ORDERS)  # e^{(α−1)/b} overflows: the log-space form must not
    assert np.all(np.isfinite(huge)) and np.all(huge <= 100.0) and huge[-1] > 99.0


@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-9])
@pytest.mark.parametrize(("q", "sigma", "steps"), [(1.0, 1.0, 1), (0.01, 1.1, 1000), (0.1, 4.0, 50), (1.0, 30.0, 3)])
def test_tight_conversion_matches_compute_epsilon_and_beats_prop1(q, sigma, steps, delta):
    rdp = steps * rdp_poisson_subsampled_gaussian(q, sigma, DEFAULT_ORDERS)
    expected_eps, expected_order = dp_accounting.rdp.compute_epsilon(DEFAULT_ORDERS, rdp, delta)
    eps, order = eps_from_rdp(DEFAULT_ORDERS, rdp, delta)
    assert_rel(eps, expected_eps, 1e-9)
    assert order == expected_order
    prop1, _ = eps_from_rdp(DEFAULT_ORDERS, rdp, delta, method="prop1")
    assert eps <= prop1
    assert_rel(prop1, np.min(rdp + math.log(1 / delta) / (DEFAULT_ORDERS - 1)), 1e-12)


def test_conversion_with_infinite_values():
    orders = np.array([2.0, 3.0, 4.0])
    assert eps_from_rdp(orders, np.array([np.inf, 0.5, np.inf]), 1e-5)[1] == 3.0
    eps, order = eps_from_rdp(orders, np.full(3, np.inf), 1e-5, method="prop1")
    assert eps == math.inf and math.isnan(order)
    assert eps_from_rdp(orders, np.zeros(3), 1e-5) == (0.0, 2.0)


@pytest.mark.parametrize(
    ("orders", "rdp", "delta", "method"),
    [
        ([2.0], [-0.1], 1e-5, "tight"),
        ([2.0], [np.nan], 1e-5, "tight"),
        ([2.0], [1.0], 0.0, "tight"),
        ([2.0], [1.0], 1.0, "tight"),
        ([2.0], [1.0], 1e-5, "renyi"),
        ([1.0], [1.0], 1e-5, "tight"),
        ([2.0, 3.0], [1.0], 1e-5, "tight"),
    ],
)
def test_conversion_rejects_bad_input(orders, rdp, delta, method):
    with pytest.raises(ValueError):
        eps_from_rdp(orders, rdp, delta, method=method)


# --- chen_lee Lemma 4 (general Poisson subsampling bound) ------------------------------------------


def _lemma4_direct(q: float, base, order: int) -> float:
    """chen_lee Lemma 4 evaluated literally, term by term, in 60-digit decimal arithmetic."""
    getcontext().prec = 60
    qd = Decimal(q)
    eps = {l: Decimal(float(base(np.array([float(l)]))[0])) for l in range(2, order + 1)}
    total = (1 - qd) ** (order - 1) * (order * qd - qd + 1)
    total += math.comb(order, 2) * qd**2 * (1 - qd) ** (order - 2) * eps[2].exp()
    total += 3 * sum(
        math.comb(order, l) * qd**l * (1 - qd) ** (order - l) * ((l - 1) * eps[l]).exp() for l in range(3, order + 1)
    )
    return float(total.ln() / (order - 1))


@pytest.mark.parametrize("q", [0.001, 0.05, 0.3])
def test_lemma4_is_the_paper_formula_capped_by_the_unamplified_curve(q):
    base = lambda ls: rdp_laplace_above_threshold(0.05, 0.025, ls)
    orders = [2, 3, 5, 12]
    direct = np.array([_lemma4_direct(q, base, a) for a in orders])
    unamplified = base(np.array(orders, dtype=float))
    assert_rel(rdp_poisson_subsampled(q, base, orders), np.minimum(direct, unamplified), 1e-10)
    if q < 0.1:  # the factor 3 makes the bound lose to the cap at larger q
        assert np.all(direct < unamplified)


@pytest.mark.parametrize(("q", "sigma"), [(0.01, 1.0), (0.1, 2.0), (0.5, 0.8), (0.9, 5.0)])
def test_lemma4_between_exact_subsampled_gaussian_and_unamplified(q, sigma):
    bound = rdp_poisson_subsampled(q, lambda ls: rdp_gaussian(sigma, ls), DEFAULT_ORDERS)
    exact = rdp_poisson_subsampled_gaussian(q, sigma, DEFAULT_ORDERS)
    assert np.all(bound >= exact * (1 - 1e-12))
    assert np.all(bound <= rdp_gaussian(sigma, DEFAULT_ORDERS))
    assert np.any(bound < rdp_gaussian(sigma, DEFAULT_ORDERS))  # it amplifies somewhere


def test_lemma4_full_rate_and_infinite_base():
    base = lambda ls: rdp_pure(0.3, ls)
    assert_rel(rdp_poisson_subsampled(1.0, base, DEFAULT_ORDERS), rdp_pure(0.3, DEFAULT_ORDERS), 0)
    assert np.all(np.isinf(rdp_poisson_subsampled(0.1, lambda ls: np.full(ls.shape, np.inf), [2, 5])))


@pytest.mark.parametrize(
    "fn",
    [
        lambda o: rdp_poisson_subsampled_gaussian(0.1, 1.0, o),
        lambda o: rdp_poisson_subsampled(0.1, lambda ls: rdp_gaussian(1.0, ls), o),
    ],
)
def test_subsampled_curves_refuse_non_integer_orders(fn):
    with pytest.raises(ValueError, match="only integer"):
        fn([2.0, 2.5])


# --- chen_lee Thms 2 and 3 (AboveThreshold) ------------------------------------------------------


def test_thm2_is_eq4_and_below_pure():
    eps1, eps2 = 0.4, 0.2
    a = np.array([2.0, 3.0, 7.0, 40.0])
    h = lambda e: a / (2 * a - 1) * np.exp(e * (a - 1)) + (a - 1) / (2 * a - 1) * np.exp(-e * a)
    eq4 = np.log(h(eps1) * h(2 * eps2)) / (a - 1)
    assert_rel(rdp_laplace_above_threshold(eps1, eps2, a), eq4, 1e-12)
    curve = rdp_laplace_above_threshold(eps1, eps2, DEFAULT_ORDERS)
    assert np.all(curve <= eps1 + 2 * eps2) and curve[-1] > 0.95 * (eps1 + 2 * eps2)
    assert np.all(curve <= rdp_pure(eps1 + 2 * eps2, DEFAULT_ORDERS))


def test_thm3_with_chen_lee_sigmas_is_alpha_rho():
    rho = 0.37
    curve = rdp_gaussian_above_threshold(math.sqrt(3 / (2 * rho)), math.sqrt(3 / rho), DEFAULT_ORDERS)
    assert_rel(curve, DEFAULT_ORDERS * rho, 1e-12)
    assert_rel(rdp_gaussian_above_threshold(1.0, 2.0, [2.0]), [2 * (4 + 4) / (2 * 4)], 1e-15)


_Z = np.linspace(-80.0, 80.0, 200_001)


def _svt_output_law(queries, threshold_noise, query_cdf):
    """P[first ⊤ = i] for i < k and P[no ⊤], by quadrature over the threshold noise (T = 0)."""
    below, law = np.ones_like(_Z), []
    for q in queries:
        law.append(np.sum(threshold_noise * below * (1 - query_cdf(_Z - q))))
        below = below * query_cdf(_Z - q)
    law.append(np.sum(threshold_noise * below))
    law = np.array(law)
    return law / law.sum()


def _renyi(p, q, alpha):
    keep = p > 0
    return logsumexp(alpha * np.log(p[keep]) + (1 - alpha) * np.log(q[keep])) / (alpha - 1)


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_svt_bounds_dominate_exact_renyi_divergence(noise):
    """Thms 2/3 upper-bound the exact Rényi divergence of AboveThreshold's output on worst-case pairs:
    m ⊥ queries where D′ is Δ higher, then one query where D is Δ higher (App. B's construction)."""
    orders = np.array([1.5, 2.0, 4.0, 8.0, 32.0])
    if noise == "laplace":
        eps1, eps2 = 0.5, 0.25
        lam = np.exp(-np.abs(_Z) * eps1) * eps1 / 2
        cdf = lambda x: np.where(
            x < 0, 0.5 * np.exp(np.minimum(x, 0) * eps2), 1 - 0.5 * np.exp(-np.maximum(x, 0) * eps2)
        )
        bound = rdp_laplace_above_threshold(eps1, eps2, orders)
    else:
        rho = 0.5
        lam, cdf = norm.pdf(_Z, scale=math.sqrt(1.5 / rho)), lambda x: norm.cdf(x, scale=math.sqrt(3 / rho))
        bound = orders * rho
    worst = 0.0
    for m in (0, 3, 8):
        for a, c in ((0.0, 0.0), (-2.0, 2.0), (2.0, -2.0)):
            p = _svt_output_law([a] * m + [c], lam, cdf)
            q = _svt_output_law([a + 1] * m + [c - 1], lam, cdf)
            for x, y in ((p, q), (q, p)):
                worst = max(worst, *(_renyi(x, y, o) / b for o, b in zip(orders, bound)))
    assert 0.1 < worst <= 1.0


# --- closed forms --------------------------------------------------------------------------------


def test_simple_closed_forms():
    a = np.array([2.0, 10.0, 100.0])
    assert_rel(rdp_gaussian(2.0, a), a / 8, 1e-15)
    assert_rel(rdp_pure(0.5, a), [0.25, 0.5, 0.5], 1e-15)
    assert_rel(rdp_zcdp(0.1, a), a * 0.1, 1e-15)


@pytest.mark.parametrize(("epsilon", "delta"), [(0.1, 1e-5), (1.0, 1e-8), (8.0, 1e-3), (1e-6, 0.5)])
def test_zcdp_closed_forms_both_ways(epsilon, delta):
    rho = zcdp_rho_for_epsilon(epsilon, delta)
    assert_rel(zcdp_epsilon(rho, delta), epsilon, 1e-12)
    log_inv = math.log(1 / delta)
    assert_rel(rho, (math.sqrt(log_inv + epsilon) - math.sqrt(log_inv)) ** 2, 1e-6)


def test_zcdp_epsilon_pinned():
    assert_rel(zcdp_epsilon(0.5, 1e-5), 0.5 + 2 * math.sqrt(0.5 * math.log(1e5)), 1e-15)
    assert zcdp_epsilon(0.0, 1e-5) == 0.0 and zcdp_epsilon(math.inf, 1e-5) == math.inf


@pytest.mark.parametrize(
    "call",
    [
        lambda: rdp_gaussian(0.0, [2.0]),
        lambda: rdp_gaussian(math.inf, [2.0]),
        lambda: rdp_laplace(-1.0, [2.0]),
        lambda: rdp_pure(math.nan, [2.0]),
        lambda: rdp_zcdp(0.0, [2.0]),
        lambda: rdp_gaussian(1.0, [1.0]),
        lambda: rdp_poisson_subsampled_gaussian(0.0, 1.0, [2]),
        lambda: rdp_poisson_subsampled_gaussian(1.5, 1.0, [2]),
        lambda: zcdp_rho_for_epsilon(0.0, 1e-5),
        lambda: zcdp_epsilon(1.0, 0.0),
        lambda: amplify_pure(1.0, 0.0),
        lambda: amplify_pure(math.inf, 0.5),
    ],
)
def test_invalid_parameters_raise(call):
    with pytest.raises(ValueError):
        call()


@pytest.mark.parametrize("method", ["tight", "prop1", "filter"])
def test_a_nan_in_a_curve_converts_to_nan_which_no_budget_accepts(method):
    """The hot-path conversion (no input checks) never turns a NaN cost into a finite ε: a ledger refuses it."""
    from dpbench.privacy.rdp import conversion_offsets, eps_from_offsets

    orders = np.array([2.0, 8.0, 64.0])
    offsets = conversion_offsets(orders, 1e-6, method)
    eps, _ = eps_from_offsets(np.array([0.1, np.nan, 0.2]), offsets, orders, 1e-6, method)
    assert math.isnan(eps) and not eps <= 10.0
    finite, order = eps_from_offsets(np.array([0.1, 0.05, 0.2]), offsets, orders, 1e-6, method)
    assert (finite, order) == eps_from_rdp(orders, np.array([0.1, 0.05, 0.2]), 1e-6, method=method)
    assert eps_from_offsets(np.full(3, np.inf), offsets, orders, 1e-6, method)[0] == math.inf
