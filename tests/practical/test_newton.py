"""DP-Newton with double noise and its DP-GD baseline (dpbench_practical.newton; Ganesh, Haghifam, Steinke &
Thakurta 2023): the three releases' budget split, the direction's sensitivity against the exact change of M⁻¹,
the eigenvalue floor, and the spend."""

from __future__ import annotations

import numpy as np
import pytest

from dpbench.algorithms.registry import make_algorithm
from dpbench.privacy.accountants import make_accountant
from dpbench.privacy.ledger import Ledger
from dpbench.problems import make_problem
from dpbench_practical import newton
from dpbench_practical.data_terms import data_hessian


class Recorder:
    def plan(self, *args, **kwargs):
        pass

    def record(self, *args, **kwargs):
        pass


def problem(n: int = 3000, d: int = 5, seed: int = 0, reg: float = 0.001):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    y = np.where(X @ np.arange(1.0, d + 1) + 0.3 * rng.normal(size=n) >= 0, 1.0, -1.0)
    return make_problem(X, y, loss="logistic", reg=reg)


def fit(name="dp_newton", epsilon=1.0, seed=0, data=None, **params):
    method = make_algorithm(name, params)
    ledger = Ledger(epsilon, 1e-5, make_accountant(method.accountant))
    result = method.fit(problem() if data is None else data, ledger, np.random.default_rng(seed), Recorder())
    return method, ledger, result


def test_the_budget_splits_into_the_three_shares_and_is_spent():
    method = make_algorithm("dp_newton", {"steps": 10, "grad_share": 0.6, "trace_share": 0.2})
    sigma_g, sigma_tr, sigma_dir = method.noise_multipliers(scale=2.0)  # ρ = 1/4 over 10 steps
    per_step = 0.25 / 10
    assert 1 / (2 * sigma_g**2) == pytest.approx(0.6 * per_step)
    assert 1 / (2 * sigma_tr**2) == pytest.approx(0.4 * 0.2 * per_step)
    assert 1 / (2 * sigma_dir**2) == pytest.approx(0.4 * 0.8 * per_step)
    _, ledger, result = fit(steps=10, grad_share=0.6, trace_share=0.2)
    assert 1 - 1e-5 <= ledger.eps_spent <= 1.0 and result.n_iterations == 10


@pytest.mark.parametrize("modification", ["add", "clip"])
def test_the_direction_moves_by_at_most_its_sensitivity_when_a_record_is_added(modification):
    method = make_algorithm("dp_newton", {"modification": modification})
    rng = np.random.default_rng(1)
    n, d, floor = 50, 4, 0.02  # n̄λ₀ = 1 > β, as λ₀ ≥ 1/n̄ guarantees
    base = rng.normal(size=(n, d)) / 3
    gradient = rng.normal(size=d)
    worst = 0.0
    for _ in range(200):
        theta = rng.normal(size=d) * 0.3
        record = rng.normal(size=(1, d))
        record /= max(1.0, np.linalg.norm(record))
        pair = [
            make_problem(rows, np.ones(rows.shape[0]), loss="logistic", reg=0.0, public_n=n)
            for rows in (base, np.vstack([base, record]))
        ]
        moved = [method.modified_inverse(data_hessian(p, theta), floor) @ gradient for p in pair]
        worst = max(worst, np.linalg.norm(moved[1] - moved[0]))
    bound = method.direction_sensitivity(float(np.linalg.norm(gradient)), n, 0.25, floor)
    assert 0 < worst <= bound


def test_the_trace_floor_and_the_released_path_follow_the_paper(monkeypatch):
    seen = []
    real = newton.gaussian_mechanism

    def spy(value, **kwargs):
        seen.append((kwargs["label"], kwargs["sensitivity"], kwargs["noise_multiplier"]))
        return real(value, **kwargs)

    monkeypatch.setattr(newton, "gaussian_mechanism", spy)
    data = problem()
    fit(steps=2, data=data)
    labels = [label for label, _, _ in seen]
    assert labels == ["dp_newton.gradient", "dp_newton.trace", "dp_newton.direction"] * 2
    assert seen[0][1] == pytest.approx(1.0 / data.n_public) and seen[1][1] == pytest.approx(0.25 / data.n_public)


@pytest.mark.parametrize("curvature", ["upper_bound", "hessian"])
def test_newton_at_a_large_budget_reaches_the_optimum_in_a_few_steps(curvature):
    data = problem(n=20_000, seed=2, reg=0.05)
    _, _, result = fit(epsilon=100.0, data=data, steps=8, curvature=curvature)
    from scipy.optimize import minimize

    best = minimize(data.objective_and_gradient, np.zeros(data.dim), jac=True, method="L-BFGS-B").fun
    assert data.evaluate_objective(result.w) - best < 1e-3


def test_the_dp_gd_baseline_spends_its_budget_and_descends():
    data = problem()
    _, ledger, result = fit("dp_gd_newton_baseline", epsilon=2.0, data=data, steps=50)
    assert 2.0 * (1 - 1e-5) <= ledger.eps_spent <= 2.0
    assert data.evaluate_objective(result.w) < data.evaluate_objective(np.zeros(data.dim))
