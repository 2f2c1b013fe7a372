"""DP-BLSGD, DP-BLSGD-AC, DP-BLGD and NoisyBTLS (chen_lee Algs 1–3)."""

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import comb, logsumexp

from dpbench.algorithms.base import Tracer
from dpbench.algorithms.chen_lee import (
    DPBLGD,
    DPBLSGD,
    DPBLSGDAC,
    ArmijoQueries,
    angle_degrees,
    noisy_btls,
)
from dpbench.privacy.accountants import RDPAccountant
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.rdp import DEFAULT_ORDERS
from dpbench.problems import make_problem


def _problem(n=3000, d=6, seed=0, loss="logistic"):
    rng = np.random.default_rng(seed)
    X = np.hstack([np.ones((n, 1)), rng.uniform(size=(n, d - 1))])
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return make_problem(X, y, loss=loss, reg=0.001)


def _fit(algo, problem, eps=1.0, seed=0, every=1, conversion="tight"):
    ledger = Ledger(eps, 1e-8, RDPAccountant(conversion=conversion, **algo.accountant_options()))
    tracer = Tracer(problem, ledger, every=every)
    return algo.fit(problem, ledger, np.random.default_rng(seed), tracer), ledger, tracer


# ------------------------------------------------------------------ NoisyBTLS
def _exact_armijo(problem, w, g, batch, eta0, alpha, beta, max_it, clip, normaliser):
    def f(v):
        return problem.clipped_loss_sum(v, batch, clip) / normaliser + 0.5 * problem.reg * v @ v

    for i in range(max_it):
        eta = eta0 * beta**i
        if f(w) - alpha * eta * g @ g - f(w - eta * g) >= 0:
            return eta
    return 0.0


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_noisy_btls_without_noise_is_exact_armijo_backtracking(noise):
    problem = _problem()
    rng = np.random.default_rng(3)
    huge = 1e12  # the ε → ∞ limit: noise scales Δ/ε are ~1e-16 of the query values
    for trial in range(20):
        w = rng.normal(size=problem.dim)
        g = rng.normal(size=problem.dim) * rng.uniform(0.1, 3)
        batch = np.sort(rng.choice(problem.n, size=300, replace=False))
        expected = _exact_armijo(problem, w, g, batch, 2.0, 0.5, 0.8, 20, 1.0, 300.0)
        ledger = Ledger(1e30, 1e-8, RDPAccountant())
        got = noisy_btls(
            problem,
            w,
            g,
            batch,
            eta0=2.0,
            alpha=0.5,
            beta=0.8,
            max_it=20,
            obj_clip=1.0,
            normaliser=300.0,
            noise=noise,
            budget=huge,
            rng=rng,
            ledger=ledger,
        )
        assert got.step == expected, trial
        assert len(ledger.entries) == 1


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), eta=st.floats(1e-3, 5.0))
def test_armijo_query_sensitivity_is_clip_over_normaliser(seed, eta):
    """Adding one record moves every Armijo query by at most C_obj/L (the Δ_q NoisyBTLS is calibrated to)."""
    rng = np.random.default_rng(seed)
    problem = _problem(n=200, seed=seed)
    X, y = problem.X, problem.y
    extra_x, extra_y = rng.normal(size=(1, problem.dim)) * 5, rng.choice([-1.0, 1.0], size=1)
    neighbour = make_problem(np.vstack([X, extra_x]), np.concatenate([y, extra_y]), loss="logistic", reg=0.001)
    w, g = rng.normal(size=problem.dim), rng.normal(size=problem.dim)
    clip, L = 0.7, 40.0

    def query(p, idx):
        return ArmijoQueries(p, w, g, idx, eta0=eta, alpha=0.5, beta=0.8, obj_clip=clip, normaliser=L).value(0)

    difference = query(neighbour, np.arange(201)) - query(problem, np.arange(200))
    assert abs(difference) <= clip / L * (1 + 1e-12)


