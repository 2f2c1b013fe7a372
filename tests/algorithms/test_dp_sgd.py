import numpy as np
import pytest

from dpbench.algorithms.base import Tracer
from dpbench.algorithms.dp_sgd import DPSGD
from dpbench.algorithms.sampling import poisson_subsample
from dpbench.privacy.accountant import Ledger, RDPAccountant
from dpbench.privacy.events import GaussianEvent, PoissonSampledEvent
from dpbench.problems import make_problem


def _problem(n=2000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    w_star = rng.normal(size=d)
    y = np.where(X @ w_star - (X @ w_star).mean() >= 0, 1.0, -1.0)
    return make_problem(X, y, loss="logistic", reg=0.001)


def test_fixed_noise_runs_exactly_as_many_steps_as_the_budget_pays_for():
    problem = _problem()
    ledger = Ledger(0.8, 1e-8, RDPAccountant())
    algo = DPSGD(noise="fixed")
    result = algo.fit(problem, ledger, np.random.default_rng(0), Tracer(problem, ledger))
    q = int(np.sqrt(2000) + 10) / 2000
    step = PoissonSampledEvent(q, GaussianEvent(4.0))
    assert ledger.eps_spent <= 0.8
    assert not ledger.can_afford(step)  # the budget is used up…
    fresh = Ledger(0.8, 1e-8, RDPAccountant())
    fresh.charge(step, count=result.n_iterations)  # …by exactly that many steps
    assert fresh.eps_spent == pytest.approx(ledger.eps_spent, rel=1e-12)
    assert ledger.summary()["n_charges"] == result.n_iterations


def test_large_budget_approaches_the_optimum():
    problem = _problem(n=5000)
    ledger = Ledger(50.0, 1e-8, RDPAccountant())
    result = DPSGD(noise="fixed", learning_rate=0.5, max_iterations=3000).fit(problem, ledger, np.random.default_rng(1), Tracer(problem, ledger))
    start = problem.evaluate_objective(np.zeros(5))
    assert problem.evaluate_objective(result.w) < 0.7 * start


@pytest.mark.parametrize("eps, epochs", [(0.05, 1.0), (0.4, 2.5), (3.0, 0.3)])
def test_calibrated_noise_is_the_smallest_sigma_that_pays_for_the_epochs(eps, epochs):
    problem = _problem()
    ledger = Ledger(eps, 1e-8, RDPAccountant())
    result = DPSGD(epochs=epochs).fit(problem, ledger, np.random.default_rng(0), Tracer(problem, ledger))
    q = int(np.sqrt(2000) + 10) / 2000
    assert result.n_iterations == int(np.ceil(epochs / q)) == ledger.summary()["n_charges"]
    sigma = result.info["noise_multiplier"]
    assert all(e.event == PoissonSampledEvent(q, GaussianEvent(sigma)) for e in ledger.entries)
    assert ledger.eps_spent <= eps
    fresh = Ledger(eps, 1e-8, RDPAccountant())
    assert not fresh.can_afford(PoissonSampledEvent(q, GaussianEvent(sigma * (1 - 1e-5))), result.n_iterations)


def test_calibrated_noise_buys_a_run_where_the_fixed_sigma_cannot_pay_one_step():
    problem = _problem()
    fixed_ledger, calibrated_ledger = Ledger(0.05, 1e-8, RDPAccountant()), Ledger(0.05, 1e-8, RDPAccountant())
    fixed = DPSGD(noise="fixed").fit(problem, fixed_ledger, np.random.default_rng(0), Tracer(problem, fixed_ledger))
    calibrated = DPSGD().fit(problem, calibrated_ledger, np.random.default_rng(0), Tracer(problem, calibrated_ledger))
    assert fixed.n_iterations == 0 and not fixed.w.any()  # σ = 4 cannot pay for one step at ε = 0.05
    assert calibrated.n_iterations > 0 and problem.evaluate_objective(calibrated.w) < problem.evaluate_objective(fixed.w)


def test_max_iterations_caps_a_calibrated_run_and_lowers_its_noise():
    problem = _problem()
    sigmas = []
    for cap in (None, 10):
        ledger = Ledger(0.4, 1e-8, RDPAccountant())
        result = DPSGD(max_iterations=cap).fit(problem, ledger, np.random.default_rng(0), Tracer(problem, ledger))
        sigmas.append(result.info["noise_multiplier"])
    assert result.n_iterations == 10 and sigmas[1] < sigmas[0]


def test_poisson_subsample_has_the_bernoulli_law():
    rng = np.random.default_rng(0)
    counts = np.zeros(50)
    sizes = []
    for _ in range(4000):
        idx = poisson_subsample(50, 0.2, rng)
        assert np.all(np.diff(idx) > 0)
        counts[idx] += 1
        sizes.append(len(idx))
    # each index kept with probability 0.2: 4000 draws, sd = sqrt(4000·0.16) ≈ 25 → ±5 sd = 126
    assert np.all(np.abs(counts - 800) < 126)
    assert np.mean(sizes) == pytest.approx(10.0, abs=0.25)
    assert np.var(sizes) == pytest.approx(50 * 0.2 * 0.8, rel=0.15)


def test_bad_hyper_parameters_are_named():
    with pytest.raises(ValueError, match="noise must be one of calibrated, fixed, got 'adaptive'"):
        DPSGD(noise="adaptive")
    with pytest.raises(ValueError, match="epochs must be finite and > 0, got 0"):
        DPSGD(epochs=0)
    with pytest.raises(ValueError, match="noise_multiplier must be finite and > 0, got 0"):
        DPSGD(noise_multiplier=0)
    with pytest.raises(ValueError, match="clip"):
        DPSGD(clip=float("nan"))
