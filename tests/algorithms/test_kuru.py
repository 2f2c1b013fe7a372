"""kuru_acc methods: schedules against their equations, the budget, privacy of one iteration, convergence."""

import math
import re

import numpy as np
import pytest
from scipy.optimize import minimize

from dpbench.algorithms import kuru_schedules as ks
from dpbench.algorithms.base import Request, Tracer
from dpbench.algorithms.kuru import (
    DPGD,
    DPHB,
    DPMASG,
    DPNAG,
    KURU_METHODS,
    DPMASGOpt,
    DPNAGOpt,
)
from dpbench.data.synthetic import make_logreg
from dpbench.errors import ConfigError
from dpbench.privacy.accountants import PureDPAccountant
from dpbench.privacy.audit import epsilon_lower_bound
from dpbench.privacy.ledger import Ledger
from dpbench.problems import make_problem

MU, L = 0.02, 5.1033


def _weights(T, c=1.0, masg=False):
    alphas, stages = ks.masg_steps(T, c, L, MU) if masg else ks.constant_steps(T, c, L)
    return ks.error_weights(alphas, stages, MU, L)[1]


def _solve_44(a, sensitivity, eps, n, m):
    """Problem (4.4) by SLSQP in u_t = ln b_t, independently of kuru_schedules."""

    def budget(u):
        return np.sum(np.log1p((m / n) * np.expm1(sensitivity / (np.exp(u) * m)))) - eps

    start = np.full(len(a), math.log(sensitivity * len(a) / (n * eps)))
    scale = np.sum(a * np.exp(2 * start))
    res = minimize(
        lambda u: np.sum(a * np.exp(2 * u)) / scale,
        start,
        method="SLSQP",
        constraints=[{"type": "eq", "fun": budget}],
        options={"ftol": 1e-14, "maxiter": 1000},
    )
    assert res.success, res.message
    return np.exp(res.x)


# ----------------------------------------------------------------------------------- schedules
@pytest.mark.parametrize("masg", [False, True])
def test_prop_4_2_equals_a_numerical_minimiser_of_problem_4_4(masg):
    a = _weights(6, masg=masg) if not masg else np.array([0.9, 0.5, 0.3, 0.2, 0.05, 0.01])
    closed = ks.optimal_noise(a, 40.0, 1.0, 10_000, 10_000)
    assert closed == pytest.approx(_solve_44(a, 40.0, 1.0, 10_000, 10_000), rel=1e-4)
    # eq. 4.5 written out
    eq_4_5 = np.sum(np.cbrt(a)) * 40.0 / (np.cbrt(a) * 10_000 * 1.0)
    assert closed == pytest.approx(eq_4_5, rel=1e-9)


def test_subsampled_schedule_solves_problem_4_4_and_meets_the_budget():
    a = _weights(8, c=0.5)
    b = ks.optimal_noise(a, 40.0, 1.0, 100_000, 1_000)
    assert b == pytest.approx(_solve_44(a, 40.0, 1.0, 100_000, 1_000), rel=1e-4)
    for T, m in [(8, 1_000), (1000, 1_000), (1000, 100_000), (200, 10)]:
        for noise in (ks.optimal_noise(_weights(T), 40.0, 1.0, 100_000, m), ks.uniform_noise(40.0, 1.0, T, 100_000, m)):
            spent = float(np.sum(ks.epsilon_per_iteration(40.0, noise, 100_000, m)))
            assert 1.0 - 1e-9 <= spent <= 1.0


def test_uniform_noise_is_eqs_3_4_and_3_5():
    eps0 = math.log(1 + (math.exp(1.0 / 100) - 1) * 100_000 / 1_000)
    assert ks.uniform_noise(40.0, 1.0, 100, 100_000, 1_000)[0] == pytest.approx(40.0 / (1_000 * eps0), rel=1e-10)
    assert ks.uniform_noise(40.0, 1.0, 100, 100_000, 100_000)[0] == pytest.approx(40.0 * 100 / 100_000, rel=1e-10)


