import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dpbench.problems import make_problem
from dpbench.problems.losses import HingeLoss, HuberHingeLoss, LogisticLoss

LOSSES = [("logistic", {}), ("hinge", {}), ("huber_hinge", {"h": 0.5})]


def _data(seed=0, n=300, d=7, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.1, 5.0, size=(n, 1))
    X[rng.random((n, d)) < 0.4] = 0.0
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    return (sp.csr_matrix(X) if sparse else X), y


@pytest.mark.parametrize("loss,params", LOSSES)
def test_clipped_gradient_sum_equals_explicit_per_example_clipping(loss, params):
    X, y = _data()
    problem = make_problem(X, y, loss=loss, reg=0.01, **params)
    w = np.random.default_rng(1).normal(size=X.shape[1])
    idx = np.arange(0, 300, 3)
    explicit = np.zeros(X.shape[1])
    for i in idx:  # the slow reference the vectorised code must match
        g = problem.loss.derivative(np.array([y[i] * X[i] @ w]))[0] * y[i] * X[i]
        explicit += g / max(1.0, np.linalg.norm(g) / 0.7)
    np.testing.assert_allclose(problem.clipped_gradient_sum(w, idx, 0.7), explicit, rtol=1e-10, atol=1e-12)
    assert problem.counts.grad_evals == len(idx)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 10_000), clip=st.floats(1e-3, 10.0), sparse=st.booleans())
def test_clipped_per_example_norms_never_exceed_clip(seed, clip, sparse):
    X, y = _data(seed, n=50, sparse=sparse)
    problem = make_problem(X, y, loss="logistic", reg=0.0)
    w = np.random.default_rng(seed).normal(size=X.shape[1]) * 10
    # the clipped contribution of every single example has norm ≤ C (the sensitivity bound)
    for i in range(50):
        assert np.linalg.norm(problem.clipped_gradient_sum(w, np.array([i]), clip)) <= clip * (1 + 1e-12)


