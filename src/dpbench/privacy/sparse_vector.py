"""AboveThreshold, the sparse vector technique with one ⊤ answer (chen_lee Lemma 5 and Alg. 1).

One calibration (:func:`svt_noise`) serves both the mechanism and the vectorised sampler used by
the statistical privacy tests, so those tests audit the real noise scales. The noise is drawn by
:func:`~dpbench.privacy.samplers.current_sampler` (exact discrete noise on a grid under the secure
sampler).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from dpbench.privacy._charge import charge
from dpbench.privacy._checks import (
    check_count,
    check_finite_array,
    check_generator,
    check_positive,
)
from dpbench.privacy.events import (
    GaussianAboveThresholdEvent,
    LaplaceAboveThresholdEvent,
    PrivacyEvent,
)
from dpbench.privacy.samplers import current_sampler
from dpbench.privacy.screening import ScreenedValue

_CHUNK_ROWS = 1 << 16


@dataclass(frozen=True)
class SVTNoise:
    """Noise of AboveThreshold in data units: threshold noise and per-query noise, and the event it costs."""

    gaussian: bool
    threshold_scale: float
    """Laplace scale b, or Gaussian standard deviation, of the threshold noise."""
    query_scale: float
    """Laplace scale b, or Gaussian standard deviation, of each query's noise."""
    event: PrivacyEvent
    sensitivity: float
    """Δ, the queries' sensitivity (the secure sampler calibrates from it and the event)."""

    def _draw(self, rng: np.random.Generator, scale: float, size) -> np.ndarray:
        return rng.normal(0.0, scale, size) if self.gaussian else rng.laplace(0.0, scale, size)

    def threshold_noise(self, rng: np.random.Generator, size=None):
        return self._draw(rng, self.threshold_scale, size)

    def query_noise(self, rng: np.random.Generator, size) -> np.ndarray:
        return self._draw(rng, self.query_scale, size)


def svt_noise(noise: str, *, sensitivity: float, epsilon: float | None = None, rho: float | None = None) -> SVTNoise:
    """Calibrate AboveThreshold for queries of sensitivity Δ (chen_lee Alg. 1, line 3).

    ``noise="laplace"`` (needs ``epsilon``): ε₁ = ε/2, ε₂ = ε/4, threshold noise Lap(Δ/ε₁), query
    noise Lap(Δ/ε₂); ε-DP (chen_lee Lemma 5 / Thm 1), RDP by Thm 2.
    ``noise="gaussian"`` (needs ``rho``): σ₁² = 3/(2ρ), σ₂² = 3/ρ, threshold noise N(0, Δ²σ₁²), query
    noise N(0, Δ²σ₂²); (α, αρ)-RDP (chen_lee Thm 3).
    """
    delta_q = check_positive("sensitivity", sensitivity)
    if noise == "laplace":
        if epsilon is None or rho is not None:
            raise ValueError(f"noise='laplace' needs epsilon and no rho, got epsilon={epsilon!r}, rho={rho!r}")
        eps = check_positive("epsilon", epsilon)
        eps1, eps2 = eps / 2.0, eps / 4.0
        return SVTNoise(False, delta_q / eps1, delta_q / eps2, LaplaceAboveThresholdEvent(eps1, eps2), delta_q)
    if noise == "gaussian":
        if rho is None or epsilon is not None:
            raise ValueError(f"noise='gaussian' needs rho and no epsilon, got epsilon={epsilon!r}, rho={rho!r}")
        r = check_positive("rho", rho)
        sigma1, sigma2 = math.sqrt(3.0 / (2.0 * r)), math.sqrt(3.0 / r)
        return SVTNoise(True, delta_q * sigma1, delta_q * sigma2, GaussianAboveThresholdEvent(sigma1, sigma2), delta_q)
    raise ValueError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")


def above_threshold(
    query: Callable[[int], float] | Sequence[float],
    threshold: float,
    *,
    max_queries: int,
    sensitivity: float,
    rng,
    ledger,
    noise: str = "laplace",
    epsilon: float | None = None,
    rho: float | None = None,
    sampling_rate: float = 1.0,
    label: str = "above_threshold",
) -> int | None:
    """The 0-based index of the first query i with q_i + ν_i ≥ threshold + λ, or None if none of
    the first ``max_queries`` is (chen_lee Alg. 1; noise scales from :func:`svt_noise`).

    ``query`` is a sequence of values or a callable i ↦ q_i evaluated lazily, i = 0, 1, …; the callable may
    return a :class:`~dpbench.privacy.screening.ScreenedValue`, whose exact value is computed only when its
    approximation cannot decide the test. The ledger is charged once, up front: the cost does not depend on
    the number of queries asked.
    """
    calibration = svt_noise(noise, sensitivity=sensitivity, epsilon=epsilon, rho=rho)
    n = check_count("max_queries", max_queries)
    t = float(check_finite_array("threshold", threshold))
    values = None if callable(query) else check_finite_array("query", query)[:n]
    if values is not None and values.ndim != 1:
        raise ValueError(f"query must be a 1-D sequence or a callable, got shape {values.shape}")
    check_generator(rng)
    charge(ledger, calibration.event, sampling_rate, label)
    draw = current_sampler().above_threshold(rng, calibration, t, None, n if values is None else values.size)
    if values is not None:
        hits = np.flatnonzero(draw.units(values) + draw.noise >= draw.threshold)
        return int(hits[0]) if hits.size else None
    for i in range(n):
        if _is_above(draw, query(i), i):
            return i
    return None


def _is_above(draw, value, i: int) -> bool:
    """AboveThreshold's test for query i, units(q_i) + ν_i ≥ T̂. A :class:`ScreenedValue` is decided from its
    approximation when the sampler's units allow it and its bound settles the test, else computed exactly:
    the outcome is the exact value's either way (:mod:`dpbench.privacy.screening`)."""
    if isinstance(value, ScreenedValue):
        decided = value.is_above(draw.noise[i], draw.threshold) if draw.screens else None
        if decided is not None:
            return decided
        value = value.exact()
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"query({i}) returned a non-finite value {value!r}")
    return bool(draw.units(value) + draw.noise[i] >= draw.threshold)


def sample_above_threshold(
    query_values,
    threshold: float,
    *,
    sensitivity: float,
    rng,
    size: int,
    noise: str = "laplace",
    epsilon: float | None = None,
    rho: float | None = None,
) -> np.ndarray:
    """``size`` independent runs of :func:`above_threshold` on the fixed values q (shape (k,)), vectorised
    (no ledger: this is the sampler the statistical privacy tests audit). Returns an int array of
    first-⊤ indices, with k meaning "no ⊤ among the k queries"."""
    calibration = svt_noise(noise, sensitivity=sensitivity, epsilon=epsilon, rho=rho)
    q = check_finite_array("query_values", query_values)
    if q.ndim != 1 or q.size == 0:
        raise ValueError(f"query_values must be a non-empty 1-D array, got shape {q.shape}")
    n = check_count("size", size)
    t = float(check_finite_array("threshold", threshold))
    check_generator(rng)
    out = np.empty(n, dtype=np.int64)
    for start in range(0, n, _CHUNK_ROWS):  # chunks bound the memory of the (rows, k) noise matrix
        rows = min(_CHUNK_ROWS, n - start)
        draw = current_sampler().above_threshold(rng, calibration, t, (rows, 1), (rows, q.size))
        hits = draw.units(q) + draw.noise >= draw.threshold
        out[start : start + rows] = np.where(hits.any(axis=1), hits.argmax(axis=1), q.size)
    return out
