"""kusner_dpbo GP machinery: kernels, β_t, the eq. (2) posterior, GP-UCB (eq. 3 / Alg. 1), the
information-gain bound on γ_T and the multi-task likelihood of eq. (14). All deterministic."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import multivariate_normal

from dpbench.bo.gp import (
    KERNELS,
    UCBRun,
    beta,
    gp_ucb,
    greedy_information_gain,
    information_gain,
    kernel_matrix,
    max_information_gain_bound,
    multitask_log_likelihood,
    posterior,
)


def _points(n: int, seed: int, d: int = 2) -> np.ndarray:
    return np.random.default_rng(seed).random((n, d))


def _grid(side: int) -> np.ndarray:
    g = np.linspace(0.0, 1.0, side)
    return np.array([(x, y) for x in g for y in g])


def _direct_posterior(K, observed, values, noise):
    """eq. (2) with an explicit inverse / solve, no Cholesky."""
    idx = np.asarray(observed)
    KT = K[np.ix_(idx, idx)] + noise * np.eye(idx.size)
    cross = K[:, idx]
    mean = cross @ np.linalg.solve(KT, np.asarray(values, dtype=float))
    variance = np.diag(K) - np.diag(cross @ np.linalg.inv(KT) @ cross.T)
    return mean, variance


# ----------------------------------------------------------------------------------- kernels
def test_kernel_values_by_hand():
    a = np.array([[0.0, 0.0]])
    b = np.array([[0.0, 0.0], [0.3, 0.4], [1.0, 0.0]])  # r = 0, 0.5, 1
    se = kernel_matrix(a, b, kernel="squared_exponential", length_scale=0.5)
    np.testing.assert_allclose(se, [[1.0, math.exp(-0.5), math.exp(-2.0)]], rtol=1e-14)
    assert se[0, 1] == pytest.approx(0.6065306597126334, rel=1e-14)
    m52 = kernel_matrix(a, b, kernel="matern52", length_scale=0.5)
    s5 = math.sqrt(5.0)
    expected = [1.0, (1 + s5 + 5 / 3) * math.exp(-s5), (1 + 2 * s5 + 20 / 3) * math.exp(-2 * s5)]
    np.testing.assert_allclose(m52, [expected], rtol=1e-14)
    assert m52[0, 1] == pytest.approx(0.5239941088318203, rel=1e-12)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("length_scale", [0.1, 0.4])
def test_kernel_matrix_symmetric_psd_unit_diagonal(kernel, length_scale):
    points = _points(30, seed=1)
    K = kernel_matrix(points, points, kernel=kernel, length_scale=length_scale)
    assert K.shape == (30, 30)
    np.testing.assert_array_equal(K, K.T)
    np.testing.assert_allclose(np.diag(K), 1.0, rtol=0, atol=1e-15)
    assert np.linalg.eigvalsh(K).min() > -1e-10
    assert np.all((K > 0) & (K <= 1))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"kernel": "rbf", "length_scale": 0.3}, "kernel must be one of"),
        ({"kernel": "matern52", "length_scale": 0.0}, "length_scale"),
        ({"kernel": "matern52", "length_scale": -1.0}, "length_scale"),
        ({"kernel": "squared_exponential", "length_scale": math.nan}, "length_scale"),
        ({"kernel": "squared_exponential", "length_scale": math.inf}, "length_scale"),
    ],
)
def test_kernel_validation(kwargs, match):
    points = _points(4, seed=0)
    with pytest.raises(ValueError, match=match):
        kernel_matrix(points, points, **kwargs)


def test_kernel_shape_mismatch_raises():
    with pytest.raises(ValueError, match="column"):
        kernel_matrix(_points(3, 0, d=2), _points(3, 0, d=3), kernel="matern52", length_scale=0.3)


# -------------------------------------------------------------------------------------- beta
def test_beta_by_hand():
    assert beta(1, 100, 0.1) == pytest.approx(2 * math.log(100 * math.pi**2 / 0.3), rel=1e-14)
    assert beta(3, 64, 0.05) == pytest.approx(2 * math.log(64 * 9 * math.pi**2 / 0.15), rel=1e-14)
    assert beta(1, 100, 0.1) == pytest.approx(16.1972055, rel=1e-8)  # 2 ln(3289.87)


@pytest.mark.parametrize(("t", "n", "delta"), [(0, 10, 0.1), (1.5, 10, 0.1), (1, 0, 0.1), (1, 10, 0.0), (1, 10, 1.0)])
def test_beta_validation(t, n, delta):
    with pytest.raises(ValueError):
        beta(t, n, delta)


# --------------------------------------------------------------------------------- posterior
@pytest.mark.parametrize("observed", [[3, 17, 8, 25, 0], [3, 17, 3, 8, 17, 3]])
@pytest.mark.parametrize("kernel", KERNELS)
def test_posterior_matches_direct_solve(observed, kernel):
    points = _points(30, seed=2)
    K = kernel_matrix(points, points, kernel=kernel, length_scale=0.3)
    values = np.random.default_rng(5).normal(size=len(observed))
    mean, variance = posterior(K, observed, values, 0.01)
    mean_direct, variance_direct = _direct_posterior(K, observed, values, 0.01)
    np.testing.assert_allclose(mean, mean_direct, rtol=0, atol=1e-10)
    np.testing.assert_allclose(variance, variance_direct, rtol=0, atol=1e-10)
    assert np.all((variance >= 0) & (variance <= 1))
    assert np.all(variance[observed] < 0.01)  # an observed point is known to within the noise


def test_posterior_noise_free_interpolates():
    points = _points(30, seed=3)
    K = kernel_matrix(points, points, kernel="matern52", length_scale=0.2)
    observed = [4, 11, 29, 0]
    values = [0.3, -1.0, 0.7, 0.1]
    mean, variance = posterior(K, observed, values, 0.0)
    np.testing.assert_allclose(mean[observed], values, atol=1e-9)
    np.testing.assert_allclose(variance[observed], 0.0, atol=1e-9)
    mean_direct, variance_direct = _direct_posterior(K, observed, values, 0.0)
    np.testing.assert_allclose(mean, mean_direct, atol=1e-9)
    np.testing.assert_allclose(variance, np.maximum(variance_direct, 0), atol=1e-9)


def test_posterior_empty_is_prior():
    K = kernel_matrix(_points(5, 0), _points(5, 0), kernel="squared_exponential", length_scale=0.3)
    mean, variance = posterior(K, [], [], 0.1)
    np.testing.assert_array_equal(mean, np.zeros(5))
    np.testing.assert_array_equal(variance, np.ones(5))


def test_posterior_noise_free_repeat_raises():
    K = kernel_matrix(_points(5, 0), _points(5, 0), kernel="squared_exponential", length_scale=0.3)
    with pytest.raises(ValueError, match=r"repeated observed indices \[2\].*positive noise_variance"):
        posterior(K, [2, 1, 2], [0.0, 1.0, 0.0], 0.0)


def test_posterior_noise_free_singular_raises():
    points = np.array([[0.0, 0.0], [1e-9, 0.0], [1.0, 1.0]])  # two numerically identical candidates
    K = kernel_matrix(points, points, kernel="squared_exponential", length_scale=0.5)
    with pytest.raises(ValueError, match="positive noise_variance"):
        posterior(K, [0, 1], [0.0, 1.0], 0.0)


@pytest.mark.parametrize(
    ("observed", "values", "noise", "match"),
    [
        ([0, 5], [0.0, 0.0], 0.1, "observed must index"),
        ([0.0, 1.0], [0.0, 0.0], 0.1, "integer"),
        ([0, 1], [0.0], 0.1, "values must have shape"),
        ([0, 1], [0.0, math.nan], 0.1, "values must be finite"),
        ([0, 1], [0.0, 0.0], -0.1, "noise_variance"),
    ],
)
def test_posterior_validation(observed, values, noise, match):
    K = kernel_matrix(_points(5, 0), _points(5, 0), kernel="squared_exponential", length_scale=0.3)
    with pytest.raises(ValueError, match=match):
        posterior(K, observed, values, noise)


def test_posterior_rejects_bad_K():
    with pytest.raises(ValueError, match="square"):
        posterior(np.ones((3, 4)), [0], [0.0], 0.1)
    with pytest.raises(ValueError, match="symmetric"):
        posterior(np.array([[1.0, 0.5], [0.2, 1.0]]), [0], [0.0], 0.1)


# ------------------------------------------------------------------------------------ GP-UCB
@pytest.mark.parametrize("noise", [1e-3, 0.1])
def test_gp_ucb_follows_eq3_step_by_step(noise):
    points = _points(40, seed=4)
    K = kernel_matrix(points, points, kernel="matern52", length_scale=0.25)
    gains = np.sin(5 * points[:, 0]) * np.cos(3 * points[:, 1])
    run = gp_ucb(gains, K, iterations=15, delta=0.1, noise_variance=noise)
    assert isinstance(run, UCBRun)
    assert run.indices.shape == run.values.shape == (15,)
    np.testing.assert_allclose(run.betas, [beta(t, 40, 0.1) for t in range(1, 17)], rtol=1e-14)
    assert run.indices[0] == 0  # flat prior: every candidate ties, the lowest index wins
    for t in range(1, 16):
        mean, variance = posterior(K, run.indices[: t - 1], run.values[: t - 1], noise)
        acquisition = mean + math.sqrt(beta(t, 40, 0.1)) * np.sqrt(variance)
        assert acquisition[run.indices[t - 1]] >= acquisition.max() - 1e-10, f"step {t}"
    np.testing.assert_array_equal(run.values, gains[run.indices])
    mean, variance = posterior(K, run.indices, run.values, noise)
    np.testing.assert_allclose(run.mean, mean, rtol=0, atol=1e-8)
    np.testing.assert_allclose(run.variance, variance, rtol=0, atol=1e-8)


def test_gp_ucb_finds_grid_maximum():
    points = _grid(8)
    K = kernel_matrix(points, points, kernel="squared_exponential", length_scale=0.4)
    gains = 0.9 * np.exp(-np.sum((points - [0.62, 0.35]) ** 2, axis=1) / (2 * 0.25**2)) + 0.5 * np.exp(
        -np.sum((points - [0.15, 0.8]) ** 2, axis=1) / (2 * 0.2**2)
    )
    run = gp_ucb(gains, K, iterations=30, delta=0.1, noise_variance=1e-4)
    assert run.values.max() == gains.max()
    first_hit = int(np.flatnonzero(run.indices == np.argmax(gains))[0]) + 1
    assert first_hit > 5  # found by the search, not by the first few (exploratory) picks


def test_gp_ucb_noise_free_repeat_guard():
    points = _points(4, seed=6)
    K = kernel_matrix(points, points, kernel="squared_exponential", length_scale=0.3)
    gains = np.array([0.2, 0.9, 0.4, 0.1])
    run = gp_ucb(gains, K, iterations=10, delta=0.1, noise_variance=0.0)  # > 4 steps: repeats are forced
    assert np.unique(run.indices).size < run.indices.size
    assert np.all(np.isfinite(run.mean)) and np.all(np.isfinite(run.variance))
    distinct = np.unique(run.indices)
    mean, variance = posterior(K, distinct, gains[distinct], 0.0)
    np.testing.assert_allclose(run.mean, mean, atol=1e-8)
    np.testing.assert_allclose(run.variance, variance, atol=1e-8)
    np.testing.assert_allclose(run.mean[distinct], gains[distinct], atol=1e-8)


def test_gp_ucb_uses_observe_callable():
    points = _points(25, seed=7)
    K = kernel_matrix(points, points, kernel="matern52", length_scale=0.3)
    gains = points[:, 0] - points[:, 1] ** 2
    noise = np.random.default_rng(8).normal(scale=0.1, size=12)
    calls: list[tuple[int, int]] = []

    def observe(index: int, t: int) -> float:
        calls.append((index, t))
        return float(gains[index] + noise[t - 1])

    run = gp_ucb(gains, K, iterations=12, delta=0.2, noise_variance=0.01, observe=observe)
    assert calls == [(int(i), t) for t, i in enumerate(run.indices, start=1)]
    np.testing.assert_allclose(run.values, gains[run.indices] + noise, rtol=0, atol=1e-15)
    mean, variance = posterior(K, run.indices, run.values, 0.01)
    np.testing.assert_allclose(run.mean, mean, atol=1e-8)
    np.testing.assert_allclose(run.variance, variance, atol=1e-8)
    with pytest.raises(ValueError, match="must return a finite number"):
        gp_ucb(gains, K, iterations=2, delta=0.2, noise_variance=0.01, observe=lambda i, t: math.nan)


@pytest.mark.parametrize(
    ("gains", "K", "kwargs", "match"),
    [
        (np.zeros(3), np.eye(4), {}, "gains must have shape"),
        (np.zeros(4), np.ones((4, 3)), {}, "square"),
        (np.zeros(4), np.eye(4), {"iterations": 0}, "iterations"),
        (np.zeros(4), np.eye(4), {"delta": 1.5}, "delta"),
        (np.zeros(4), np.eye(4), {"noise_variance": -1.0}, "noise_variance"),
    ],
)
def test_gp_ucb_validation(gains, K, kwargs, match):
    arguments = {"iterations": 3, "delta": 0.1, "noise_variance": 0.1} | kwargs
    with pytest.raises(ValueError, match=match):
        gp_ucb(gains, K, **arguments)


# -------------------------------------------------------------------------- information gain
def test_information_gain_by_hand():
    K = np.array([[1.0, 0.5], [0.5, 1.0]])
    assert information_gain(K, [1], 0.25) == pytest.approx(0.5 * math.log(5.0), rel=1e-14)
    assert information_gain(K, [0, 0], 0.25) == pytest.approx(0.5 * math.log(1 + 2 / 0.25), rel=1e-14)
    assert information_gain(K, [0, 1], 1.0) == pytest.approx(0.5 * math.log(4 - 0.25), rel=1e-14)
    assert information_gain(K, [], 1.0) == 0.0
    with pytest.raises(ValueError, match="noise_variance"):
        information_gain(K, [0], 0.0)


def test_greedy_information_gain_is_gain_of_its_picks():
    points = _points(20, seed=9)
    K = kernel_matrix(points, points, kernel="squared_exponential", length_scale=0.3)
    noise, T = 0.05, 8
    picks: list[int] = []
    for _ in range(T):  # max posterior variance, recomputed from scratch
        _, variance = posterior(K, picks, np.zeros(len(picks)), noise)
        picks.append(int(np.argmax(variance)))
    greedy = greedy_information_gain(K, T, noise)
    assert greedy == pytest.approx(information_gain(K, picks, noise), rel=1e-10)
    assert max_information_gain_bound(K, T, noise) == pytest.approx(greedy / (1 - math.exp(-1)), rel=1e-14)


def test_greedy_bound_brackets_brute_force_gamma():
    points = _points(6, seed=10)
    K = kernel_matrix(points, points, kernel="matern52", length_scale=0.5)
    noise, T = 0.1, 3
    gamma = max(
        information_gain(K, list(A), noise)
        for size in range(1, T + 1)
        for A in itertools.combinations_with_replacement(range(6), size)
    )
    greedy = greedy_information_gain(K, T, noise)
    assert greedy <= gamma + 1e-12
    assert gamma <= max_information_gain_bound(K, T, noise)


# ------------------------------------------------------------------------- multi-task, eq. (14)
def _multitask_data(seed: int, n_sets: int = 6, n: int = 15):
    rng = np.random.default_rng(seed)
    points = rng.random((n, 2))
    K2 = kernel_matrix(points, points, kernel="squared_exponential", length_scale=0.3)
    L = np.linalg.cholesky(K2 + 1e-6 * np.eye(n))
    F = 0.8 + 0.05 * (L @ rng.standard_normal((n, n_sets))).T
    return rng, K2, F


@pytest.mark.parametrize("center", [True, False])
def test_multitask_likelihood_matches_scipy(center):
    rng, K2, F = _multitask_data(seed=11)
    F_prime = F + 0.01 * rng.standard_normal(F.shape)
    k1_values = [0.1, 0.5, 0.9]
    noise, signal = 1e-3, 0.04
    result = multitask_log_likelihood(
        F, F_prime, K2, k1_values, noise_variance=noise, signal_variance=signal, center=center
    )
    assert result.shape == (3,)
    for value, k1 in zip(result, k1_values):
        cov = signal * np.block([[K2, k1 * K2], [k1 * K2, K2]]) + noise * np.eye(2 * K2.shape[0])
        expected = 0.0
        for f, f_prime in zip(F, F_prime):
            y = np.concatenate([f, f_prime])
            mean = np.full(y.size, y.mean()) if center else np.zeros(y.size)
            expected += multivariate_normal.logpdf(y, mean=mean, cov=cov)
        assert value == pytest.approx(expected, rel=1e-9)


def test_multitask_likelihood_prefers_large_k1_for_near_identical_pairs():
    rng, K2, F = _multitask_data(seed=12)
    k1_values = np.arange(1, 20) * 0.05  # 0.05 … 0.95, as in Fig. 1
    near = F + 1e-3 * rng.standard_normal(F.shape)
    likelihood = multitask_log_likelihood(F, near, K2, k1_values, noise_variance=1e-4, signal_variance=0.05**2)
    assert np.all(np.diff(likelihood) > 0)
    _, _, unrelated = _multitask_data(seed=13)  # an independent draw: small k1 fits better
    likelihood = multitask_log_likelihood(F, unrelated, K2, k1_values, noise_variance=1e-4, signal_variance=0.05**2)
    assert np.argmax(likelihood) == 0


@pytest.mark.parametrize(
    ("k1_values", "kwargs", "match"),
    [
        ([0.0, 0.5], {}, "k1_values"),
        ([0.5, 1.0], {}, "k1_values"),
        ([], {}, "k1_values"),
        ([0.5], {"noise_variance": -1.0}, "noise_variance"),
        ([0.5], {"signal_variance": 0.0}, "signal_variance"),
    ],
)
def test_multitask_validation(k1_values, kwargs, match):
    _, K2, F = _multitask_data(seed=14)
    arguments = {"noise_variance": 1e-3} | kwargs
    with pytest.raises(ValueError, match=match):
        multitask_log_likelihood(F, F, K2, k1_values, **arguments)
    with pytest.raises(ValueError, match="F and F_prime"):
        multitask_log_likelihood(F, F[:, :-1], K2, [0.5], noise_variance=1e-3)
