"""Noise-adding and selection mechanisms.

Every mechanism validates its inputs, then CHARGES THE LEDGER, and only then samples: a
:class:`~dpbench.privacy.ledger.BudgetExceeded` therefore means nothing was released (the
generator was not even advanced). ``sampling_rate`` < 1 only changes the accounting (the event is
wrapped in :class:`~dpbench.privacy.events.PoissonSampledEvent`); the caller must have computed
``value`` on a Poisson subsample of that rate.

Noise comes from :func:`~dpbench.privacy.samplers.current_sampler`: numpy's floating-point draws by
default, or exact discrete noise on a grid under ``use_sampler("secure")`` (same charge, module
docstring of :mod:`dpbench.privacy.samplers`). Mechanisms without a secure version raise
:class:`~dpbench.privacy.samplers.UnsupportedSampler` under it, before charging.

AboveThreshold (sparse vector) lives in :mod:`dpbench.privacy.sparse_vector`, and AMP's two releases
(Iyengar et al. 2019) in :mod:`dpbench.privacy.minima_perturbation`; both are re-exported here.
"""

from __future__ import annotations

import math

import numpy as np

from dpbench.privacy._charge import charge
from dpbench.privacy._checks import (
    check_count,
    check_finite_array,
    check_generator,
    check_positive,
    check_rate,
)
from dpbench.privacy.events import (
    ApproxDPEvent,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    PureDPEvent,
    SampledWithoutReplacementEvent,
)
from dpbench.privacy.minima_perturbation import amp_objective_noise, tail_bound_gaussian_mechanism
from dpbench.privacy.samplers import (
    current_sampler,
    exponential_log_weights,
    require_numpy_sampler,
)
from dpbench.privacy.screening import ScreenedValues
from dpbench.privacy.sparse_vector import above_threshold, sample_above_threshold

__all__ = [
    "GaussianRelease",
    "above_threshold",
    "amp_objective_noise",
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
    "exponential_mechanism_screened",
    "gaussian_mechanism",
    "laplace_mechanism",
    "objective_perturbation_noise",
    "report_noisy_max",
    "report_noisy_max_screened",
    "sample_above_threshold",
    "sample_vector_laplace",
    "subsampled_laplace_mechanism",
    "tail_bound_gaussian_mechanism",
    "vector_laplace_mechanism",
]


def _event(pure: PrivacyEvent, epsilon: float, failure_probability: float) -> PrivacyEvent:
    """``pure`` when the sensitivity bound always holds, else ApproxDPEvent(ε, δ = failure_probability)."""
    if failure_probability == 0.0:
        return pure
    if not 0.0 < failure_probability < 1.0:
        raise ValueError(f"failure_probability must be in [0, 1), got {failure_probability!r}")
    return ApproxDPEvent(epsilon, failure_probability)


def _like(value: object, noisy: np.ndarray) -> float | np.ndarray:
    """A float for scalar input, an array otherwise."""
    return float(noisy) if np.ndim(value) == 0 else noisy


def laplace_calibration(epsilon: float) -> tuple[float, float]:
    """(b, ε′): the noise multiplier b = 1/ε that LaplaceEvent(b) records, and the ε′ ≤ ε the noise is
    drawn at. 1/(1/ε) rounds above ε for some ε (0.045, the count's share of ε = 0.9), which the strict
    ledger refuses; there b is raised by ulps until 1/b ≤ ε and the noise is drawn at ε′ = 1/b, an ulp
    wider, never narrower. Elsewhere (b, ε′) = (1/ε, ε), the noise as before."""
    noise_multiplier = 1.0 / epsilon
    if 1.0 / noise_multiplier <= epsilon:
        return noise_multiplier, epsilon
    while 1.0 / noise_multiplier > epsilon:
        noise_multiplier = math.nextafter(noise_multiplier, math.inf)
    return noise_multiplier, 1.0 / noise_multiplier