# ------------------------------------------------------------------ accounting
def _lemma4(q, curve_at, alpha):
    """chen_lee Lemma 4, written out independently of dpbench.privacy (integer α)."""
    terms = [np.log((1 - q) ** (alpha - 1) * (alpha * q - q + 1))]
    terms.append(np.log(comb(alpha, 2)) + 2 * np.log(q) + (alpha - 2) * np.log1p(-q) + curve_at(2))
    for l in range(3, alpha + 1):
        terms.append(
            np.log(3) + np.log(comb(alpha, l)) + l * np.log(q) + (alpha - l) * np.log1p(-q) + (l - 1) * curve_at(l)
        )
    return min(logsumexp(terms) / (alpha - 1), curve_at(alpha))


def _thm2(alpha, eps1, eps2):
    """chen_lee Thm 2, eq. (4)."""
    a = alpha
    first = a / (2 * a - 1) * math.exp(eps1 * (a - 1)) + (a - 1) / (2 * a - 1) * math.exp(-eps1 * a)
    second = a / (2 * a - 1) * math.exp(2 * eps2 * (a - 1)) + (a - 1) / (2 * a - 1) * math.exp(-2 * eps2 * a)
    return min(math.log(first * second) / (a - 1), eps1 + 2 * eps2)


def test_one_iteration_charges_lemma4_of_gradient_plus_thm2_line_searches():
    problem = _problem()
    algo = DPBLSGD(max_iterations=1)
    for seed in range(20):  # the first seed whose iteration ran no CHEB (a failed search raises the budget)
        _, ledger, _ = _fit(algo, problem, eps=1.0, seed=seed)
        gradients = [e for e in ledger.entries if e.label == "noisy_gradient"]
        if len(gradients) == 1:
            break
    eps_iter = 1.0 / 100
    rho, eps_bt = eps_iter**2 / 2, eps_iter
    searches = [e for e in ledger.entries if e.label == "noisy_btls"]
    assert len(gradients) == 1 and gradients[0].batch == searches[0].batch  # nothing else ran (no CHEB)
    k = len(searches)
    orders = [2, 3, 8, 32, 128]

    def on_batch(l):
        return l * rho + k * _thm2(l, eps_bt / 2, eps_bt / 4)

    expected = np.array([_lemma4(0.1, on_batch, a) for a in orders])
    total = ledger._partial_sums[-1]  # the ledger's RDP curve
    idx = [int(np.flatnonzero(a == DEFAULT_ORDERS)[0]) for a in orders]
    np.testing.assert_allclose(total[idx], expected, rtol=1e-9)


def test_gaussian_line_search_is_charged_by_thm3():
    problem = _problem()
    algo = DPBLGD(noise="gaussian", max_iterations=1)
    _, ledger, _ = _fit(algo, problem, eps=1.0)
    rho = (1.0 / 100) ** 2 / 2
    n_searches = sum(e.label == "noisy_btls" for e in ledger.entries)
    extra = sum(e.event.noise_multiplier**-2 / 2 for e in ledger.entries if e.label == "noisy_gradient")
    s1, s2 = 3 / (2 * rho), 3 / rho  # σ₁², σ₂² of Alg. 1 line 3
    per_order = extra + n_searches * (4 * s1 + s2) / (2 * s1 * s2)  # Thm 3: α(4σ₁² + σ₂²)/(2σ₁²σ₂²) per search
    np.testing.assert_allclose(ledger._partial_sums[-1], DEFAULT_ORDERS * per_order, rtol=1e-12)
    assert (4 * s1 + s2) / (2 * s1 * s2) == pytest.approx(rho)  # σ choice gives (α, αρ)-RDP


@settings(max_examples=15, deadline=None)
@given(
    eps=st.floats(0.05, 3.0),
    q=st.floats(0.02, 1.0),
    noise=st.sampled_from(["laplace", "gaussian"]),
    strategy=st.sampled_from(["adap", "must", "no"]),
    conversion=st.sampled_from(["tight", "prop1"]),
    seed=st.integers(0, 1000),
)
def test_never_spends_more_than_the_target(eps, q, noise, strategy, conversion, seed):
    problem = _problem(n=800, seed=seed % 7)
    algo = DPBLSGDAC(sampling_rate=q, noise=noise, budget_strategy=strategy, max_iterations=60)
    result, ledger, _ = _fit(algo, problem, eps=eps, seed=seed, every=10**6, conversion=conversion)
    assert ledger.eps_spent <= eps
    assert np.all(np.isfinite(result.w))


