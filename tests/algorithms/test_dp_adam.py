"""DP-Adam releases exactly what DP-SGD releases (the same Poisson-subsampled Gaussian steps, the same σ,
the same spend) and moves by Adam's update on them; it meets add/remove natively with the public n̄ and
replace-one by group privacy; it learns at a large budget, passes ``dpbench check-method``, and joins
dpbench as one file: ``algorithm=dp_adam`` composes from its class."""

from __future__ import annotations

import numpy as np
import pytest

import dpbench.algorithms.dp_adam as dp_adam_module
from dpbench.algorithms.base import Tracer
from dpbench.algorithms.dp_adam import DPAdam
from dpbench.algorithms.dp_sgd import DPSGD
from dpbench.privacy.accountants import RDPAccountant
from dpbench.privacy.ledger import Ledger
from dpbench.problems import make_problem


def _problem(n=2000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    w_star = rng.normal(size=d)
    y = np.where(X @ w_star - (X @ w_star).mean() >= 0, 1.0, -1.0)
    return make_problem(X, y, loss="logistic", reg=0.001)


def _fit(method, problem, eps=0.8, seed=0):
    ledger = Ledger(eps, 1e-8, RDPAccountant())
    return method.fit(problem, ledger, np.random.default_rng(seed), Tracer(problem, ledger)), ledger


@pytest.mark.parametrize(("epochs", "batch_size"), [(1.0, None), (2.5, 200)])
def test_its_releases_and_spend_are_dp_sgds(epochs, batch_size):
    problem = _problem()
    adam, adam_ledger = _fit(DPAdam(epochs=epochs, batch_size=batch_size), problem)
    sgd, sgd_ledger = _fit(DPSGD(epochs=epochs, batch_size=batch_size), problem)
    assert adam.n_iterations == sgd.n_iterations and adam.info == sgd.info
    assert [e.event for e in adam_ledger.entries] == [e.event for e in sgd_ledger.entries]
    assert adam_ledger.eps_spent == sgd_ledger.eps_spent <= 0.8


def test_one_full_lot_step_moves_every_coordinate_by_the_learning_rate():
    """With q = 1 and one epoch there is one step, and Adam's bias-corrected first step is
    −η·ĝ/(|ĝ| + ε_Adam): every coordinate moves by η, up to the relative ε_Adam/|ĝ_j|, whatever the noise."""
    problem = _problem()
    result, _ = _fit(DPAdam(epochs=1.0, batch_size=problem.n, learning_rate=0.03), problem)
    assert result.n_iterations == 1
    np.testing.assert_allclose(np.abs(result.w), 0.03, rtol=1e-4)  # holds while every |ĝ_j| > 1e-4 = ε_Adam/rtol


def test_it_meets_add_remove_natively_with_the_public_n_and_replace_one_by_group_privacy(monkeypatch):
    """The release is the clipped lot sum, charged at sensitivity C with q = L/n̄. With n̄ = 10 public the
    default lot gives q = 1, and removing the record whose clipped gradient opposes the others' moves the
    released sum by exactly C (attained, never exceeded); q stays 1 (it reads n̄, not the data's size)."""
    released: list[tuple[np.ndarray, dict]] = []

    class NoiselessRelease:
        def __init__(self, **kwargs):
            self.kwargs = kwargs

        def __call__(self, value):
            released.append((np.array(value, dtype=float), self.kwargs))
            return np.array(value, dtype=float)

    monkeypatch.setattr(dp_adam_module, "GaussianRelease", NoiselessRelease)
    clip, n = 1.0, 10
    X, y = np.tile([10.0, 0.0], (n, 1)), np.ones(n)
    y[0] = -1.0  # at w = 0 its clipped gradient is +C·e₁, everyone else's −C·e₁
    for rows in (slice(None), slice(1, None)):  # D, then D without record 0, n̄ = 10 both times
        _fit(DPAdam(epochs=1.0, clip=clip), make_problem(X[rows], y[rows], loss="logistic", reg=0.0, public_n=n), 10.0)
    (on_d, charge), (without, _) = released
    assert charge["sensitivity"] == clip and charge["sampling_rate"] == 1.0
    assert np.linalg.norm(on_d - without) == pytest.approx(clip)
    assert DPAdam.relations == {"add_remove": "native", "replace_one": "group_privacy"}
    assert DPAdam.paper_relation == "add_remove" and DPAdam.privacy_unit == "record"


def test_a_large_budget_approaches_the_optimum():
    problem = _problem(n=5000)
    result, _ = _fit(DPAdam(epochs=5.0, learning_rate=0.05), problem, eps=50.0, seed=1)
    assert problem.evaluate_objective(result.w) < 0.7 * problem.evaluate_objective(np.zeros(5))


@pytest.mark.slow
def test_it_composes_from_its_class_and_passes_check_method():
    from dpbench.check_method import check

    lines: list[str] = []
    outcomes = check("dp_adam", 1000, lines.append)
    assert all(outcome.ok for outcome in outcomes), "\n".join(lines)
    assert [o.check for o in outcomes] == [
        "declared",
        "job add_remove",
        "job replace_one (group_privacy)",
        "job add_remove, tuning=private",
        "ledger",
        "deterministic",
        "audit",
        "planted control",
    ]
