"""Private Frank–Wolfe (dpbench_practical.frank_wolfe; Talwar, Thakurta & Zhang 2015): the budget of its T
selections, the ℓ1 ball, the utilities' sensitivity under both relations, accuracy at a large budget, and
the authors' code's departures."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpbench.algorithms.base import Request
from dpbench.algorithms.registry import make_algorithm
from dpbench.privacy.accountants import make_accountant
from dpbench.privacy.ledger import Ledger
from dpbench.problems import make_problem
from dpbench_practical import frank_wolfe as fw


class Recorder:
    def plan(self, *args, **kwargs):
        pass

    def record(self, *args, **kwargs):
        pass


def problem(n: int = 2000, d: int = 6, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(size=(n, d)) / 2, -1, 1)
    y = np.where(X @ np.array([3.0, -2.0, 0, 0, 1.0, 0]) + 0.2 * rng.normal(size=n) >= 0, 1.0, -1.0)
    return make_problem(X, y, loss="logistic", reg=0.0, public_feature_bound=1.0)


def fit(epsilon=1.0, neighbouring="add_remove", seed=0, data=None, **params):
    method = make_algorithm("private_fw", params)
    ledger = Ledger(epsilon, 1e-5, make_accountant(method.accountant), neighbouring)
    result = method.fit(problem() if data is None else data, ledger, np.random.default_rng(seed), Recorder())
    return method, ledger, result


def test_the_selections_spend_the_budget_and_the_iterates_stay_in_the_ball():
    _, ledger, result = fit(epsilon=0.5, radius=3.0, steps=40)
    assert 0.5 * (1 - 1e-5) <= ledger.eps_spent <= 0.5
    assert np.abs(result.w).sum() <= 3.0 * (1 + 1e-12)
    assert result.n_iterations == 40


def test_the_utilities_move_by_the_claimed_sensitivity_when_a_record_is_added():
    method = make_algorithm("private_fw", {"radius": 2.0})
    X = np.zeros((10, 3))
    pair = [
        make_problem(rows, np.ones(rows.shape[0]), loss="huber_hinge", reg=0.0, public_n=10)
        for rows in (X, np.vstack([X, np.eye(1, 3)]))
    ]
    moved = np.abs(method.utilities(pair[1], np.zeros(3)) - method.utilities(pair[0], np.zeros(3))).max()
    assert moved == pytest.approx(method.vertex_sensitivity(pair[0], 1.0, "add_remove")) == 2.0 / 10
    assert method.vertex_sensitivity(pair[0], 1.0, "replace_one") == 2 * moved


def test_replace_one_calibrates_to_twice_the_sensitivity(monkeypatch):
    seen = []
    real = fw.exponential_mechanism

    def spy(utilities, **kwargs):
        seen.append(kwargs["sensitivity"])
        return real(utilities, **kwargs)

    monkeypatch.setattr(fw, "exponential_mechanism", spy)
    data = problem()
    fit(steps=3, data=data)
    fit(steps=3, data=data, neighbouring="replace_one")
    assert seen[3] == pytest.approx(2 * seen[0]) and seen[0] == pytest.approx(10.0 / data.n_public)


def test_a_large_budget_finds_the_signal():
    data = problem(n=20_000, seed=1)
    _, _, result = fit(epsilon=50.0, data=data, radius=10.0, steps=200)
    assert np.mean(np.where(data.X @ result.w >= 0, 1.0, -1.0) == data.y) > 0.95


def test_the_authors_mode_uses_their_scale_minibatch_and_step():
    method, ledger, result = fit(fidelity="authors_code", steps=50)
    assert method.fidelity_mode.breaks_guarantee
    assert result.info["epsilon_per_step"] == pytest.approx(1.0 / math.sqrt(8 * 50 * math.log(1e5)))
    assert ledger.eps_spent < 1.0  # their advanced-composition claim, paid as T pure steps in RDP
    outputs = {fit(fidelity="authors_code", steps=2, seed=s)[2].w.tobytes() for s in range(400)}
    assert len(outputs) <= 256  # one byte seeds the whole run


def test_an_l1_model_and_the_hinge_loss_are_refused():
    method = make_algorithm("private_fw", {})
    assert method.refusal(Request(model="liu_l1_svm", loss="hinge", l1_reg=0.0005)).setting == "model.l1_reg"
    assert method.refusal(Request(loss="logistic", neighbouring="replace_one")) is None