def test_run_stops_only_when_no_order_can_pay_for_the_next_gradient():
    problem = _problem()
    algo = DPBLSGD()
    result, ledger, _ = _fit(algo, problem, eps=0.3)
    from dpbench.privacy.events import GaussianEvent, PoissonSampledEvent

    rho = result.info["final_rho_grad"]
    assert not ledger.can_afford(PoissonSampledEvent(0.1, GaussianEvent(1 / math.sqrt(2 * rho))))
    assert 0.25 < ledger.eps_spent <= 0.3


# ------------------------------------------------------------------ CHEB and AC
@pytest.mark.parametrize(
    "angle,strategy,raises_rho,raises_bt",
    [
        (150.0, "adap", True, False),  # negative dot product / θ > φ_max·θ̄
        (100.0, "adap", True, False),  # θ > 1.1·90
        (30.0, "adap", False, True),  # θ < 0.5·90
        (80.0, "adap", False, False),  # in between
        (80.0, "must", True, False),
        (150.0, "no", False, False),
    ],
)
def test_cheb_branches(monkeypatch, angle, strategy, raises_rho, raises_bt):
    problem = _problem(n=500)
    g = np.zeros(problem.dim)
    g[0] = 1.0
    g2 = np.zeros(problem.dim)
    g2[0], g2[1] = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    monkeypatch.setattr(DPBLSGD, "_noisy_gradient", lambda self, *args: g2.copy())
    algo = DPBLSGD(budget_strategy=strategy)
    ledger = Ledger(1.0, 1e-8, RDPAccountant())
    raised, rho, bt, averaged = algo._cheb(
        problem, np.zeros(problem.dim), g, 1e-4, 0.01, 3.0, 300.0, 90.0, np.random.default_rng(0), ledger
    )
    assert angle_degrees(g, g2) == pytest.approx(angle)
    assert raised == raises_rho and (rho == pytest.approx(1.3e-4)) == raises_rho
    assert (bt == pytest.approx(0.013)) == raises_bt
    np.testing.assert_allclose(averaged, (g + g2) / 2)


def test_adaptive_clipping_shrinks_at_most_once_per_update():
    problem = _problem()
    algo = DPBLSGDAC(budget_strategy="must", max_it=2, eta0=8.0, max_iterations=60)  # frequent failures and raises
    _, _, tracer = _fit(algo, problem, eps=3.0)
    rows = [row for row in tracer.rows if "rho_raises" in row]
    clips = np.array([3.0] + [row["clip_grad"] for row in rows])
    raises = np.array([row["rho_raises"] for row in rows])
    expected = np.where(raises > 0, 0.95, 1.0)
    np.testing.assert_allclose(clips[1:] / clips[:-1], expected)
    assert raises.max() >= 2, "the test must exercise several raises within one update"
    np.testing.assert_allclose([row["clip_obj"] for row in rows], clips[1:] / 3.0)


def test_without_adaptive_clipping_thresholds_stay():
    problem = _problem()
    _, _, tracer = _fit(DPBLSGD(budget_strategy="must", max_it=3, eta0=50.0, max_iterations=20), problem, eps=2.0)
    assert {row["clip_grad"] for row in tracer.rows if "clip_grad" in row} == {3.0}


# ------------------------------------------------------------------ utility sanity
@pytest.mark.parametrize("cls", [DPBLSGD, DPBLSGDAC, DPBLGD])
def test_large_budget_gets_close_to_the_optimum(cls):
    from dpbench.algorithms.baselines import NonPrivate

    problem = _problem(n=4000)
    best = NonPrivate().fit(problem, None, np.random.default_rng(0), Tracer(problem, None))
    f_star = problem.evaluate_objective(best.w)
    result, ledger, _ = _fit(cls(max_iterations=300), problem, eps=20.0, every=10**6)
    # ε sets the per-iteration budget (ε_iter = ε/100), so a large ε buys accuracy, not many more
    # iterations: ask for 90% of the way from w = 0 to the optimum.
    initial_gap = problem.evaluate_objective(np.zeros(problem.dim)) - f_star
    assert problem.evaluate_objective(result.w) - f_star < 0.1 * initial_gap
    assert ledger.eps_spent <= 20.0