@pytest.mark.parametrize("c, p", [(1.0, 1), (0.1, 2)])
def test_masg_stage_lengths_and_steps_match_eq_4_7(c, p):
    kappa = L / MU
    alphas, stages = ks.masg_steps(3000, c, L, MU, p)
    lengths = np.bincount(stages)[1:]
    unit = math.ceil(math.sqrt(kappa) * math.log(2 ** (p + 2)))
    assert lengths[0] == math.ceil(2 * math.sqrt(kappa) * math.log(math.sqrt(kappa)))
    assert list(lengths[1:-1]) == [2**k * unit for k in range(2, len(lengths))]
    assert 0 < lengths[-1] <= 2 ** len(lengths) * unit and lengths.sum() == 3000
    for k in range(1, len(lengths) + 1):
        expected = c / L if k == 1 else c / (2 ** (2 * k) * L)
        assert np.all(alphas[stages == k] == pytest.approx(expected, rel=1e-12))


def test_error_weights_are_eq_4_3_and_4_8():
    alphas, stages = np.array([0.1, 0.1, 0.025, 0.025]), np.array([1, 1, 2, 2])
    r = 1 - np.sqrt(MU * alphas)
    a0, a = ks.error_weights(alphas, stages, MU, L)
    expected = [2 ** (2 - stages[t]) * np.prod(r[t + 1 :]) * alphas[t] * (1 + alphas[t] * L) for t in range(4)]
    assert a == pytest.approx(expected, rel=1e-12)
    assert a0 == pytest.approx(2 ** (2 - 1) * np.prod(r), rel=1e-12)


def test_chosen_iterations_minimise_bound_4_6():
    alphas, stages = ks.constant_steps(300, 1.0, L)
    kwargs = dict(E0=10.0, d=20, sensitivity=40.0, n=100_000, epsilon=1.0)
    chosen = ks.choose_iterations(alphas, stages, MU, L, **kwargs)
    bounds = [ks.optimal_bound(*ks.error_weights(alphas[:T], stages[:T], MU, L), **kwargs) for T in range(1, 301)]
    assert chosen == int(np.argmin(bounds)) + 1 and chosen < 300


# ----------------------------------------------------------------------------------- runs
def _problem(n=2000, seed=1, loss="logistic"):
    X, y, _ = make_logreg(n, 20, 20.0, seed)
    return make_problem(X, y, loss=loss, reg=MU, public_feature_bound=1.0)  # rows ∈ [0, 1]^20 by the law


def _fit(method, problem, eps=1.0, seed=0):
    ledger = Ledger(eps, 1e-8, PureDPAccountant(), neighbouring="replace_one")
    tracer = Tracer(problem, ledger)
    return method.fit(problem, ledger, np.random.default_rng(seed), tracer), ledger, tracer


@pytest.mark.parametrize("cls", KURU_METHODS)
@pytest.mark.parametrize("batch_size", [None, 200])
def test_every_run_spends_its_budget_to_1e9_and_never_more(cls, batch_size):
    problem = _problem()
    result, ledger, tracer = _fit(cls(iterations=150, batch_size=batch_size), problem)
    assert 1.0 - 1e-9 <= ledger.eps_spent <= 1.0
    assert ledger.summary()["n_charges"] == result.n_iterations
    assert tracer.rows[-1]["iteration"] == result.n_iterations and "noise_scale" in tracer.rows[-1]
    assert result.n_iterations <= 150 and (result.n_iterations == 150 or cls in (DPNAGOpt, DPMASGOpt))


def _fstar(problem):
    res = minimize(
        problem.objective_and_gradient,
        np.zeros(problem.dim),
        jac=True,
        method="L-BFGS-B",
        options={"ftol": 1e-16, "gtol": 1e-12, "maxiter": 10_000},
    )
    return res.fun


