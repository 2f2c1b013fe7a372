import numpy as np
import pytest

from dpbench.algorithms.base import Tracer
from dpbench.algorithms.dp_sgd import DPSGD
from dpbench.algorithms.sampling import bernoulli_positions, poisson_subsample
from dpbench.privacy.accountants import RDPAccountant
from dpbench.privacy.events import GaussianEvent, PoissonSampledEvent
from dpbench.privacy.ledger import Ledger
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
    result = DPSGD(noise="fixed", learning_rate=0.5, max_iterations=3000).fit(
        problem, ledger, np.random.default_rng(1), Tracer(problem, ledger)
    )
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
    # at ε = 0.05 the calibrated run is noise-dominated (over 40 seeds its objective beats w₀'s in about
    # half): what it buys is the run, paid in full
    assert calibrated.n_iterations > 0 and 0.049 < calibrated_ledger.eps_spent <= 0.05


def test_max_iterations_caps_a_calibrated_run_and_lowers_its_noise():
    problem = _problem()
    sigmas = []
    for cap in (None, 10):
        ledger = Ledger(0.4, 1e-8, RDPAccountant())
        result = DPSGD(max_iterations=cap).fit(problem, ledger, np.random.default_rng(0), Tracer(problem, ledger))
        sigmas.append(result.info["noise_multiplier"])
    assert result.n_iterations == 10 and sigmas[1] < sigmas[0]


@pytest.mark.parametrize("chunk", [None, 1, 3])
def test_poisson_subsample_has_the_bernoulli_law(chunk):
    """Each index kept with probability q, pairs (adjacent ones included) independently, batch size
    Binomial(n, q); ``chunk`` = 1 or 3 forces the draw of further chunks of gaps on almost every call.
    Bounds are ±5 standard deviations (two-sided miss probability < 6·10⁻⁷ each), on fixed seeds."""
    n, q, draws = 50, 0.2, 4000
    rng = np.random.default_rng(0)
    counts, pairs = np.zeros(n), np.zeros((n, n))
    sizes = []
    for _ in range(draws):
        idx = poisson_subsample(n, q, rng) if chunk is None else bernoulli_positions(n, q, rng, chunk)
        assert np.all(np.diff(idx) > 0) and (idx.size == 0 or (idx[0] >= 0 and idx[-1] < n))
        counts[idx] += 1
        pairs[np.ix_(idx, idx)] += 1
        sizes.append(len(idx))
    sd = np.sqrt(draws * q * (1 - q))  # ≈ 25
    assert np.all(np.abs(counts - draws * q) < 5 * sd)
    pair_sd = np.sqrt(draws * q**2 * (1 - q**2))  # ≈ 12.4
    for i, j in ((0, 1), (24, 25), (48, 49), (0, 49), (10, 30)):
        assert abs(pairs[i, j] - draws * q**2) < 5 * pair_sd, (i, j)
    assert np.mean(sizes) == pytest.approx(n * q, abs=5 * np.sqrt(n * q * (1 - q) / draws))
    assert np.var(sizes) == pytest.approx(n * q * (1 - q), rel=0.15)


def test_bad_hyper_parameters_are_named():
    with pytest.raises(ValueError, match="noise must be one of calibrated, fixed, got 'adaptive'"):
        DPSGD(noise="adaptive")
    with pytest.raises(ValueError, match="epochs must be a finite number > 0, got 0"):
        DPSGD(epochs=0)
    with pytest.raises(ValueError, match="noise_multiplier must be a finite number > 0, got 0"):
        DPSGD(noise_multiplier=0)
    with pytest.raises(ValueError, match="clip"):
        DPSGD(clip=float("nan"))