def laplace_mechanism(
    value,
    *,
    sensitivity: float,
    epsilon: float,
    rng,
    ledger,
    sampling_rate: float = 1.0,
    label: str = "laplace",
    failure_probability: float = 0.0,
    neighbouring: str | None = None,
) -> float | np.ndarray:
    """``value`` + Lap(Δ₁/ε) per coordinate, Δ₁ the L1 sensitivity: ε-DP (Dwork et al. 2006).

    Charges LaplaceEvent(1/ε). When Δ₁ bounds the sensitivity only with probability
    1 − ``failure_probability`` = 1 − δ over the data's generating process (kusner_bo Thms 1, 3, 5),
    the release is (ε, δ)-DP and ApproxDPEvent(ε, δ) is charged instead. Under the secure sampler the
    noise is discrete Laplace on a grid, calibrated so that the same event holds (samplers module)."""
    x = check_finite_array("value", value)
    sens = check_positive("sensitivity", sensitivity)
    noise_multiplier, eps = laplace_calibration(check_positive("epsilon", epsilon))
    check_generator(rng)
    charge(ledger, _event(LaplaceEvent(noise_multiplier), eps, failure_probability), sampling_rate, label, neighbouring)
    return _like(value, current_sampler().laplace(rng, x, sensitivity=sens, epsilon=eps, coordinates=max(x.size, 1)))


def subsampled_laplace_mechanism(
    value,
    *,
    sensitivity: float,
    epsilon: float,
    sample_size: int,
    population: int,
    rng,
    ledger,
    label: str = "laplace_without_replacement",
    neighbouring: str | None = None,
) -> float | np.ndarray:
    """``value`` + Lap(Δ₁/ε) per coordinate, ``value`` computed on ``sample_size`` = m of
    ``population`` = n records drawn without replacement, Δ₁ its L1 sensitivity under replace-one.

    ε-DP on the subsample, hence ln(1 + (m/n)(e^ε − 1))-DP on the data (kuru_acc eq. 3.3, their
    Thm A.3); charges SampledWithoutReplacementEvent(m, n, LaplaceEvent(1/ε)), or LaplaceEvent(1/ε)
    when m = n. Pure-DP ledgers only (no Rényi bound is implemented for this sampling)."""
    x = check_finite_array("value", value)
    sens = check_positive("sensitivity", sensitivity)
    noise_multiplier, eps = laplace_calibration(check_positive("epsilon", epsilon))
    m, n = check_count("sample_size", sample_size), check_count("population", population)
    if m > n:
        raise ValueError(f"sample_size ({m}) exceeds population ({n})")
    check_generator(rng)
    event = LaplaceEvent(noise_multiplier)
    ledger.pay(event if m == n else SampledWithoutReplacementEvent(m, n, event), label=label, neighbouring=neighbouring)
    return _like(value, current_sampler().laplace(rng, x, sensitivity=sens, epsilon=eps, coordinates=max(x.size, 1)))


def gaussian_mechanism(
    value,
    *,
    sensitivity: float,
    noise_multiplier: float,
    rng,
    ledger,
    sampling_rate: float = 1.0,
    label: str = "gaussian",
    neighbouring: str | None = None,
) -> float | np.ndarray:
    """``value`` + N(0, (σΔ₂)²) per coordinate, Δ₂ the L2 sensitivity (chen_lee Lemma 1); GaussianEvent(σ).
    Under the secure sampler: discrete Gaussian noise on a grid (CKS 2020), same event (samplers module).
    ``neighbouring`` (every mechanism here): the relation Δ was computed for; the ledger refuses another."""
    release = GaussianRelease(
        sensitivity=sensitivity,
        noise_multiplier=noise_multiplier,
        rng=rng,
        ledger=ledger,
        sampling_rate=sampling_rate,
        label=label,
        neighbouring=neighbouring,
    )
    return _like(value, release(value))


class GaussianRelease:
    """:func:`gaussian_mechanism` for a loop that releases many values with the same noise (a DP-SGD
    run): the sensitivity, σ, rate, generator and label are checked and the event is built once; each
    call checks that the value is finite, pays one copy of the event (the ledger's reserve makes a
    repeat a few integer operations) and only then adds N(0, (σΔ₂)²) per coordinate."""

    def __init__(
        self,
        *,
        sensitivity: float,
        noise_multiplier: float,
        rng,
        ledger,
        sampling_rate: float = 1.0,
        label: str = "gaussian",
        neighbouring: str | None = None,
    ) -> None:
        self._sensitivity = check_positive("sensitivity", sensitivity)
        self._sigma = check_positive("noise_multiplier", noise_multiplier)
        self._rng = check_generator(rng)
        event = GaussianEvent(noise_multiplier)
        self._event = event if check_rate(sampling_rate) == 1.0 else PoissonSampledEvent(sampling_rate, event)
        self._ledger, self._label, self._neighbouring = ledger, label, neighbouring

    def __call__(self, value: np.ndarray) -> np.ndarray:
        x = check_finite_array("value", value)
        self._ledger.pay(self._event, 1, self._label, self._neighbouring)
        return current_sampler().gaussian(
            self._rng, x, sensitivity=self._sensitivity, noise_multiplier=self._sigma, coordinates=max(x.size, 1)
        )


