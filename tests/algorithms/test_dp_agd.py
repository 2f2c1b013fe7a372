import math

import numpy as np
import pytest

from dpbench.algorithms.base import Tracer
from dpbench.algorithms.dp_agd import DPAGD
from dpbench.privacy.accountants import ZCDPAccountant
from dpbench.privacy.events import GaussianEvent, PureDPEvent
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.zcdp import zcdp_epsilon
from dpbench.problems import make_problem


def _problem(n=2000, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = np.hstack([np.ones((n, 1)), rng.uniform(size=(n, d - 1))])
    y = np.where(X @ rng.normal(size=d) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return make_problem(X, y, loss="logistic", reg=0.001)


def test_initial_budgets_match_the_public_code_by_hand():
    rho_ng, rho_nmax = DPAGD().initial_budgets(1.0, 1e-8)
    eps_nmax = 1.0 / 120
    sigma = 3.0 * math.sqrt(2 * math.log(1.25e8)) / eps_nmax  # classic Gaussian mechanism, sensitivity 3
    assert rho_ng == pytest.approx(3.0**2 / (2 * sigma**2), rel=1e-12)
    assert rho_nmax == pytest.approx(eps_nmax**2 / 2, rel=1e-12)


def test_charges_are_gaussian_gradients_and_noisy_mins_priced_in_zcdp():
    problem = _problem()
    ledger = Ledger(1.0, 1e-8, ZCDPAccountant())
    DPAGD().fit(problem, ledger, np.random.default_rng(0), Tracer(problem, ledger))
    rho_total = 0.0
    for entry in ledger.entries:
        if entry.label == "dp_agd.gradient":
            assert isinstance(entry.event, GaussianEvent)
            rho_total += 1 / (2 * entry.event.noise_multiplier**2)
        else:
            assert entry.label == "dp_agd.noisy_min" and entry.event == PureDPEvent(1.0 / 120)
            rho_total += (1.0 / 120) ** 2 / 2
    assert ledger.eps_spent == pytest.approx(zcdp_epsilon(rho_total, 1e-8), rel=1e-9)
    assert 0.9 < ledger.eps_spent <= 1.0  # the budget is used, never exceeded


def test_budget_increase_averages_old_and_new_gradient_by_budget(monkeypatch):
    """When the noisy min picks step 0 the gradient budget grows by (1 + γ)."""
    problem = _problem()
    ledger = Ledger(1.0, 1e-8, ZCDPAccountant())
    picks = iter([0, 0, 3] + [2] * 10_000)
    monkeypatch.setattr(
        "dpbench.algorithms.dp_agd.report_noisy_max",
        lambda *a, **k: (k["ledger"].charge(PureDPEvent(k["epsilon"])), next(picks))[1],
    )
    result = DPAGD(max_iterations=3).fit(problem, ledger, np.random.default_rng(0), Tracer(problem, ledger))
    rho0, _ = DPAGD().initial_budgets(1.0, 1e-8)
    assert result.info["final_rho_grad"] == pytest.approx(rho0 * 1.1**2, rel=1e-12)
    extras = [1 / (2 * e.event.noise_multiplier**2) for e in ledger.entries if e.label == "dp_agd.gradient"]
    np.testing.assert_allclose(extras[:3], [rho0, 0.1 * rho0, 0.1 * 1.1 * rho0], rtol=1e-12)
