"""The smoothed hinge solver: F* of the ℓ2 hinge SVM without copying X, to a certified duality gap."""

from __future__ import annotations

import numpy as np
import pytest

from dpbench.algorithms import baselines
from dpbench.algorithms.base import Tracer
from dpbench.algorithms.baselines import NonPrivate
from dpbench.algorithms.smoothed_hinge import hinge_optimum
from dpbench.data.synthetic_svm import make_svm
from dpbench.problems import make_problem

pytestmark = pytest.mark.xdist_group(
    "algorithms.test_smoothed_hinge"
)  # its module-scoped fixture is made once, on one worker


@pytest.fixture(scope="module")
def svm_problem():
    X, y, *_ = make_svm(4000, 0, 50, 1.0, 0.05, 0)
    return make_problem(X, y, loss="hinge", reg=0.0005)


def test_the_certified_gap_bounds_the_distance_to_liblinears_minimum(svm_problem):
    optimum = hinge_optimum(svm_problem, gap_tol=1e-8, max_iter=100_000)
    reference = NonPrivate().fit(svm_problem, None, np.random.default_rng(0), Tracer(svm_problem, None))
    fstar = svm_problem.evaluate_objective(reference.w)  # liblinear's dual coordinate descent at tol 1e-10
    assert 0 < optimum.gap <= 1e-8
    assert optimum.value == svm_problem.evaluate_objective(optimum.w)
    # weak duality: F(w) − F* ≤ gap (1e-12: liblinear's own distance to F*)
    assert -1e-12 <= optimum.value - fstar <= optimum.gap + 1e-12


def test_float32_data_give_the_float64_minimum_to_the_gap(svm_problem):
    exact = svm_problem.X.astype(np.float32).astype(np.float64)
    want = hinge_optimum(make_problem(exact, svm_problem.y, loss="hinge", reg=0.0005), gap_tol=1e-8, max_iter=100_000)
    got = hinge_optimum(
        make_problem(exact.astype(np.float32), svm_problem.y, loss="hinge", reg=0.0005), gap_tol=1e-8, max_iter=100_000
    )
    assert abs(got.value - want.value) <= 1e-7


def test_nonprivate_solves_large_dense_hinge_problems_by_smoothing(svm_problem, monkeypatch):
    monkeypatch.setattr(baselines, "LIBLINEAR_MAX_DENSE_ENTRIES", svm_problem.n * svm_problem.dim - 1)
    result = NonPrivate().fit(svm_problem, None, np.random.default_rng(0), Tracer(svm_problem, None))
    assert result.info["solver"] == "smoothed_hinge"
    assert 0 < result.info["certified_gap"] <= baselines.HINGE_GAP_TOL


@pytest.mark.parametrize(("loss", "reg"), [("logistic", 0.0005), ("hinge", 0.0)])
def test_other_objectives_are_refused(svm_problem, loss, reg):
    problem = make_problem(svm_problem.X, svm_problem.y, loss=loss, reg=reg)
    with pytest.raises(ValueError, match="hinge_optimum needs the hinge loss with μ > 0"):
        hinge_optimum(problem, gap_tol=1e-8, max_iter=100)
