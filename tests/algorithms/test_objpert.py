import math

import numpy as np
import pytest

from dpbench.algorithms.base import Tracer
from dpbench.algorithms.objpert import ObjPert
from dpbench.data import clip_rows
from dpbench.errors import ConfigError
from dpbench.privacy.accountants import make_accountant
from dpbench.privacy.events import ApproxDPEvent
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.mechanisms import objective_perturbation_noise
from dpbench.problems import make_problem


def _problem(n=1500, d=5, seed=0, loss="logistic"):
    rng = np.random.default_rng(seed)
    X = np.hstack([np.ones((n, 1)), rng.uniform(size=(n, d - 1))])
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ rng.normal(size=d) * 4 + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return make_problem(X, y, loss=loss, reg=0.001)


def test_noise_scale_matches_kifer_smith_thakurta_by_hand():
    ledger = Ledger(1.0, 1e-8, make_accountant("approx"))
    b = objective_perturbation_noise(
        400_000, gradient_bound=1.0, epsilon=1.0, delta=1e-8, rng=np.random.default_rng(0), ledger=ledger
    )
    sigma = math.sqrt(8 * math.log(2 / 1e-8) + 4 * 1.0) / 1.0  # σ² = ζ²(8 ln(2/δ) + 4ε)/ε² = 156.9
    # sample std of 4e5 normals is within 0.5 % of σ with probability > 1 − 1e-6
    assert np.std(b) == pytest.approx(sigma, rel=5e-3)
    assert [e.event for e in ledger.entries] == [ApproxDPEvent(1.0, 1e-8)]
    assert ledger.eps_spent == 1.0


@pytest.mark.parametrize("loss,curvature", [("logistic", 0.25), ("huber_hinge", 1.0)])
def test_minimises_the_perturbed_objective_with_delta_two_lambda_over_eps(monkeypatch, loss, curvature):
    problem = _problem(loss=loss)
    b = np.linspace(-30, 30, problem.dim)

    def fixed_noise(dim, **kwargs):
        kwargs["ledger"].charge(ApproxDPEvent(kwargs["epsilon"], kwargs["delta"]))
        return b

    monkeypatch.setattr("dpbench.algorithms.objpert.objective_perturbation_noise", fixed_noise)
    ledger = Ledger(0.5, 1e-8, make_accountant("approx"))
    result = ObjPert().fit(problem, ledger, np.random.default_rng(0), Tracer(problem, ledger))
    _, grad = problem.objective_and_gradient(result.w)
    extra = 2 * curvature / 0.5  # Δ = 2λ/ε
    stationarity = grad + (extra * result.w + b) / problem.n
    assert np.linalg.norm(stationarity) < 1e-7
    assert ledger.eps_spent <= 0.5


def test_rows_outside_the_unit_ball_are_clipped_never_checked():
    """Rows of norm 2 (no public bound says otherwise): ObjPert neither looks at them nor aborts — it
    trains on the rows clipped to norm 1, exactly as on data clipped beforehand."""
    base = _problem()
    wide = make_problem(base.X * 2.0, base.y, loss="logistic", reg=0.001)
    clipped = make_problem(clip_rows(base.X * 2.0, 1.0), base.y, loss="logistic", reg=0.001, public_row_norm=1.0)
    results = []
    for problem in (wide, clipped):
        ledger = Ledger(1.0, 1e-8, make_accountant("approx"))
        results.append(ObjPert().fit(problem, ledger, np.random.default_rng(0), Tracer(problem, ledger)).w)
        assert ledger.eps_spent <= 1.0
    assert np.array_equal(results[0], results[1])


def test_refuses_the_hinge_loss(compose_run_config):
    with pytest.raises(ConfigError, match="objpert does not support the hinge loss"):
        compose_run_config("algorithm=objpert", "model=svm")
    assert compose_run_config("algorithm=objpert").row_norm == 1.0
