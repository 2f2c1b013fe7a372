"""``fidelity=authors_code`` of chen_lee's baselines OutPert-GD and ObjPert, as the public
DP-AGD code (ppmlguy/DP-AGD, algo/outpert.py, algo/objperturb.py, run_outpert_logistic.py,
run_objpert_logistic.py) runs them. Each mode is checked against a closed form written here from
that code, independently of dpbench's implementation; its rows are labelled through the engine and
the leaderboard never ranks them."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.special import expit

from dpbench.algorithms.base import Tracer
from dpbench.algorithms.registry import make_algorithm
from dpbench.data.preprocess import unit_features_after_bias
from dpbench.engine import run_job
from dpbench.errors import ConfigError
from dpbench.jobs.plan import make_plan
from dpbench.plot.leaderboard import cell_statistics
from dpbench.privacy.ledger import Ledger
from dpbench.problems import make_problem

DELTA = 1e-8
JOB = ("dataset.n=2000", "dataset.seed=1", "cv.folds=5", "reps=1", "progress=false", "privacy.delta=1e-8")


def _data(n: int = 200, d: int = 5, scale: float = 1.0, seed: int = 0):
    """Rows (1, f) with features f in [0, scale]: a bias column first, as DP-AGD's load_dat prepends it."""
    rng = np.random.default_rng(seed)
    X = np.hstack([np.ones((n, 1)), scale * rng.random((n, d - 1))])
    y = np.where(X @ rng.normal(size=d) + rng.normal(size=n) > np.median(X @ rng.normal(size=d)), 1.0, -1.0)
    return X, y


def _fit(name: str, fidelity: str, problem, epsilon: float, seed: int = 3, accountant: str = "rdp"):
    ledger = Ledger(epsilon=epsilon, delta=DELTA, accountant=accountant, neighbouring="replace_one")
    method = make_algorithm(name, {"fidelity": fidelity})
    return method.fit(problem, ledger, np.random.default_rng(seed), Tracer(problem, ledger)), ledger


# ------------------------------------------------------------------------------------------ OutPert-GD
def _authors_descent(X, y, T: int = 50, step: float = 1.0, reg: float = 1e-4) -> np.ndarray:
    """algo/outpert.py's loop: w −= η(Xᵀ(sigmoid(Xw) − y₀₁)/n + reg·w), labels in {0, 1}."""
    y01 = (y > 0).astype(float)
    w = np.zeros(X.shape[1])
    for _ in range(T):
        w -= step * (X.T @ (expit(X @ w) - y01) / X.shape[0] + reg * w)
    return w


def test_outpert_authors_code_is_the_public_code_closed_form():
    """Rows of norm up to ≈ 2.2 (never clipped): w_T of the code's descent, Δ = 3·1·50·1/n and
    σ = √(2 ln(2/δ))/ε, noise drawn as N(0, (σΔ)²) from the run's generator."""
    X, y = _data(scale=1.0)
    problem = make_problem(X, y, loss="logistic", reg=1e-3)
    epsilon = 0.5
    result, ledger = _fit("outpert_gd", "authors_code", problem, epsilon)
    sensitivity = 3.0 * 1.0 * 50 * 1.0 / 200
    sigma = math.sqrt(2.0 * math.log(2.0 / DELTA)) / epsilon
    assert result.info["sensitivity"] == pytest.approx(sensitivity, rel=1e-12)
    assert result.info["noise_multiplier"] == pytest.approx(sigma, rel=1e-12)
    assert result.info["step_size"] == 1.0
    expected = _authors_descent(X, y) + np.random.default_rng(3).normal(0.0, sigma * sensitivity, size=X.shape[1])
    np.testing.assert_allclose(result.w, expected, rtol=1e-9, atol=1e-12)
    assert 0 < ledger.eps_spent <= epsilon  # one Gaussian release of multiplier σ, as the code claims


def test_outpert_correct_differs_and_is_unchanged_by_the_mode_field():
    X, y = _data(scale=1.0)
    problem = make_problem(X, y, loss="logistic", reg=1e-3)
    correct, _ = _fit("outpert_gd", "correct", problem, 0.5)
    default = make_algorithm("outpert_gd", {}).fit(
        problem,
        Ledger(epsilon=0.5, delta=DELTA, accountant="rdp", neighbouring="replace_one"),
        np.random.default_rng(3),
        Tracer(problem, None),
    )
    np.testing.assert_array_equal(correct.w, default.w)
    authors, _ = _fit("outpert_gd", "authors_code", problem, 0.5)
    assert correct.info["sensitivity"] != pytest.approx(authors.info["sensitivity"])
    assert not np.allclose(correct.w, authors.w)