@pytest.mark.parametrize(
    "method",
    [
        DPGD(iterations=6000),
        DPHB(iterations=600),
        DPNAG(iterations=600),
        DPNAGOpt(iterations=600),
        DPMASG(iterations=9000),
        DPMASGOpt(iterations=9000),
    ],
    ids=lambda m: m.name,
)
def test_with_a_huge_epsilon_every_method_converges_to_fstar(method):
    problem = _problem()
    result, _, _ = _fit(method, problem, eps=1e13)
    fstar = _fstar(problem)
    assert abs(problem.evaluate_objective(result.w) - fstar) <= 1e-6 * abs(fstar)


def test_masg_restarts_momentum_at_stage_changes(monkeypatch):
    problem = _problem(n=500)
    method = DPMASG(iterations=120, smoothness=L)
    _, stages = method.steps(MU)
    seen = []
    real = DPMASG._step

    def spy(self, problem, x, previous, t, *args):
        out = real(self, problem, x, previous, t, *args)
        seen.append((t, np.array_equal(x, previous) or t == 0))
        return out

    monkeypatch.setattr(DPMASG, "_step", spy)
    _fit(method, problem, eps=1e6)
    change = int(np.argmax(stages != stages[0]))
    assert 0 < change < 120
    z_restarts = [t for t, _ in seen if t > 0 and stages[t] != stages[t - 1]]
    assert z_restarts == [change]


@pytest.mark.statistical
@pytest.mark.parametrize("batch", [None, 10])
def test_one_dp_nag_iteration_is_eps_t_private_on_a_neighbouring_pair(batch):
    """Replace-one pair with the largest gradient gap (2C in L1): the record's clipped gradient is
    −C on D and +C on D′. 20 000 runs each; a 99%-confidence lower bound on ε must not exceed ε_t,
    and (without subsampling, where the pair is tight) must reach 0.8·ε_t."""
    n, clip = 100, 1.0
    rng_data = np.random.default_rng(5)
    X = np.vstack([[[100.0]], rng_data.uniform(0.1, 1.0, size=(n - 1, 1))])
    y = np.where(rng_data.random(n) < 0.5, -1.0, 1.0)
    y[0] = 1.0
    X_prime = X.copy()
    X_prime[0, 0] = -100.0
    method = DPNAG(iterations=1, l1_clip=clip, initial_value=0.0, batch_size=batch)
    m = n if batch is None else batch
    noise = ks.uniform_noise(2 * clip, 1.0, 1, n, m)
    eps_t = float(ks.epsilon_per_iteration(2 * clip, noise[0], n, m))
    betas, alphas, stages = np.zeros(1), np.ones(1), np.ones(1, dtype=int)

    def outputs(features, seed):
        problem = make_problem(features, y, loss="logistic", reg=MU)
        ledger, rng, x = (
            Ledger(1e9, 1e-8, PureDPAccountant(), neighbouring="replace_one"),
            np.random.default_rng(seed),
            np.zeros(1),
        )
        return np.array(
            [method._step(problem, x, x, 0, alphas, betas, stages, noise, m, rng, ledger)[0][0] for _ in range(20_000)]
        )

    on_d, on_d_prime = outputs(X, 1), outputs(X_prime, 2)
    # x₁ = −(gradient + noise): D (gradient lower by 2C/m when the record is drawn) has larger outputs
    threshold = float(np.median(on_d_prime)) + (2 * clip / m)
    lower = epsilon_lower_bound(int(np.sum(on_d > threshold)), 20_000, int(np.sum(on_d_prime > threshold)), 20_000)
    assert lower <= eps_t
    if batch is None:
        assert lower >= 0.8 * eps_t


def test_bad_inputs_are_refused_with_the_value():
    with pytest.raises(ValueError, match="iterations"):
        DPNAG(iterations=0)
    with pytest.raises(ValueError, match="p must be an integer"):
        DPMASG(p=0)
    with pytest.raises(ConfigError, match="batch_size = 5000"):
        _fit(DPNAG(batch_size=5000), _problem(n=1000))
    X, y, _ = make_logreg(300, 20, 20.0, 1)
    with pytest.raises(ConfigError, match="strongly convex"):
        _fit(DPNAG(), make_problem(X, y, loss="logistic", reg=0.0, public_feature_bound=1.0))
    assert DPNAG().refusal(Request(model="svm", loss="hinge")).setting == "model"


