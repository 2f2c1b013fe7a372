"""AMP (dpbench_practical.amp; Iyengar et al. 2019, Alg. 1) and its two releases
(dpbench.privacy.minima_perturbation): calibrations against closed forms, the fit's certificate, its
charges and sensitivities, the hyper-parameter-free schedule, and the authors' code's departures."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from dpbench.algorithms.registry import make_algorithm
from dpbench.privacy.accountants import make_accountant
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.minima_perturbation import amp_regulariser, tail_bound_gaussian_sigma
from dpbench.problems import make_problem
from dpbench_practical import amp


def exact_gaussian_delta(sensitivity: float, sigma: float, epsilon: float) -> float:
    """The smallest δ for which the Gaussian mechanism is (ε, δ)-DP (Balle & Wang 2018, Thm 8)."""
    a, b = sensitivity / (2 * sigma), epsilon * sigma / sensitivity
    return float(norm.cdf(a - b) - math.exp(epsilon) * norm.cdf(-a - b))


@pytest.mark.parametrize("delta", [1e-3, 1e-5, 1e-9])
@pytest.mark.parametrize("epsilon", [0.01, 0.1, 0.5, 1.0, 2.0, 5.0])
def test_the_tail_bound_gaussian_is_at_least_the_exact_calibration(epsilon, delta):
    sigma = tail_bound_gaussian_sigma(sensitivity=2.0, epsilon=epsilon, delta=delta)
    assert sigma == pytest.approx(2.0 * (1 + math.sqrt(2 * math.log(1 / delta))) / epsilon)
    assert exact_gaussian_delta(2.0, sigma, epsilon) <= delta


def test_the_tail_bound_gaussian_refuses_epsilons_its_proof_does_not_cover():
    limit = 2 * (1 + math.sqrt(2 * math.log(1e5)))
    tail_bound_gaussian_sigma(sensitivity=1.0, epsilon=limit, delta=1e-5)
    with pytest.raises(ValueError, match=r"covers ε ≤ 2\(1 \+ √\(2 ln\(1/δ\)\)\) = 11.6"):
        tail_bound_gaussian_sigma(sensitivity=1.0, epsilon=limit * 1.01, delta=1e-5)


def test_the_regulariser_is_two_lambda_over_the_curvature_budget_and_that_budget_stays_below_one():
    assert amp_regulariser(curvature_bound=0.25, epsilon=1.0, noise_share=0.9) == pytest.approx(2 * 0.25 / 0.1)
    with pytest.raises(ValueError, match=r"AMP needs ε_obj − ε_noise < 1.*raise noise_share above 0\.75"):
        amp_regulariser(curvature_bound=0.25, epsilon=4.0, noise_share=0.5)


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 0.4, 1.0, 1.6, 4.0, 10.0])
def test_the_hyperparameter_free_share_is_the_authors_strategy_and_always_admissible(epsilon):
    share = amp.hyperparameter_free_noise_share(epsilon)
    expected = max(min(0.88671 + 0.0186607 / epsilon**0.372906, 0.99), 1 - 1 / epsilon + 0.001)
    assert share == expected
    amp_regulariser(curvature_bound=0.25, epsilon=0.99 * epsilon, noise_share=share)  # not refused


def problem(n: int = 400, d: int = 5, seed: int = 0, reg: float = 0.01):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / math.sqrt(d)
    y = np.where(X @ np.arange(1, d + 1) + 0.3 * rng.normal(size=n) >= 0, 1.0, -1.0)
    return make_problem(X, y, loss="logistic", reg=reg)


class Recorder:
    def record(self, *args, **kwargs):
        pass


def fit(name: str, epsilon: float = 1.0, delta: float = 1e-5, seed: int = 0, data=None, **params):
    method = make_algorithm(name, params)
    ledger = Ledger(epsilon, delta, make_accountant(method.accountant))
    result = method.fit(problem() if data is None else data, ledger, np.random.default_rng(seed), Recorder())
    return method, ledger, result


def test_a_fit_spends_its_whole_budget_in_two_releases():
    _, ledger, result = fit("amp", epsilon=0.5, delta=1e-6)
    assert ledger.eps_spent == pytest.approx(0.5)
    assert result.n_iterations == 1 and np.all(np.isfinite(result.w))


def test_the_minimiser_is_certified_and_the_output_noise_follows_its_sensitivity(monkeypatch):
    seen = {}
    real_noise, real_minimiser = amp.tail_bound_gaussian_mechanism, amp._certified_minimiser

    def output(theta, **kwargs):
        seen.update(kwargs, theta=theta)
        return real_noise(theta, **kwargs)

    def minimiser(data, regulariser, b, gamma, max_iter):
        theta = real_minimiser(data, regulariser, b, gamma, max_iter)
        seen["gradient_norm"] = np.linalg.norm(amp._perturbed_objective(data, regulariser, b)(theta)[1])
        return theta

    monkeypatch.setattr(amp, "tail_bound_gaussian_mechanism", output)
    monkeypatch.setattr(amp, "_certified_minimiser", minimiser)
    data = problem()
    _, _, result = fit("amp", epsilon=1.0, data=data)
    n, regulariser = data.n_public, result.info["regulariser"]
    gamma = 1.0 / n**2
    assert regulariser == pytest.approx(2 * data.loss.smoothness / (0.99 * 0.1))
    assert seen["gradient_norm"] <= gamma
    assert seen["sensitivity"] == pytest.approx(2 * n * gamma / (regulariser + n * data.reg))
    assert (seen["epsilon"], seen["delta"]) == pytest.approx((0.01, 1e-7))


def test_the_fit_is_close_to_the_nonprivate_optimum_at_a_large_budget():
    data = problem(n=20_000, seed=3, reg=0.001)
    _, _, result = fit("amp", epsilon=10.0, delta=1e-5, data=data, noise_share=0.99)
    accuracy = np.mean(np.where(data.X @ result.w >= 0, 1.0, -1.0) == data.y)
    assert accuracy > 0.9


def test_an_uncertifiable_tolerance_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"8 Newton steps could not bring ‖∇J‖ to γ = 1e-30"):
        fit("amp", gradient_tol=1e-30)


def test_the_same_generator_gives_the_same_release_and_another_a_different_one():
    w0, w1, w2 = (fit("amp_hf", seed=s)[2].w for s in (0, 0, 1))
    assert np.array_equal(w0, w1) and not np.array_equal(w0, w2)


def test_the_authors_mode_claims_the_budget_retries_unpaid_and_draws_from_one_of_256_streams():
    method, ledger, result = fit("amp", fidelity="authors_code")
    assert method.fidelity_mode.breaks_guarantee
    assert ledger.eps_spent == pytest.approx(1.0)
    assert result.info["attempts"] >= 1
    assert result.info["regulariser"] == pytest.approx(2 * 1.0 / (0.99 * 0.1))  # beta = L² with L = 1
    fits = [fit("amp", fidelity="authors_code", seed=s)[2] for s in range(400)]
    assert all(r.info["attempts"] == 1 for r in fits)  # BFGS succeeds at once on this small problem
    assert len({r.w.tobytes() for r in fits}) <= 256  # 400 fits, one of 256 noise streams each


def test_amp_refuses_the_hinge_loss_and_private_tuning():
    from dpbench.algorithms.base import Request

    method = make_algorithm("amp", {})
    assert method.refusal(Request(model="svm", loss="hinge")).setting == "model"
    assert method.refusal(Request(loss="logistic", tuning="private", searches_grid=True)).setting == "tuning"
    assert method.refusal(Request(loss="logistic", neighbouring="replace_one")) is None


@pytest.mark.slow
@pytest.mark.parametrize(("name", "checks"), [("amp", 8), ("amp_hf", 7)])
def test_check_method_passes_through_the_public_protocol(cli, tmp_path, name, checks):
    run = cli(["check-method", name], tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"dpbench check-method: {name} passed {checks} checks" in run.stdout
    assert "refused, as the class says (tuning=private cannot tune amp" in run.stdout or name == "amp_hf"