def sample_vector_laplace(dim: int, scale: float, rng, size: int | None = None) -> np.ndarray:
    """Noise with density ∝ exp(−‖w‖₂/scale) on R^dim (han_pwa Sec. 5.1): ‖w‖ ~ Gamma(dim, scale),
    direction uniform on the sphere (a normalised standard normal). Shape (dim,) or (size, dim).
    numpy sampler only (:class:`~dpbench.privacy.samplers.UnsupportedSampler` otherwise)."""
    require_numpy_sampler("sample_vector_laplace (vector-Laplace noise)")
    d = check_count("dim", dim)
    s = check_positive("scale", scale)
    check_generator(rng)
    shape = (d,) if size is None else (check_count("size", size), d)
    direction = rng.standard_normal(shape)
    direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
    radius = rng.gamma(shape=d, scale=s, size=None if size is None else (shape[0], 1))
    return radius * direction


def vector_laplace_mechanism(
    value, *, sensitivity: float, epsilon: float, rng, ledger, label: str = "vector_laplace"
) -> float | np.ndarray:
    """``value`` + vector-Laplace noise of scale Δ₂/ε, Δ₂ the L2 sensitivity of the whole
    (flattened) value: ε-DP (han_pwa Thm 17); PureDPEvent(ε)."""
    x = check_finite_array("value", value)
    if x.size == 0:
        raise ValueError("value must not be empty")
    scale = check_positive("sensitivity", sensitivity) / check_positive("epsilon", epsilon)
    check_generator(rng)
    require_numpy_sampler("vector_laplace_mechanism")
    charge(ledger, PureDPEvent(epsilon), 1.0, label)
    return _like(value, x + sample_vector_laplace(x.size, scale, rng).reshape(x.shape))


def _scores(name: str, values) -> np.ndarray:
    """``values`` as a finite, non-empty 1-D float64 array (the candidates' scores)."""
    v = check_finite_array(name, values)
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {v.shape}")
    return v


def exponential_mechanism_probabilities(
    utilities, *, sensitivity: float, epsilon: float, monotonic: bool = False
) -> np.ndarray:
    """Selection probabilities softmax(εu/(2Δ)) (softmax(εu/Δ) for monotonic utilities), computed stably."""
    u = _scores("utilities", utilities)
    sens, eps = check_positive("sensitivity", sensitivity), check_positive("epsilon", epsilon)
    weights = np.exp(exponential_log_weights(u, sens, eps, monotonic))
    return weights / weights.sum()


def exponential_mechanism(
    utilities,
    *,
    sensitivity: float,
    epsilon: float,
    rng,
    ledger,
    monotonic: bool = False,
    label: str = "exponential",
    failure_probability: float = 0.0,
) -> int:
    """Sample an index with probability ∝ exp(εu/(2Δ)) by the Gumbel-max trick: ε-DP; PureDPEvent(ε).
    Under the secure sampler: report-noisy-max with discrete exponential noise on the grid
    (permute-and-flip, McKenna & Sheldon 2020), also ε-DP.

    With ``failure_probability`` = δ > 0 (Δ bounds the utility's sensitivity only with probability
    1 − δ, kusner_bo Cor. 1) it is (ε, δ)-DP and charges ApproxDPEvent(ε, δ)."""
    u = _scores("utilities", utilities)
    sens, eps = check_positive("sensitivity", sensitivity), check_positive("epsilon", epsilon)
    check_generator(rng)
    charge(ledger, _event(PureDPEvent(epsilon), epsilon, failure_probability), 1.0, label)
    return int(current_sampler().exponential(rng, u, sensitivity=sens, epsilon=eps, monotonic=monotonic))


def exponential_mechanism_screened(
    screened: ScreenedValues,
    *,
    sensitivity: float,
    epsilon: float,
    rng,
    ledger,
    monotonic: bool = False,
    label: str = "exponential",
) -> int:
    """:func:`exponential_mechanism` of ``screened.exact()`` (the utilities): the same charge, draws and index,
    bit for bit; the exact utilities are computed only when bounds on the log-weights cannot decide the
    Gumbel-max (:mod:`dpbench.privacy.screening`, :func:`~dpbench.privacy.samplers.screened_log_weights`;
    under the secure sampler, always)."""
    terms = {"sensitivity": sensitivity, "epsilon": epsilon, "rng": rng, "monotonic": monotonic}
    if not _screenable(screened):  # checked as exact utilities, then charged
        return exponential_mechanism(screened.exact(), ledger=ledger, label=label, **terms)
    return _screened_release(screened, ledger, label, current_sampler().exponential_screened, **terms)


