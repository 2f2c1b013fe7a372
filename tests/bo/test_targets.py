"""Tuning targets of kusner_dpbo: Sobol candidates, hyper-parameter maps, splits, score matrices and their cache."""

from __future__ import annotations

import logging
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.svm import SVC

from dpbench.bo import targets
from dpbench.bo.targets import (
    ScoreMatrix,
    Splits,
    TargetSpec,
    candidate_points,
    make_splits,
    row_count,
    score_matrix,
    stack_rows,
)
from dpbench.data.dataset import Dataset, arrays_checksum
from dpbench.errors import ConfigError


def _blobs(n: int, *, seed: int = 0, n_test: int = 0, sparse: bool = False, scale: float = 1.0) -> Dataset:
    """Two overlapping 2-D Gaussian blobs (means ±1) times ``scale``, with a bias column first."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n + n_test) < 0.5, 1.0, -1.0)
    X = np.hstack([np.ones((y.size, 1)), scale * (y[:, None] + rng.standard_normal((y.size, 2)))])
    X_train, X_test = X[:n], X[n:]
    if sparse:
        X_train, X_test = sp.csr_matrix(X_train), sp.csr_matrix(X_test)
    return Dataset(
        "blobs", X_train, y[:n], X_test if n_test else None, y[n:] if n_test else None, arrays_checksum(X, y), {}
    )


# ---------------------------------------------------------------------- candidates and hyper-parameters
def test_candidate_points_are_a_deterministic_sobol_prefix_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        points = candidate_points(10, 2, seed=3)
        again = candidate_points(10, 2, seed=3)
        longer = candidate_points(16, 2, seed=3)
        other = candidate_points(10, 2, seed=4)
    assert points.shape == (10, 2)
    assert np.all((points >= 0) & (points <= 1))
    np.testing.assert_array_equal(points, again)
    np.testing.assert_array_equal(points, longer[:10])
    assert not np.allclose(points, other)
    assert candidate_points(1, 3, seed=0).shape == (1, 3)


@pytest.mark.parametrize("kwargs", [{"n_candidates": 0, "dim": 2}, {"n_candidates": 5, "dim": 0}])
def test_candidate_points_reject_bad_sizes(kwargs):
    with pytest.raises(ConfigError, match=str(min(kwargs.values()))):
        candidate_points(**kwargs, seed=0)


def test_svm_points_map_log_uniformly_onto_C_and_gamma():
    spec = TargetSpec("svm_rbf")
    assert spec.dim == 2
    hp = spec.hyperparameters(np.array([[0.0, 0.0], [1.0, 1.0], [0.5, 0.25]]))
    assert hp[0] == {"C": 10.0**-1, "gamma": 10.0**-4}
    assert hp[1] == {"C": 10.0**3, "gamma": 1.0}
    assert hp[2]["C"] == pytest.approx(10.0) and hp[2]["gamma"] == pytest.approx(10.0**-3)


def test_logreg_options_set_the_lambda_range_and_row_norm():
    spec = TargetSpec.from_options("logreg", {"log10_lambda": [-2, 1], "row_norm": 2})
    assert spec.dim == 1 and spec.row_norm == 2.0 and spec.log10_lambda == (-2.0, 1.0)
    assert spec.hyperparameters(np.array([[0.0], [1.0]])) == [{"lambda": 0.01}, {"lambda": 10.0}]
    assert spec.options() == {"log10_lambda": (-2.0, 1.0), "row_norm": 2.0}


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("logreg", {"log10_C": [0, 1]}, r"log10_C.*valid: log10_lambda, row_norm"),
        ("svm_rbf", {"row_norm": 1.0}, r"row_norm.*valid: log10_C, log10_gamma"),
        ("svm_rbf", {"log10_C": [3, 1]}, r"log10_C.*\[3.0, 1.0\]"),
        ("logreg", {"log10_lambda": [0, float("inf")]}, r"log10_lambda"),
        ("logreg", {"log10_lambda": "wide"}, r"log10_lambda.*'wide'"),
        ("logreg", {"log10_lambda": "12"}, r"log10_lambda.*'12'"),
        ("logreg", {"row_norm": 0}, r"row_norm.*0"),
        ("ridge", {}, r"'ridge'.*svm_rbf, logreg"),
    ],
)
def test_bad_target_options_are_config_errors_naming_them(name, options, message):
    with pytest.raises(ConfigError, match=message):
        TargetSpec.from_options(name, options)


def test_spec_rejects_an_option_of_the_other_target():
    with pytest.raises(ConfigError, match=re.escape("row_norm = 2.0 is not an option of target svm_rbf")):
        TargetSpec("svm_rbf", row_norm=2.0)


def test_hyperparameters_reject_points_outside_the_cube():
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        TargetSpec("logreg").hyperparameters(np.array([[1.5]]))
    with pytest.raises(ValueError, match=r"shape"):
        TargetSpec("svm_rbf").hyperparameters(np.array([[0.5]]))


# ---------------------------------------------------------------------- splits
def test_make_splits_is_a_seeded_disjoint_partition():
    s = make_splits(100, train_size=30, test_size=20, pool_size=40, seed=7)
    assert (s.train.size, s.test.size, s.pool.size) == (30, 20, 40)
    both = np.concatenate([s.train, s.test, s.pool])
    assert np.unique(both).size == 90 and both.min() >= 0 and both.max() < 100
    assert all(np.all(np.diff(a) > 0) for a in (s.train, s.test, s.pool))
    again = make_splits(100, train_size=30, test_size=20, pool_size=40, seed=7)
    assert all(np.array_equal(getattr(s, k), getattr(again, k)) for k in ("train", "pool", "test"))
    assert not np.array_equal(s.train, make_splits(100, train_size=30, test_size=20, pool_size=40, seed=8).train)
    rest = make_splits(100, train_size=30, test_size=20, seed=7)
    assert rest.pool.size == 50 and np.array_equal(rest.train, s.train) and np.array_equal(rest.test, s.test)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"train_size": 60, "test_size": 30, "pool_size": 20},
            r"60 \+ test_size 30 \+ pool_size 20 = 110 rows exceed the 100",
        ),
        ({"train_size": 60, "test_size": 40}, r"exceed the 100"),
        ({"train_size": 0, "test_size": 10}, r"train_size must be an integer ≥ 1, got 0"),
        ({"train_size": 10, "test_size": -1}, r"test_size must be an integer ≥ 0, got -1"),
    ],
)
def test_make_splits_rejects_sizes_that_do_not_fit(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        make_splits(100, **kwargs, seed=0)


def test_rows_are_the_dataset_then_its_test_split_and_stay_sparse():
    ds = _blobs(30, n_test=10, sparse=True)
    X, y = stack_rows(ds)
    assert sp.issparse(X) and X.shape == (40, 3) and row_count(ds) == 40
    np.testing.assert_array_equal(X[30:].toarray(), ds.X_test.toarray())
    np.testing.assert_array_equal(y[30:], ds.y_test)


# ---------------------------------------------------------------------- training and scores
def _eq10_minimiser(X: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """Independent minimiser of O_λ(w) = λ/2‖w‖² + (1/n)Σ log(1 + exp(−y wᵀx)) (eq. 10)."""

    def objective(w: np.ndarray) -> tuple[float, np.ndarray]:
        margin = y * (X @ w)
        sigma = np.exp(-np.logaddexp(0.0, margin))  # 1 / (1 + exp(margin))
        return lam / 2 * w @ w + np.logaddexp(0.0, -margin).mean(), lam * w - X.T @ (y * sigma) / y.size

    res = minimize(
        objective,
        np.zeros(X.shape[1]),
        jac=True,
        method="L-BFGS-B",
        options={"gtol": 1e-13, "ftol": 1e-16, "maxiter": 100_000},
    )
    return res.x


def test_logreg_scores_are_those_of_the_eq10_minimiser_on_clipped_rows():
    ds = _blobs(400, scale=2.0)
    row_norm = 0.5
    assert np.linalg.norm(ds.X, axis=1).min() > row_norm  # every row is clipped
    splits = make_splits(400, train_size=150, test_size=50, seed=2)
    spec = TargetSpec.from_options("logreg", {"log10_lambda": [-3, -1], "row_norm": row_norm})
    scores = score_matrix(ds, spec, np.array([[0.0], [1.0]]), splits, cache_dir=None, progress=False)
    assert scores.row_norm == row_norm and scores.n_pool == 200
    np.testing.assert_array_equal(scores.eval_rows, np.concatenate([splits.pool, splits.test]))
    X_clipped = ds.X * row_norm / np.linalg.norm(ds.X, axis=1, keepdims=True)
    y_eval = ds.y[scores.eval_rows]
    for j, lam in enumerate([1e-3, 1e-1]):
        assert scores.hyperparameters[j]["lambda"] == pytest.approx(lam)
        w = _eq10_minimiser(X_clipped[splits.train], ds.y[splits.train], lam)
        margin = y_eval * (X_clipped[scores.eval_rows] @ w)
        np.testing.assert_allclose(scores.ramp[j], np.clip(1 - margin, 0, 1), atol=1e-5)
        np.testing.assert_array_equal(scores.correct[j], margin > 0)
        w_unclipped = _eq10_minimiser(ds.X[splits.train], ds.y[splits.train], lam)
        margin_unclipped = y_eval * (ds.X[scores.eval_rows] @ w_unclipped)
        assert np.abs(scores.ramp[j] - np.clip(1 - margin_unclipped, 0, 1)).max() > 1e-2


def test_svm_scores_match_svc_predictions_and_column_means():
    ds = _blobs(500)
    splits = make_splits(500, train_size=200, test_size=100, seed=0)
    points = candidate_points(2, 2, seed=1)
    scores = score_matrix(ds, TargetSpec("svm_rbf"), points, splits, cache_dir=None, progress=False)
    assert scores.correct.shape == scores.ramp.shape == (2, 300) and scores.ramp.dtype == np.float32
    assert scores.row_norm is None
    X_eval, y_eval = ds.X[scores.eval_rows], ds.y[scores.eval_rows]
    for j, hp in enumerate(scores.hyperparameters):
        model = SVC(kernel="rbf", C=hp["C"], gamma=hp["gamma"]).fit(ds.X[splits.train], ds.y[splits.train])
        np.testing.assert_array_equal(scores.correct[j], model.predict(X_eval) == y_eval)
        np.testing.assert_allclose(
            scores.ramp[j], np.clip(1 - y_eval * model.decision_function(X_eval), 0, 1), atol=1e-6
        )
    columns = np.random.default_rng(0).choice(scores.pool_columns(), size=37, replace=False)
    np.testing.assert_allclose(scores.accuracy(columns), scores.correct[:, columns].sum(axis=1) / 37)
    np.testing.assert_allclose(scores.ramp_score(columns), -scores.ramp[:, columns].astype(np.float64).sum(axis=1) / 37)
    sets = np.stack([columns, scores.test_columns()[:37]])
    assert scores.accuracy(sets).shape == (2, 2)
    np.testing.assert_allclose(scores.accuracy(sets)[:, 0], scores.accuracy(columns))
    np.testing.assert_array_equal(scores.test_columns(), np.arange(200, 300))
    with pytest.raises(ValueError, match="non-empty integer"):
        scores.accuracy(np.array([], dtype=int))


@pytest.mark.parametrize("name", ["svm_rbf", "logreg"])
def test_sparse_rows_give_the_dense_scores(name):
    dense, sparse = _blobs(300, n_test=60), _blobs(300, n_test=60, sparse=True)
    splits = make_splits(360, train_size=120, test_size=60, seed=5)
    spec, points = TargetSpec(name), candidate_points(2, 2 if name == "svm_rbf" else 1, seed=0)
    a = score_matrix(dense, spec, points, splits, cache_dir=None, progress=False)
    b = score_matrix(sparse, spec, points, splits, cache_dir=None, progress=False)
    assert np.any(a.eval_rows >= 300)  # rows of the test split are evaluated too
    np.testing.assert_array_equal(a.correct, b.correct)
    np.testing.assert_allclose(a.ramp, b.ramp, atol=1e-5)


def test_a_single_label_training_split_is_a_config_error():
    ds = _blobs(50)
    train = np.flatnonzero(ds.y > 0)[:10]
    rest = np.setdiff1d(np.arange(50), train)
    with pytest.raises(ConfigError, match="single label"):
        score_matrix(
            ds, TargetSpec("logreg"), np.array([[0.5]]), Splits(train, rest, rest[:0]), cache_dir=None, progress=False
        )


# ---------------------------------------------------------------------- cache
def _assert_same(a: ScoreMatrix, b: ScoreMatrix, *, timings: bool = True) -> None:
    for name in ("correct", "ramp", "eval_rows", "points"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.correct.dtype == b.correct.dtype == bool and b.ramp.dtype == np.float32
    assert (a.n_pool, a.hyperparameters, a.key, a.row_norm) == (b.n_pool, b.hyperparameters, b.key, b.row_norm)
    if timings:  # a recomputed matrix has its own timings
        assert (a.train_seconds, a.predict_seconds) == (b.train_seconds, b.predict_seconds)


def test_score_matrix_is_cached_and_recomputed_when_corrupt(tmp_path, monkeypatch, caplog):
    calls = []
    compute = targets.train_and_score
    monkeypatch.setattr(targets, "train_and_score", lambda *a, **k: calls.append(1) or compute(*a, **k))
    ds = _blobs(300)
    splits = make_splits(300, train_size=100, test_size=50, seed=0)
    spec, points = TargetSpec("logreg"), candidate_points(3, 1, seed=0)

    first = score_matrix(ds, spec, points, splits, cache_dir=tmp_path, progress=False)
    cached = score_matrix(ds, spec, points, splits, cache_dir=tmp_path, progress=False)
    assert len(calls) == 1
    _assert_same(first, cached)
    (path,) = (tmp_path / "bo_scores").glob("*.npz")
    assert path.name == f"{first.key[:24]}.npz"

    path.write_bytes(path.read_bytes()[:100])
    with caplog.at_level(logging.WARNING, logger="dpbench.bo.targets"):
        again = score_matrix(ds, spec, points, splits, cache_dir=tmp_path, progress=False)
    assert len(calls) == 2 and "unreadable score cache" in caplog.text
    _assert_same(first, again, timings=False)
    _assert_same(again, score_matrix(ds, spec, points, splits, cache_dir=tmp_path, progress=False))
    assert len(calls) == 2  # the recomputed file was written back

    other = score_matrix(
        ds, spec, points, make_splits(300, train_size=100, test_size=50, seed=1), cache_dir=tmp_path, progress=False
    )
    assert len(calls) == 3 and other.key != first.key
    assert len(list((tmp_path / "bo_scores").glob("*.npz"))) == 2
    assert not list((tmp_path / "bo_scores").glob("*.tmp"))


def test_cache_key_depends_on_target_options_and_points():
    ds = _blobs(100)
    splits = make_splits(100, train_size=50, test_size=10, seed=0)
    points = candidate_points(4, 1, seed=0)
    key = targets.cache_key(ds, TargetSpec("logreg"), points, splits)
    assert key == targets.cache_key(ds, TargetSpec("logreg", row_norm=1), points, splits)
    assert key != targets.cache_key(ds, TargetSpec("logreg", row_norm=2.0), points, splits)
    assert key != targets.cache_key(ds, TargetSpec("logreg", log10_lambda=(-3.0, 0.0)), points, splits)
    assert key != targets.cache_key(ds, TargetSpec("logreg"), candidate_points(4, 1, seed=1), splits)