def test_batch_size_must_be_a_positive_integer_or_null():
    with pytest.raises(ValueError, match=re.escape("batch_size must be an integer ≥ 1 or null, got 2.5")):
        DPNAG(batch_size=2.5)
    assert DPNAG(batch_size=None).batch_size is None


def test_smoothness_is_derived_from_the_public_row_bound_when_not_set():
    X, y, _ = make_logreg(500, 20, 20.0, 3)
    by_rows = make_problem(X, y, loss="logistic", reg=MU, public_row_norm=2.0)
    by_entries = make_problem(X, y, loss="logistic", reg=MU, public_feature_bound=1.0)
    both = make_problem(X, y, loss="logistic", reg=MU, public_row_norm=3.0, public_feature_bound=0.5)
    assert DPGD().public_smoothness(by_rows) == pytest.approx(0.25 * 4.0 + MU, rel=1e-15)  # R²/4 + μ
    assert DPGD().public_smoothness(by_entries) == pytest.approx(0.25 * 20 + MU, rel=1e-15)  # R² = d·1²
    assert DPGD().public_smoothness(both) == pytest.approx(0.25 * 5.0 + MU, rel=1e-15)  # min(3, √20·0.5)² = 5
    huber = make_problem(X, y, loss="huber_hinge", reg=MU, public_row_norm=2.0, h=0.5)
    assert DPNAG().public_smoothness(huber) == pytest.approx(4.0 / (2 * 0.5) + MU, rel=1e-15)  # ℓ″ ≤ 1/(2h)
    derived, _, _ = _fit(DPNAG(iterations=50), by_rows)
    explicit, _, _ = _fit(DPNAG(iterations=50, smoothness=0.25 * 4.0 + MU), by_rows)
    assert np.array_equal(derived.w, explicit.w)


def test_without_a_public_row_bound_the_smoothness_must_be_set():
    X, y, _ = make_logreg(300, 20, 20.0, 1)
    private_only = make_problem(X, y, loss="logistic", reg=MU)
    with pytest.raises(ConfigError, match=r"dp_gd: .*no public bound.*algorithm.smoothness=<L>"):
        _fit(DPGD(), private_only)
    with pytest.raises(ConfigError, match=r"dp_gd: .*no public bound.*algorithm.l1_clip=<C>"):
        _fit(DPGD(smoothness=L), private_only)
    result, _, _ = _fit(DPGD(iterations=20, smoothness=L, l1_clip=20.0), private_only)
    assert result.n_iterations == 20


def test_the_l1_clip_defaults_to_the_largest_gradient_l1_norm_the_public_bounds_allow():
    X, y, _ = make_logreg(400, 20, 20.0, 2)
    law = make_problem(X, y, loss="logistic", reg=MU, public_feature_bound=1.0)
    assert DPGD().public_l1_clip(law) == 20.0  # d·1: the paper's C = 20 (eq. 5.2)
    declared = make_problem(X, y, loss="logistic", reg=MU, public_feature_bound=1.0, public_row_l1_norm=15.0)
    assert DPGD().public_l1_clip(declared) == 15.0
    unit_rows = make_problem(
        X / np.linalg.norm(X, axis=1, keepdims=True), y, loss="logistic", reg=MU, public_row_norm=1.0
    )
    assert DPGD().public_l1_clip(unit_rows) == pytest.approx(math.sqrt(20))  # ‖x‖₁ ≤ √d‖x‖₂
    derived, ledger, _ = _fit(DPGD(iterations=30), law)
    explicit, _, _ = _fit(DPGD(iterations=30, smoothness=DPGD().public_smoothness(law), l1_clip=20.0), law)
    assert np.array_equal(derived.w, explicit.w) and ledger.eps_spent <= 1.0