@pytest.mark.parametrize("loss,params", [("logistic", {}), ("huber_hinge", {"h": 0.5})])
def test_gradient_matches_finite_differences(loss, params):
    X, y = _data(2, n=80, d=5)
    problem = make_problem(X, y, loss=loss, reg=0.05, **params)
    w = np.random.default_rng(3).normal(size=5) * 0.3
    _, grad = problem.objective_and_gradient(w)
    eps = 1e-6
    numeric = [
        (problem.evaluate_objective(w + eps * e) - problem.evaluate_objective(w - eps * e)) / (2 * eps)
        for e in np.eye(5)
    ]
    np.testing.assert_allclose(grad, numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("loss,params", [("logistic", {}), ("huber_hinge", {"h": 0.5})])
def test_hessian_matches_finite_differences_of_the_gradient(loss, params, sparse):
    X, y = _data(4, n=5000, d=6, sparse=sparse)  # more rows than one block of the dense Hessian
    problem = make_problem(X, y, loss=loss, reg=0.05, **params)
    w = np.random.default_rng(5).normal(size=6) * 0.2
    step = 1e-6
    numeric = np.column_stack(
        [
            (problem.objective_and_gradient(w + step * e)[1] - problem.objective_and_gradient(w - step * e)[1])
            / (2 * step)
            for e in np.eye(6)
        ]
    )
    hessian = problem.hessian(w)
    np.testing.assert_allclose(hessian, numeric, rtol=1e-5, atol=1e-6 if loss == "logistic" else 2e-3)
    np.testing.assert_allclose(hessian, hessian.T)
    with pytest.raises(ValueError, match="the hinge loss or φ‖w‖₁ is not twice differentiable"):
        make_problem(X, y, loss="hinge", reg=0.05).hessian(w)


def test_dense_and_sparse_agree():
    Xd, y = _data(4)
    dense = make_problem(Xd, y, loss="logistic", reg=0.001)
    sparse = make_problem(sp.csr_matrix(Xd), y, loss="logistic", reg=0.001)
    w = np.linspace(-1, 1, Xd.shape[1])
    idx = np.array([1, 5, 9, 100])
    np.testing.assert_allclose(dense.clipped_gradient_sum(w, idx, 1.0), sparse.clipped_gradient_sum(w, idx, 1.0))
    assert dense.clipped_loss_sum(w, idx, 0.5) == pytest.approx(sparse.clipped_loss_sum(w, idx, 0.5))
    assert dense.evaluate_objective(w) == pytest.approx(sparse.evaluate_objective(w))
    assert dense.gram_norm() == pytest.approx(sparse.gram_norm())


def test_objective_clipping_bounds_each_term():
    X, y = _data(5)
    problem = make_problem(X, y, loss="hinge", reg=0.0)
    w = np.ones(X.shape[1]) * 5
    for i in range(20):
        assert problem.clipped_loss_sum(w, np.array([i]), 1.0) <= 1.0


def test_loss_values_and_constants():
    m = np.array([-2.0, 0.0, 0.6, 1.0, 1.4, 3.0])
    np.testing.assert_allclose(LogisticLoss().value(m), np.log1p(np.exp(-m)))
    np.testing.assert_allclose(HingeLoss().value(m), [3, 1, 0.4, 0, 0, 0])
    huber = HuberHingeLoss(0.5)
    np.testing.assert_allclose(huber.value(m), [3, 1, (1.5 - 0.6) ** 2 / 2, 0.125, (1.5 - 1.4) ** 2 / 2, 0])
    assert huber.smoothness == 1.0 and LogisticLoss.smoothness == 0.25
    # large margins stay finite
    assert np.all(np.isfinite(LogisticLoss().derivative(np.array([-1e4, 1e4]))))


def test_smoothness_constant_bounds_hessian():
    X, y = _data(6, d=4)
    problem = make_problem(X, y, loss="logistic", reg=0.01)
    H = X.T @ X / len(y) * 0.25 + 0.01 * np.eye(4)
    assert problem.smoothness() == pytest.approx(np.linalg.eigvalsh(H)[-1])
    with pytest.raises(ValueError, match="not smooth"):
        make_problem(X, y, loss="hinge", reg=0.01).smoothness()


def test_bad_inputs_are_named():
    X, y = _data()
    with pytest.raises(ValueError, match="unknown loss 'squared_hinge'"):
        make_problem(X, y, loss="squared_hinge", reg=0.0)
    with pytest.raises(ValueError, match="rows"):
        make_problem(X, y[:-1], loss="logistic", reg=0.0)
    with pytest.raises(ValueError, match="μ"):
        make_problem(X, y, loss="logistic", reg=-1.0)


@pytest.mark.parametrize("sparse", [False, True])
def test_l1_clipping_equals_explicit_per_example_clipping(sparse):
    X, y = _data(sparse=sparse)
    problem = make_problem(X, y, loss="logistic", reg=0.01)
    w = np.random.default_rng(2).normal(size=X.shape[1])
    dense = X.toarray() if sparse else X
    for idx, clip in ((np.arange(0, 300, 7), 0.3), (None, 0.3), (None, 1e9)):
        rows = range(X.shape[0]) if idx is None else idx
        explicit = np.zeros(X.shape[1])
        for i in rows:
            g = problem.loss.derivative(np.array([y[i] * dense[i] @ w]))[0] * y[i] * dense[i]
            explicit += g / max(1.0, np.abs(g).sum() / clip)
        np.testing.assert_allclose(problem.clipped_gradient_sum(w, idx, clip, norm=1), explicit, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="norm must be 1 or 2"):
        problem.clipped_gradient_sum(w, None, 1.0, norm=3)


def test_an_inactive_clip_changes_nothing():
    X, y = _data()
    problem = make_problem(X, y, loss="logistic", reg=0.01)
    w = np.random.default_rng(3).normal(size=X.shape[1])
    bound = problem.max_row_norm  # sup|ℓ′| = 1: no per-example gradient exceeds it
    unclipped = problem.X.T @ (problem.loss.derivative(y * (problem.X @ w)) * y)
    np.testing.assert_array_equal(problem.clipped_gradient_sum(w, None, bound), unclipped)


def test_within_clips_each_record_by_public_bounds_only():
    """GLMProblem.within: rows clipped to the L2 bound and entries to ±B, each from its
    own record alone (removing another record changes nothing), counts shared; a problem whose public
    bounds already guarantee the restriction is returned as is — no look at the data either way."""
    rng = np.random.default_rng(3)
    X = rng.normal(0.0, 2.0, size=(30, 4))
    y = np.where(rng.random(30) < 0.5, -1.0, 1.0)
    for data in (X, sp.csr_matrix(X)):
        problem = make_problem(data, y, loss="logistic", reg=0.01)
        restricted = problem.within(row_norm=1.5, feature_bound=1.0)
        dense = restricted.X.toarray() if sp.issparse(restricted.X) else restricted.X
        expected = np.clip(X, -1.0, 1.0)
        expected *= np.minimum(1.0, 1.5 / np.linalg.norm(expected, axis=1))[:, None]
        assert np.allclose(dense, expected, rtol=1e-14, atol=0.0)
        assert restricted.public_row_norm == 1.5 and restricted.public_feature_bound == 1.0
        assert restricted.counts is problem.counts
        smaller = make_problem(data[1:], y[1:], loss="logistic", reg=0.01).within(row_norm=1.5, feature_bound=1.0)
        assert np.array_equal(dense[1:], smaller.X.toarray() if sp.issparse(smaller.X) else smaller.X)
    bounded = make_problem(np.clip(X, -1, 1), y, loss="logistic", reg=0.01, public_row_norm=2.0)
    assert bounded.public_feature_bound == 2.0  # |x_ij| ≤ ‖x_i‖
    assert bounded.within(row_norm=2.0, feature_bound=2.0) is bounded
    assert bounded.within(row_norm=3.0) is bounded and bounded.within(row_norm=1.0) is not bounded
