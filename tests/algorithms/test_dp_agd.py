import itertools
import math

import numpy as np
import pytest

from dpbench.algorithms.base import Tracer
from dpbench.algorithms.dp_agd import DPAGD
from dpbench.privacy.accountants import ZCDPAccountant
from dpbench.privacy.events import GaussianEvent, PureDPEvent
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.screening import ScreenedValues
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
    pick = lambda *a, **k: (k["ledger"].charge(PureDPEvent(k["epsilon"])), next(picks))[1]
    monkeypatch.setattr("dpbench.algorithms.dp_agd.report_noisy_max_screened", pick)  # the logistic loss's
    result = DPAGD(max_iterations=3).fit(problem, ledger, np.random.default_rng(0), Tracer(problem, ledger))
    rho0, _ = DPAGD().initial_budgets(1.0, 1e-8)
    assert result.info["final_rho_grad"] == pytest.approx(rho0 * 1.1**2, rel=1e-12)
    extras = [1 / (2 * e.event.noise_multiplier**2) for e in ledger.entries if e.label == "dp_agd.gradient"]
    np.testing.assert_allclose(extras[:3], [rho0, 0.1 * rho0, 0.1 * 1.1 * rho0], rtol=1e-12)


def _sparse_problem(n=3000, d=40, seed=1):
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.2, random_state=seed, format="csr", data_rvs=np.ones)
    y = np.where(rng.random(n) < 0.4, -1.0, 1.0)
    return make_problem(X, y, loss="logistic", reg=0.01)


@pytest.mark.parametrize("problem", [_problem(), _sparse_problem()], ids=["dense", "sparse"])
def test_every_level_of_screened_scores_holds_the_exact_ones(problem):
    """200 random points and directions (norms up to 30, so margins reach the clipping and beyond): the Taylor
    bounds at anchors 0, then 0 and η_max/2, then 0, η_max/2 and η_max, and the float64 sums of the contender
    steps (a random half here; the others keep the last Taylor bounds), each hold the exact scores within their
    stated bound; each anchor tightens the bounds; the direct sums' bound is rounding only."""
    algo, rng = DPAGD(), np.random.default_rng(3)
    steps = np.linspace(0.0, algo.max_step, algo.n_candidates + 1)
    for _ in range(200):
        w = rng.normal(size=problem.dim) * rng.uniform(0, 30) / np.sqrt(problem.dim)
        direction = rng.normal(size=problem.dim)
        direction /= np.linalg.norm(direction)
        candidates = w[None, :] - steps[:, None] * direction[None, :]
        at_w, along = problem.X @ w, problem.X @ direction
        exact = algo._scores(problem, at_w, along, steps, candidates)
        level = algo._screened_scores(problem, at_w, along, steps, candidates, lambda exact=exact: exact)
        contenders = rng.random(steps.size) < 0.5
        errors = []
        while True:
            assert np.all(np.abs(-level.approx - exact) <= level.error)
            errors.append(level.error)
            if level.finer is None:
                break
            level = level.finer(contenders)
        assert len(errors) == 4
        for wider, narrower in itertools.pairwise(
            errors[:3]
        ):  # the anchors' intervals intersect (up to rounding terms)
            assert np.all(narrower <= wider + 1e-6)
        assert errors[0][0] < 1e-6 * (1.0 + np.abs(exact[0]))  # exact at its anchor but for rounding terms
        assert np.array_equal(errors[3][~contenders], errors[2][~contenders])
        assert np.all(errors[3][contenders] < 1e-6 * (1.0 + np.abs(exact[contenders])))


def test_screened_fits_are_the_exact_fits_bit_for_bit(monkeypatch):
    """DP-AGD on the dense and sparse problems at ε = 0.1, 1, 4 and two seeds: weights, iterations and
    ledgers as when every noisy min computes its exact scores (an error bound of inf forces it), with
    most noisy mins decided by the approximate scores, nine in ten by the Taylor bounds alone."""
    from dpbench.algorithms import dp_agd as module

    def fits():
        out = []
        for problem in (_problem(), _sparse_problem()):
            for eps in (0.1, 1.0, 4.0):
                for seed in (0, 1):
                    ledger = Ledger(eps, 1e-8, ZCDPAccountant())
                    result = DPAGD().fit(problem, ledger, np.random.default_rng(seed), Tracer(problem, ledger))
                    out.append((result.w.tobytes(), result.n_iterations, ledger.eps_spent, len(ledger.entries)))
        return out

    exact_calls, direct_calls = [], []
    real_scores, real_direct = module.DPAGD._scores, module.LogisticLineBounds.direct_sums
    monkeypatch.setattr(module.DPAGD, "_scores", lambda *a, **k: exact_calls.append(1) or real_scores(*a, **k))
    monkeypatch.setattr(module.LogisticLineBounds, "direct_sums", lambda *a: direct_calls.append(1) or real_direct(*a))
    screened = fits()
    screened_exact_calls = len(exact_calls)
    monkeypatch.setattr(
        module.DPAGD,
        "_screened_scores",
        lambda self, problem, at_w, along, steps, candidates, exact: ScreenedValues(
            np.zeros(steps.size), np.full(steps.size, np.inf), lambda: -exact()
        ),
    )
    exact_calls.clear()
    assert fits() == screened
    assert screened_exact_calls < 0.2 * len(exact_calls)
    assert len(direct_calls) < 0.1 * len(exact_calls)  # the Taylor bounds decided the others