def _screenable(screened: ScreenedValues) -> bool:
    """Whether ``screened`` may decide a selection: finite bounds (else the exact values are taken and checked
    as such); ValueError unless it is one non-empty vector with an error bound per entry."""
    if (
        np.ndim(screened.approx) != 1
        or np.shape(screened.error) != np.shape(screened.approx)
        or not screened.approx.size
    ):
        raise ValueError("screened values must be one non-empty vector with an error bound per entry")
    return bool(np.all(np.isfinite(screened.approx)) and np.all(np.isfinite(screened.error)))


def _screened_release(screened, ledger, label: str, select, *, sensitivity, epsilon, rng, monotonic) -> int:
    """Check the parameters, charge PureDPEvent(ε), then let the sampler's screened ``select`` pick."""
    sens, eps = check_positive("sensitivity", sensitivity), check_positive("epsilon", epsilon)
    check_generator(rng)
    charge(ledger, PureDPEvent(epsilon), 1.0, label)
    return int(select(rng, screened, sensitivity=sens, epsilon=eps, monotonic=monotonic))


def report_noisy_max(
    values,
    *,
    sensitivity: float,
    epsilon: float,
    rng,
    ledger,
    monotonic: bool = False,
    label: str = "report_noisy_max",
) -> int:
    """argmax of ``values`` + Lap(2Δ/ε) (Lap(Δ/ε) for monotonic queries): ε-DP
    (Dwork & Roth 2014 Claim 3.9); PureDPEvent(ε). Under the secure sampler: rounded values plus
    discrete Laplace noise, exact on the integers (samplers module)."""
    v = _scores("values", values)
    sens, eps = check_positive("sensitivity", sensitivity), check_positive("epsilon", epsilon)
    check_generator(rng)
    charge(ledger, PureDPEvent(epsilon), 1.0, label)
    return int(current_sampler().report_noisy_max(rng, v, sensitivity=sens, epsilon=eps, monotonic=monotonic))


def report_noisy_max_screened(
    screened: ScreenedValues,
    *,
    sensitivity: float,
    epsilon: float,
    rng,
    ledger,
    monotonic: bool = False,
    label: str = "report_noisy_max",
) -> int:
    """:func:`report_noisy_max` of ``screened.exact()``: the same charge, draws and index, bit for bit; the
    exact values are computed only when the approximate ones and their error bounds cannot decide the
    index (:mod:`dpbench.privacy.screening`; under the secure sampler, always)."""
    terms = {"sensitivity": sensitivity, "epsilon": epsilon, "rng": rng, "monotonic": monotonic}
    if not _screenable(screened):  # checked as exact values, then charged
        return report_noisy_max(screened.exact(), ledger=ledger, label=label, **terms)
    return _screened_release(screened, ledger, label, current_sampler().report_noisy_max_screened, **terms)


def objective_perturbation_noise(
    dim: int, *, gradient_bound: float, epsilon: float, delta: float, rng, ledger, label: str = "objective_perturbation"
) -> np.ndarray:
    """The linear term b ~ N(0, σ²I), σ² = ζ²(8 ln(2/δ) + 4ε)/ε², of objective perturbation (Kifer,
    Smith & Thakurta 2012, Thm 2): minimising (1/n)[Σℓ_i(w) + (Δ/2)‖w‖² + bᵀw] with Δ ≥ 2λ/ε is
    (ε, δ)-DP when ‖∇ℓ_i‖ ≤ ζ and ∇²ℓ_i has rank ≤ 1 and eigenvalues ≤ λ, and the minimiser is
    exact. Charges ApproxDPEvent(ε, δ) before sampling."""
    d = check_count("dim", dim)
    zeta = check_positive("gradient_bound", gradient_bound)
    eps = check_positive("epsilon", epsilon)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    check_generator(rng)
    require_numpy_sampler("objective_perturbation_noise")
    charge(ledger, ApproxDPEvent(eps, delta), 1.0, label)
    sigma = zeta * np.sqrt(8.0 * np.log(2.0 / delta) + 4.0 * eps) / eps
    return rng.normal(0.0, sigma, size=d)
