"""Exact Gaussian processes over a finite candidate set Λ, for kusner_bo (Kusner et al. 2015).

Λ is the rows of an array ``points`` (n × d, in the unit cube) and every quantity lives on it: the
prior is the n × n matrix K = k₂(Λ, Λ) (:func:`kernel_matrix`, Sec. 2), the posterior of eq. (2)
is a mean vector and a variance vector over Λ (:func:`posterior`), and GP-UCB (eq. 3, Alg. 1)
picks an index into Λ at each step (:func:`gp_ucb`, β_t by :func:`beta`).

We use an exact Cholesky implementation rather than scikit-learn's ``GaussianProcessRegressor``:
the candidate set is finite and the kernel fixed (no hyper-parameter fitting), so the whole
posterior over Λ is a few matrix products, and the UCB loop can update it incrementally — one
rank-one update of the n × n posterior covariance per observation, O(T·n²) for T steps instead
of a fresh factorisation per step.

Also here: the information gain I(y_A; f) and an upper bound on the maximum information gain γ_T
of Srinivas et al. (2010), which enters Alg. 1's Laplace scale (:func:`information_gain`,
:func:`greedy_information_gain`, :func:`max_information_gain_bound`), and the multi-task GP
marginal likelihood of Sec. 6 (eq. 14, Bonilla et al. 2008) behind Fig. 1
(:func:`multitask_log_likelihood`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Real

import numpy as np
from numpy.typing import ArrayLike
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.spatial.distance import cdist

from dpbench.privacy._checks import check_count, check_delta, check_positive

__all__ = [
    "KERNELS",
    "UCBRun",
    "beta",
    "gp_ucb",
    "greedy_information_gain",
    "information_gain",
    "kernel_matrix",
    "max_information_gain_bound",
    "multitask_log_likelihood",
    "posterior",
]

KERNELS = ("squared_exponential", "matern52")

# gp_ucb with noise_variance = 0: a candidate whose posterior variance is at most this fraction of
# its prior variance counts as known, and observing it again does not condition the posterior.
_KNOWN_FRACTION = 1e-10


# --------------------------------------------------------------------------------- validation
def _covariance(name: str, K: ArrayLike) -> np.ndarray:
    """``K`` as a float array, or raise if it is not a finite, symmetric, square matrix."""
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty square matrix, got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError(f"{name} must be finite, got non-finite entries")
    if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12):
        raise ValueError(f"{name} must be symmetric, got max |{name} - {name}ᵀ| = {np.max(np.abs(K - K.T))}")
    return K


def _noise_variance(value: object) -> float:
    """σ² as a float, or raise if it is not a finite number ≥ 0."""
    if isinstance(value, bool) or not isinstance(value, Real) or not 0 <= value < math.inf:
        raise ValueError(f"noise_variance must be a finite number >= 0, got {value!r}")
    return float(value)


def _indices(name: str, indices: ArrayLike, n: int) -> np.ndarray:
    """``indices`` as a 1-d intp array of candidate indices in [0, n) (repeats allowed)."""
    array = np.asarray(indices)
    if array.size == 0:
        return np.zeros(0, dtype=np.intp)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must be a 1-d integer array, got {array.dtype} array of shape {array.shape}")
    if array.min() < 0 or array.max() >= n:
        raise ValueError(f"{name} must index the {n} candidates (0 … {n - 1}), got {array.tolist()}")
    return array.astype(np.intp)


def _vector(name: str, values: ArrayLike, length: int) -> np.ndarray:
    """``values`` as a finite 1-d float array of the given length."""
    array = np.asarray(values, dtype=np.float64)
    if array.shape != (length,):
        raise ValueError(f"{name} must have shape ({length},), got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite, got {array.tolist()}")
    return array


def _cholesky(matrix: np.ndarray, what: str) -> tuple[np.ndarray, bool]:
    """``cho_factor(matrix)``; a failed factorisation is a ValueError saying how to avoid it."""
    try:
        return cho_factor(matrix, lower=True)
    except LinAlgError as error:
        message = f"{what} is not numerically positive definite ({error}); use a positive noise_variance"
        raise ValueError(message) from error


# ------------------------------------------------------------------------------ kernel and β_t
def kernel_matrix(a: ArrayLike, b: ArrayLike, *, kernel: str, length_scale: float) -> np.ndarray:
    """The kernel k₂(λ, λ′) of kusner_dpbo Sec. 2 between the rows of ``a`` (m × d) and ``b`` (p × d).

    ``"squared_exponential"``: exp(−‖λ − λ′‖²/(2ℓ²)); ``"matern52"`` (ν = 5/2):
    (1 + √5 r/ℓ + 5r²/(3ℓ²)) exp(−√5 r/ℓ), r = ‖λ − λ′‖₂. Both are normalised, k₂(λ, λ) = 1.
    Returns the m × p matrix [k₂(a_i, b_j)].
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {', '.join(KERNELS)}, got {kernel!r}")
    ell = check_positive("length_scale", length_scale)
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[1]:
        raise ValueError(f"a and b must be 2-d arrays with equal column counts, got shapes {a.shape} and {b.shape}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("a and b must be finite, got non-finite entries")
    if kernel == "squared_exponential":
        return np.exp(-cdist(a, b, "sqeuclidean") / (2.0 * ell**2))
    scaled = math.sqrt(5.0) * cdist(a, b, "euclidean") / ell
    return (1.0 + scaled + scaled**2 / 3.0) * np.exp(-scaled)


def beta(t: int, n_candidates: int, delta: float) -> float:
    """β_t = 2 log(|Λ| t² π² / (3δ)), the UCB exploration weight of kusner_dpbo Alg. 1 (t ≥ 1)."""
    t = check_count("t", t)
    n = check_count("n_candidates", n_candidates)
    delta = check_delta(delta)
    return 2.0 * math.log(n * t**2 * math.pi**2 / (3.0 * delta))


# ------------------------------------------------------------------------------------ posterior
def posterior(
    K: ArrayLike, observed: ArrayLike, values: ArrayLike, noise_variance: float
) -> tuple[np.ndarray, np.ndarray]:
    """The GP posterior of kusner_dpbo eq. (2) over all of Λ after observing ``values`` at ``observed``.

    μ_T(λ) = k(λ, λ_T)(K_T + σ²I)⁻¹ v_T and σ_T²(λ) = k(λ, λ) − k(λ, λ_T)(K_T + σ²I)⁻¹ k(λ_T, λ),
    with (K_T + σ²I)⁻¹ applied through a Cholesky factorisation. ``K`` is the n × n prior covariance
    over Λ; ``observed`` the T candidate indices (a repeated index is a repeated, independently
    noisy observation) and ``values`` the T observations v_T. Returns (μ_T, σ_T²), two length-n
    arrays; rounding-level negative variances are clipped to 0. No observations: (0, diag K).

    With ``noise_variance`` = 0 no jitter is added: a repeated index, or a K_T that is not
    numerically positive definite, is a ValueError.
    """
    K = _covariance("K", K)
    n = K.shape[0]
    idx = _indices("observed", observed, n)
    v = _vector("values", values, idx.size)
    noise = _noise_variance(noise_variance)
    if idx.size == 0:
        return np.zeros(n), np.maximum(np.diag(K), 0.0)
    distinct, counts = np.unique(idx, return_counts=True)
    if noise == 0.0 and np.any(counts > 1):
        repeats = distinct[counts > 1]
        raise ValueError(
            f"noise_variance = 0 with repeated observed indices {repeats.tolist()} makes K_T singular; "
            "use a positive noise_variance"
        )
    factor = _cholesky(K[np.ix_(idx, idx)] + noise * np.eye(idx.size), "K_T + σ²I")
    cross = K[idx]  # T × n: k(λ_T, Λ)
    mean = cross.T @ cho_solve(factor, v)
    variance = np.diag(K) - np.einsum("tn,tn->n", cross, cho_solve(factor, cross))
    return mean, np.maximum(variance, 0.0)


def _condition(cov: np.ndarray, i: int, noise: float) -> np.ndarray:
    """Condition the posterior covariance ``cov`` in place on one observation at candidate i.

    Sequential Gaussian conditioning: Σ ← Σ − Σ[:, i] Σ[i, :] / (Σ[i, i] + σ²). Returns the gain
    g = Σ[:, i] / (Σ[i, i] + σ²) (before the update), with which μ ← μ + g (v − μ[i]).
    """
    column = cov[:, i].copy()
    gain = column / (column[i] + noise)
    cov -= np.outer(column, gain)
    return gain


# --------------------------------------------------------------------------------------- GP-UCB
@dataclass(frozen=True)
class UCBRun:
    """One GP-UCB run of T steps over Λ (:func:`gp_ucb`).

    indices : the T chosen candidate indices λ_1, …, λ_T
    values : the T observations v_1, …, v_T
    mean, variance : μ_T and σ_T² over all n candidates after the T observations
    betas : β_1, …, β_{T+1} (length T + 1; β_{T+1} is the one Alg. 1 uses after the loop)
    """

    indices: np.ndarray
    values: np.ndarray
    mean: np.ndarray
    variance: np.ndarray
    betas: np.ndarray


def gp_ucb(
    gains: ArrayLike,
    K: ArrayLike,
    *,
    iterations: int,
    delta: float,
    noise_variance: float,
    observe: Callable[[int, int], float] | None = None,
) -> UCBRun:
    """GP-UCB over the finite set Λ: the loop of kusner_dpbo Alg. 1 with the rule of eq. (3).

    For t = 1, …, T: λ_t = argmax_λ μ_{t−1}(λ) + √β_t σ_{t−1}(λ) (ties go to the lowest index), then
    v_t = ``gains[λ_t]``, or ``observe(λ_t, t)`` when a callable is given (e.g. to add observation
    noise), and the posterior (eq. 2) is conditioned on v_t. ``gains`` has length n and ``K`` is
    the n × n prior covariance over Λ.

    The posterior is kept as a mean vector and the n × n covariance Σ and updated by one rank-one
    step per observation (:func:`_condition`), O(T·n²) overall; the result equals
    :func:`posterior` on (indices, values) up to rounding.

    With ``noise_variance`` = 0, a candidate already observed has Σ[i, i] = 0 and conditioning on it
    again would divide by zero; a noise-free re-observation adds no information, so the update is
    skipped for any candidate whose posterior variance is ≤ 1e-10 of its prior variance (the
    observation is still recorded in ``indices`` and ``values``).
    """
    K = _covariance("K", K)
    n = K.shape[0]
    gains = _vector("gains", gains, n)
    T = check_count("iterations", iterations)
    noise = _noise_variance(noise_variance)
    if observe is not None and not callable(observe):
        raise ValueError(f"observe must be a callable (index, t) -> float or None, got {observe!r}")
    betas = np.array([beta(t, n, delta) for t in range(1, T + 2)])
    prior_variance = np.diag(K)
    mean = np.zeros(n)
    cov = K.copy()
    indices = np.empty(T, dtype=np.intp)
    values = np.empty(T)
    for t in range(1, T + 1):
        sigma = np.sqrt(np.maximum(np.diag(cov), 0.0))
        i = int(np.argmax(mean + math.sqrt(betas[t - 1]) * sigma))
        v = gains[i] if observe is None else observe(i, t)
        if isinstance(v, bool) or not isinstance(v, Real) or not math.isfinite(v):
            raise ValueError(f"observe({i}, {t}) must return a finite number, got {v!r}")
        indices[t - 1], values[t - 1] = i, v
        if noise == 0.0 and cov[i, i] <= _KNOWN_FRACTION * prior_variance[i]:
            continue
        mean += _condition(cov, i, noise) * (v - mean[i])
    return UCBRun(indices=indices, values=values, mean=mean, variance=np.maximum(np.diag(cov), 0.0), betas=betas)


# ----------------------------------------------------------------------------- information gain
def information_gain(K: ArrayLike, indices: ArrayLike, noise_variance: float) -> float:
    """I(y_A; f) = ½ log det(I + σ⁻² K_A) for the multiset A = ``indices`` (Srinivas et al. 2010,
    Sec. 5): the mutual information between f and |A| observations with noise variance σ² > 0."""
    K = _covariance("K", K)
    idx = _indices("indices", indices, K.shape[0])
    noise = check_positive("noise_variance", noise_variance)
    if idx.size == 0:
        return 0.0
    sign, logdet = np.linalg.slogdet(np.eye(idx.size) + K[np.ix_(idx, idx)] / noise)
    if sign <= 0:
        raise ValueError("K is not positive semi-definite: det(I + σ⁻² K_A) <= 0")
    return 0.5 * float(logdet)


def greedy_information_gain(K: ArrayLike, iterations: int, noise_variance: float) -> float:
    """The information gain of T greedy picks (Srinivas et al. 2010, Sec. 5).

    Each step picks the candidate of largest posterior variance σ²_{t−1} (ties go to the lowest
    index; repeats allowed) — the one of largest marginal gain — and conditions on it; returns
    Σ_t ½ log(1 + σ⁻² σ²_{t−1}(x_t)), which is :func:`information_gain` of the chosen multiset.
    """
    K = _covariance("K", K)
    T = check_count("iterations", iterations)
    noise = check_positive("noise_variance", noise_variance)
    cov = K.copy()
    total = 0.0
    for _ in range(T):
        variance = np.maximum(np.diag(cov), 0.0)
        i = int(np.argmax(variance))
        total += 0.5 * math.log1p(variance[i] / noise)
        _condition(cov, i, noise)
    return total


def max_information_gain_bound(K: ArrayLike, iterations: int, noise_variance: float) -> float:
    """An upper bound on γ_T = max_{|A| ≤ T} I(y_A; f), the maximum information gain of kusner_dpbo
    Alg. 1: the greedy value divided by (1 − 1/e).

    The bound holds because I is monotone submodular, so greedy achieves at least (1 − 1/e) of the
    maximum (Nemhauser et al. 1978; Srinivas et al. 2010 Sec. 5).
    """
    return greedy_information_gain(K, iterations, noise_variance) / (1.0 - math.exp(-1.0))


# ---------------------------------------------------------------------------- multi-task GP, Fig. 1
def multitask_log_likelihood(
    F: ArrayLike,
    F_prime: ArrayLike,
    K2: ArrayLike,
    k1_values: ArrayLike,
    *,
    noise_variance: float,
    signal_variance: float = 1.0,
    center: bool = True,
) -> np.ndarray:
    """The joint multi-task GP log marginal likelihood of kusner_dpbo eq. (14) for each k₁ (Fig. 1).

    ``F`` and ``F_prime`` are (n_sets × n) arrays: row i holds the validation gains of the n
    candidate models on V_i, resp. on its neighbour V_i′. Under the prior GP(0, k₁ ⊗ k₂)
    (Bonilla et al. 2008) the stacked 2n-vector [F_i; F_i′] is Gaussian with covariance
    C = signal_variance · (B ⊗ K2) + noise_variance · I, B = [[1, k₁], [k₁, 1]]. Returns, for each
    k₁ in ``k1_values`` (each in (0, 1)), Σ_i log N([F_i; F_i′]; m_i, C), the sets being i.i.d.

    With ``center`` (our choice) m_i is the mean of the 2n values of pair i, a constant mean:
    with a zero-mean prior, gains near 0.8 would let the mean dominate the likelihood. Otherwise
    m_i = 0. One Cholesky factorisation per k₁ serves all pairs.
    """
    K2 = _covariance("K2", K2)
    n = K2.shape[0]
    F = np.asarray(F, dtype=np.float64)
    F_prime = np.asarray(F_prime, dtype=np.float64)
    if F.ndim != 2 or F.shape[0] == 0 or F.shape[1] != n or F_prime.shape != F.shape:
        raise ValueError(
            f"F and F_prime must both have shape (n_sets >= 1, {n}) to match K2, got {F.shape} and {F_prime.shape}"
        )
    if not (np.all(np.isfinite(F)) and np.all(np.isfinite(F_prime))):
        raise ValueError("F and F_prime must be finite, got non-finite entries")
    k1 = np.asarray(k1_values, dtype=np.float64)
    if k1.ndim != 1 or k1.size == 0 or not np.all((k1 > 0.0) & (k1 < 1.0)):
        raise ValueError(f"k1_values must be a non-empty 1-d array of values in (0, 1), got {k1_values!r}")
    noise = _noise_variance(noise_variance)
    signal = check_positive("signal_variance", signal_variance)
    pairs = np.hstack([F, F_prime])  # row i = [F_i; F_i′]
    if center:
        pairs = pairs - pairs.mean(axis=1, keepdims=True)
    n_sets, dim = pairs.shape
    result = np.empty(k1.size)
    for j, c in enumerate(k1):
        cov = signal * np.kron(np.array([[1.0, c], [c, 1.0]]), K2) + noise * np.eye(dim)
        factor = _cholesky(cov, f"the multi-task covariance at k1 = {c}")
        logdet = 2.0 * np.sum(np.log(np.diag(factor[0])))
        quadratic = np.einsum("id,di->", pairs, cho_solve(factor, pairs.T))
        result[j] = -0.5 * (quadratic + n_sets * (logdet + dim * math.log(2.0 * math.pi)))
    return result