def test_bad_hyper_parameters_are_named():
    with pytest.raises(ValueError, match=re.escape("beta must be a finite number in (0, 1), got 1.5")):
        DPBLSGD(beta=1.5)
    with pytest.raises(ValueError, match="budget_strategy must be one of adap, must, no"):
        DPBLSGD(budget_strategy="sometimes")
    with pytest.raises(ValueError, match="noise must be one of laplace, gaussian"):
        DPBLGD(noise="cauchy")
    with pytest.raises(ValueError, match=r"eps_iter|expected_iterations"):
        DPBLSGD(expected_iterations=0)


# ------------------------------------------------------------------ screened Armijo queries
def _sparse_problem(n=3000, d=40, seed=1):
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.2, random_state=seed, format="csr", data_rvs=np.ones)
    y = np.where(rng.random(n) < 0.4, -1.0, 1.0)
    return make_problem(X, y, loss="logistic", reg=0.01)


def test_screened_line_searches_give_the_exact_fits_bit_for_bit(monkeypatch):
    """DP-BLGD, DP-BLSGD and DP-BLSGD-AC (Laplace and Gaussian line searches) on a dense and a sparse
    problem at ε = 0.1, 1, 4: weights, iterations, info, ledgers, evaluation counts and traces as when every
    Armijo query is computed exactly, with all but a few queries decided by their approximations, most by the
    Taylor bounds alone."""
    from dpbench.problems.screened_losses import ClippedLossLine

    def fits():
        out = []
        for make in (_problem, _sparse_problem):
            for algo in (DPBLGD(), DPBLSGD(), DPBLSGDAC(noise="gaussian")):
                for eps in (0.1, 1.0, 4.0):
                    problem = make()
                    result, ledger, tracer = _fit(algo, problem, eps=eps)
                    out.append(
                        (
                            result.w.tobytes(),
                            result.n_iterations,
                            repr(result.info),
                            repr(ledger.summary()),
                            problem.counts,
                            repr(tracer.rows),
                        )
                    )
        return out

    exact_sums, float32_sums = [], []
    real_exact, real_float32 = ClippedLossLine.exact, ClippedLossLine.approximate
    monkeypatch.setattr(ClippedLossLine, "exact", lambda *a: exact_sums.append(1) or real_exact(*a))
    monkeypatch.setattr(ClippedLossLine, "approximate", lambda *a: float32_sums.append(1) or real_float32(*a))
    screened = fits()
    screened_exact_sums, screened_float32_sums = len(exact_sums), len(float32_sums)
    monkeypatch.setattr(ClippedLossLine, "approximate", lambda self, eta: None)
    monkeypatch.setattr(ClippedLossLine, "bounded_drop", lambda self, eta: None)
    monkeypatch.setattr(ClippedLossLine, "expect_steps", lambda self, steps: None)
    exact_sums.clear()
    assert fits() == screened
    assert 0 < screened_exact_sums < 0.01 * len(exact_sums)  # both paths taken
    assert 0 < screened_float32_sums < 0.1 * len(exact_sums)  # the Taylor bounds decided most queries
    assert len(exact_sums) > 5_000


def test_line_searches_under_the_secure_sampler_compute_every_query(monkeypatch):
    """The secure sampler rounds each query to its grid, which needs the exact value."""
    from dpbench.privacy.samplers import use_sampler
    from dpbench.problems.screened_losses import ClippedLossLine

    asked, exact_sums = [], []
    real_query, real_exact = ArmijoQueries.__call__, ClippedLossLine.exact
    monkeypatch.setattr(ArmijoQueries, "__call__", lambda *a: asked.append(1) or real_query(*a))
    monkeypatch.setattr(ClippedLossLine, "exact", lambda *a: exact_sums.append(1) or real_exact(*a))
    with use_sampler("secure"):
        _fit(DPBLGD(max_iterations=5), _problem(n=500), eps=1.0)
    assert len(asked) >= 5 and len(exact_sums) == len(asked)