# ---------------------------------------------------------------------------------------------- ObjPert
def _authors_gradient(w, X, y, b, epsilon: float, reg: float = 1e-3) -> np.ndarray:
    """∇ of perturbed_objfunc (algo/objperturb.py) with λ = 1: the mean logistic gradient + reg·w,
    + (2/n)w_p + (Δ/n)w_p + b/n, Δ = 2/ε, w_p = w with its bias entry w₀ set to 0."""
    n = X.shape[0]
    wp = w.copy()
    wp[0] = 0.0
    grad = X.T @ (expit(X @ w) - (y > 0)) / n + reg * w
    return grad + (2.0 / n) * wp + (2.0 / epsilon / n) * wp + b / n


@pytest.mark.parametrize("epsilon", [0.2, 1.0])
def test_objpert_authors_code_minimises_the_public_codes_objective(epsilon):
    """b ~ N(0, σ²I) with σ² = 1²·(8 ln(2/δ) + 4ε)/ε² (ζ = 1) from the run's generator; the released w
    is a stationary point of the code's objective with that b, and not of the one with ζ = √2."""
    X, y = _data(n=300, scale=1.0)
    X = unit_features_after_bias(X)
    problem = make_problem(X, y, loss="logistic", reg=1e-3)
    result, ledger = _fit("objpert", "authors_code", problem, epsilon, accountant="approx")
    draws = np.random.default_rng(3).standard_normal(X.shape[1])
    sigma = math.sqrt(8.0 * math.log(2.0 / DELTA) + 4.0 * epsilon) / epsilon
    assert np.linalg.norm(_authors_gradient(result.w, X, y, sigma * draws, epsilon)) < 1e-4
    assert np.linalg.norm(_authors_gradient(result.w, X, y, math.sqrt(2.0) * sigma * draws, epsilon)) > 1e-2
    assert ledger.eps_spent == pytest.approx(epsilon)  # charged (ε, δ), what the code claims


def test_objpert_correct_differs_from_authors_code():
    X, y = _data(n=300, scale=1.0)
    problem = make_problem(unit_features_after_bias(X), y, loss="logistic", reg=1e-3)
    correct, _ = _fit("objpert", "correct", problem, 0.5, accountant="approx")
    authors, _ = _fit("objpert", "authors_code", problem, 0.5, accountant="approx")
    assert not np.allclose(correct.w, authors.w, atol=1e-3)


def test_unit_features_after_bias_is_sklearns_normalizer_behind_the_bias():
    X = np.array([[1.0, 3.0, 4.0], [1.0, 0.0, 0.0], [1.0, 0.0, 2.0]])
    expected = np.array([[1.0, 0.6, 0.8], [1.0, 0.0, 0.0], [1.0, 0.0, 1.0]])
    np.testing.assert_array_equal(unit_features_after_bias(X), expected)
    with pytest.raises(ValueError, match="dense rows only"):
        unit_features_after_bias(sp.csr_matrix(X))


# ------------------------------------------------------------------------------------- through the engine
@pytest.mark.parametrize("name", ["outpert_gd", "objpert"])
def test_authors_code_refuses_clipped_rows(compose_run_config, name):
    with pytest.raises(ConfigError, match=re.escape("set data.row_norm=null")):
        compose_run_config(f"algorithm={name}", "algorithm.fidelity=authors_code", *JOB)


def test_outpert_authors_code_trains_on_the_test_fold_and_says_so(compose_run_config, tmp_path):
    authors = compose_run_config("algorithm=outpert_gd", "algorithm.fidelity=authors_code", "data.row_norm=null", *JOB)
    rows = run_job(make_plan(authors), tmp_path / "authors")
    assert set(rows["fidelity"]) == {"authors_code"} and not rows["guarantee_valid"].any()
    for note in rows["guarantee_note"]:
        assert "fidelity=authors_code: its sensitivity assumes L = 1" in note
        assert "fidelity=authors_code trains on the test fold too: the test accuracy is not held out" in note
    assert (rows["n_train"] == 2000).all() and (rows["n_test"] == 400).all()  # every row of the file
    assert (rows["eps_spent"] <= rows["eps"]).all()

    correct = run_job(make_plan(compose_run_config("algorithm=outpert_gd", *JOB)), tmp_path / "correct")
    assert correct["guarantee_valid"].all() and (correct["n_train"] == 1600).all()
    ranks = cell_statistics(pd.concat([correct.assign(algorithm="correct"), rows])).set_index("algorithm")["rank"]
    assert ranks["correct"] == 1.0 and math.isnan(ranks["outpert_gd"])


def test_objpert_authors_code_rows_are_labelled_and_unranked(compose_run_config, tmp_path):
    cfg = compose_run_config("algorithm=objpert", "algorithm.fidelity=authors_code", "data.row_norm=null", *JOB)
    rows = run_job(make_plan(cfg), tmp_path / "authors")
    assert not rows["guarantee_valid"].any()
    assert rows["guarantee_note"].str.fullmatch(r"fidelity=authors_code: σ takes ζ = 1 on rows of norm √2.*").all()
    assert (rows["n_train"] == 1600).all()  # trains on the fold only
    assert cell_statistics(rows)["rank"].isna().all()
