"""Noise samplers: numpy's floating-point draws (``"numpy"``, the default) or exact discrete draws on a
grid (``"secure"``), selected per run with :func:`use_sampler` and read by the mechanisms through
:func:`current_sampler`.

Why. numpy's Laplace is x + b·log(2U) evaluated in floating point on a 53-bit uniform U, so the set
of outputs it can produce depends on x: most outputs of the Laplace mechanism on 0 cannot occur on
1 and reveal the input (Mironov, "On significance of the least significant bits for differential
privacy", CCS 2012). The secure sampler removes the floating point from the private part.

The secure release (Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy",
NeurIPS 2020; "CKS" below). A value x ∈ R^d is released as g·(n + Z): g a power of two fixed by the
mechanism's public parameters only (never by x), n = rint(x/g) ∈ Z^d, and Z an exact discrete
Laplace (CKS Alg. 2) or discrete Gaussian (CKS Alg. 3) vector, drawn with integer arithmetic from
the run's numpy Generator (``rng.integers``: exact uniform integers), so a fixed seed still gives
bit-identical reruns. Every output is a grid point and both laws have full support on Z^d, so every
output is possible under every input: the floating-point attack is gone. Converting n + Z to a
float is post-processing.

Grid rule. g is the largest power of two ≤ 2^-20 × (the sensitivity per coordinate, Δ/d, for
Laplace-type noise; the noise standard deviation σΔ₂ for Gaussian noise). Rounding moves each
coordinate by ≤ g/2 (x/g is exact: g is a power of two), so for neighbours ‖n − n′‖₁ ≤ Δ₁/g + d and
‖n − n′‖₂ ≤ Δ₂/g + √d: the sensitivity grows by ≤ 2^-20·Δ₁ (Laplace) or √d·g (Gaussian), and the
noise is calibrated to the inflated sensitivity, so the event the mechanism charges stays valid:

* LaplaceEvent(1/ε) / PureDPEvent(ε): with k the largest integer shift, the discrete Laplace of
  integer scale T ≥ (k + 1)/ε is (k/T < ε)-DP. The extra unit also keeps its Rényi divergence under
  the continuous Laplace curve the RDP accountant charges (Mironov 2017 Prop. 6), which the exactly
  calibrated T = k/ε would exceed (at ε = 1, k = 1, order → 1: by 0.12). Lemma: for P_m = DLap_T(m),
  e^{(α−1)D_α(P_0‖P_k)} = w·e^{(α−1)k/T} + (1 − w)e^{−αk/T} with w = ½ + tanh(1/2T)/(2 tanh((2α−1)/2T)),
  which is the continuous formula with w_c = α/(2α−1) ≤ w; this form is log-convex in the shift, so a
  vector shift is dominated by its L1 total, and the convexity in ε of the continuous curve turns the
  gap (ε − k/T ≥ 1/T) into a margin that covers w − w_c for every α > 1 when T ≥ 1 (checked
  numerically in tests/privacy/test_samplers.py).
* GaussianEvent(σ): the discrete Gaussian of variance σ_Z² ≥ (σ·(Δ₂/g + √d))² on integer shifts of L2
  norm ≤ Δ₂/g + √d is 1/(2σ²)-zCDP (CKS Prop. 5 and Thm 15): the RDP curve α/(2σ²) of GaussianEvent.
* Report-noisy-max and the exponential mechanism (PureDPEvent(ε)): argmax of the rounded scores plus
  i.i.d. discrete Laplace (report-noisy-max, Dwork & Roth 2014 Claim 3.9) or one-sided geometric
  noise (the discrete form of report-noisy-max with exponential noise, which is permute-and-flip:
  McKenna & Sheldon 2020; Ding et al. 2021) of integer scale T ≥ c·k/ε (c = 2, or 1 for monotonic
  scores), k = ⌊Δ/g⌋ + 1 the largest shift of a rounded score. Claim 3.9's proof needs only
  P[N ≥ r + ck] ≥ e^{−ε}P[N ≥ r] for the noise N, which both laws satisfy on Z; ties go to the lowest
  index, and the winning region is still an up-set in the winner's noise.
* AboveThreshold: threshold and queries rounded (shift ≤ k), threshold noise of scale T₁ ≥ (k + 1)/ε₁
  and query noise T₂ ≥ (2k + 1)/(2ε₂) (Laplace), or discrete Gaussians of σ_i·k (Gaussian): the
  shift-by-k and shift-by-2k coupling of chen_lee Lemma 5 / Thm 2 / Thm 3 on the integers.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

__all__ = [
    "GRID_BITS",
    "SAMPLERS",
    "NumpySampler",
    "SVTDraw",
    "SecureSampler",
    "UnsupportedSampler",
    "bernoulli_exp",
    "current_sampler",
    "discrete_gaussian",
    "discrete_laplace",
    "exponential_log_weights",
    "geometric",
    "grid",
    "require_numpy_sampler",
    "screened_log_weights",
    "use_sampler",
]

SAMPLERS = ("numpy", "secure")
GRID_BITS = 20
"""The grid is at least 2^GRID_BITS times finer than the noise (module docstring)."""
_MAX_UNITS = 1 << 61
"""Rounded values are clipped to ±2^61 grid units (1-Lipschitz, so the sensitivity bound holds)."""
_MAX_LAPLACE_SCALE = 1 << 52
_MAX_GAUSSIAN_SCALE = 1 << 30
_SQUARE_SAFE = 1 << 31
"""|a| below this has a² < 2^62: the discrete Gaussian's acceptance test stays in int64."""


class UnsupportedSampler(ValueError):
    """The active sampler has no implementation of a mechanism (it must not fall back to numpy)."""


# --------------------------------------------------------------------------- exact primitives (CKS)
_ROUNDS = 4
"""CKS Alg. 1 rounds drawn per entry at once (the loop continues past them with probability ≤ 1/4!)."""


def bernoulli_exp(rng: np.random.Generator, num: np.ndarray, den) -> np.ndarray:
    """Exact Bernoulli(exp(−γ)) draws for γ = num/den ∈ [0, 1] (CKS Alg. 1), vectorised over ``num``
    (int64 array) and ``den`` (int ≥ 1, or an int64 array like ``num``): K is the first k ≥ 1 with
    A_k = 0, A_k ~ Bernoulli(γ/k) independent; the result is [K odd]. A_k is drawn as
    Bernoulli(num/den)·Bernoulli(1/k): ``rng.integers(0, den) < num`` and [d_k = 0], where d_k, …,
    d_{k+3} are the mixed-radix digits (bases k..k+3) of one uniform integer on {0..k(k+1)(k+2)(k+3) − 1},
    hence independent and uniform. Rounds go in batches of four per entry until its first A_k = 0."""
    num = np.asarray(num, dtype=np.int64)
    flat_num = num.ravel()
    scalar_den = np.ndim(den) == 0
    flat_den = int(den) if scalar_den else np.asarray(den, dtype=np.int64).ravel()
    out = np.zeros(flat_num.size, dtype=bool)
    active, first = np.arange(flat_num.size), 1
    while active.size:
        bound = flat_den if scalar_den else flat_den[active]
        hits = rng.integers(0, bound, size=(_ROUNDS, active.size)) < flat_num[active]
        digits = rng.integers(0, math.prod(range(first, first + _ROUNDS)), size=active.size)
        for r in range(_ROUNDS):
            digits, digit = np.divmod(digits, first + r)
            hits[r] &= digit == 0
        failed = ~hits.all(axis=0)
        out[active[failed]] = (np.argmin(hits[:, failed], axis=0) + first) % 2 == 1
        active, first = active[~failed], first + _ROUNDS
    return out.reshape(num.shape)


def _bernoulli_exp_minus_one(rng: np.random.Generator, shape) -> np.ndarray:
    """Exact Bernoulli(e^{-1}) draws of ``shape``."""
    return bernoulli_exp(rng, np.ones(shape, dtype=np.int64), 1)


def _exp_minus_one_run(rng: np.random.Generator, limit: np.ndarray) -> np.ndarray:
    """For each entry, whether ``limit`` consecutive Bernoulli(e^{-1}) draws all succeed (probability
    e^{-limit}; CKS Sec. 5.1, Bernoulli(exp(−γ)) for γ > 1). Stops at an entry's first failure."""
    ok = np.ones(limit.shape, dtype=bool)
    count = np.zeros(limit.shape, dtype=np.int64)
    active = np.flatnonzero(limit > 0)
    while active.size:
        hit = _bernoulli_exp_minus_one(rng, active.size)
        ok[active[~hit]] = False
        active = active[hit]
        count[active] += 1
        active = active[count[active] < limit[active]]
    return ok


def _bernoulli_exp_any(rng: np.random.Generator, num: np.ndarray, den: int) -> np.ndarray:
    """Exact Bernoulli(exp(−num/den)) for any num ≥ 0 (int64), den ≥ 1: exp(−γ) = e^{−⌊γ⌋}·exp(−{γ})."""
    whole, rest = np.divmod(num, den)
    ok = _exp_minus_one_run(rng, whole)
    idx = np.flatnonzero(ok)
    ok[idx] = bernoulli_exp(rng, rest[idx], den)
    return ok


def _bernoulli_exp_big(rng: np.random.Generator, num: int, den: int) -> bool:
    """:func:`_bernoulli_exp_any` for one γ = num/den whose numerator exceeds int64 (Python ints)."""
    whole, rest = divmod(num, den)
    for _ in range(whole):
        if not _bernoulli_exp_minus_one(rng, 1)[0]:
            return False
    return bool(bernoulli_exp(rng, np.array([rest]), den)[0])


def _rejection(rng: np.random.Generator, size: int, propose: Callable) -> np.ndarray:
    """Fill ``size`` int64 slots from ``propose(rng, m) -> (candidates, accepted)``: i.i.d. proposals,
    about 1.6 per open slot, the accepted ones taken in order (their values are i.i.d. from the
    target law whatever the acceptance pattern), until every slot is filled."""
    out = np.empty(size, dtype=np.int64)
    filled = 0
    while filled < size:
        open_slots = size - filled
        values, accepted = propose(rng, open_slots + open_slots // 2 + 4)
        taken = values[accepted][:open_slots]
        out[filled : filled + taken.size] = taken
        filled += taken.size
    return out


def _check_scale(scale: int, largest: int) -> int:
    if isinstance(scale, bool) or not isinstance(scale, (int, np.integer)) or not 1 <= scale <= largest:
        raise ValueError(f"scale must be an integer in [1, {largest}], got {scale!r}")
    return int(scale)


def geometric(rng: np.random.Generator, scale: int, size: int) -> np.ndarray:
    """Exact X on {0, 1, …} with P[X = x] ∝ exp(−x/scale), ``scale`` an integer ≤ 2^52 (CKS Alg. 2,
    steps 1–5 with t = scale: U uniform on {0..t−1} kept with probability exp(−U/t), plus t·V, V the
    number of Bernoulli(e^{-1}) successes before the first failure)."""
    t = _check_scale(scale, _MAX_LAPLACE_SCALE)
    cap = _MAX_UNITS // t - 1

    def propose(rng, m):
        u = rng.integers(0, t, size=m)
        keep = bernoulli_exp(rng, u, t)
        x = u.copy()
        x[keep] += t * _run_lengths(rng, int(keep.sum()), cap)
        return x, keep

    return _rejection(rng, size, propose)


def _run_lengths(rng: np.random.Generator, size: int, cap: int) -> np.ndarray:
    """Numbers of Bernoulli(e^{-1}) successes before the first failure, four draws per entry and
    round; a run reaching ``cap`` (probability e^{-cap} ≤ e^{-511}, independent of the data) raises
    instead of overflowing."""
    count = np.zeros(size, dtype=np.int64)
    active = np.arange(size)
    while active.size:
        hits = _bernoulli_exp_minus_one(rng, (active.size, 4))
        count[active] += np.where(hits.all(axis=1), 4, np.argmin(hits, axis=1))
        active = active[hits.all(axis=1)]
        if count.max() >= cap:
            raise OverflowError("a geometric draw exceeded 2^61 grid units")
    return count


def discrete_laplace(rng: np.random.Generator, scale: int, size: int) -> np.ndarray:
    """Exact Z on Z with P[Z = z] ∝ exp(−|z|/scale), ``scale`` an integer ≤ 2^52 (CKS Alg. 2 with
    s = 1, t = scale): a geometric magnitude, a fair sign, and (sign −, magnitude 0) rejected."""
    t = _check_scale(scale, _MAX_LAPLACE_SCALE)

    def propose(rng, m):
        magnitude = geometric(rng, t, m)
        negative = rng.integers(0, 2, size=m) == 1
        return np.where(negative, -magnitude, magnitude), ~(negative & (magnitude == 0))

    return _rejection(rng, size, propose)


def discrete_gaussian(rng: np.random.Generator, t: int, c: int, size: int) -> np.ndarray:
    """Exact Z on Z with P[Z = z] ∝ exp(−z²/(2σ²)), σ² = t·c (CKS Alg. 3): Y ~ DLap(t) kept with
    probability exp(−(|Y| − σ²/t)²/(2σ²)) = exp(−(|Y| − c)²/(2tc)). Any t ≥ 1 is exact; t = ⌊σ⌋ + 1
    makes it fast (CKS Sec. 5.3). Needs t, c ≤ 2^30."""
    t, c = _check_scale(t, _MAX_GAUSSIAN_SCALE), _check_scale(c, _MAX_GAUSSIAN_SCALE)
    den = 2 * t * c

    def propose(rng, m):
        y = discrete_laplace(rng, t, m)
        a = np.abs(y) - c
        small = np.abs(a) < _SQUARE_SAFE
        accepted = np.zeros(m, dtype=bool)
        accepted[small] = _bernoulli_exp_any(rng, a[small] * a[small], den)
        for i in np.flatnonzero(~small):
            accepted[i] = _bernoulli_exp_big(rng, int(a[i]) ** 2, den)
        return y, accepted

    return _rejection(rng, size, propose)


# ------------------------------------------------------------------------------- grid calibration
def grid(bound: float) -> float:
    """The largest power of two ≤ 2^-GRID_BITS · ``bound`` (module docstring: the grid rule)."""
    g = math.ldexp(1.0, math.frexp(bound)[1] - 1 - GRID_BITS)
    if not (math.isfinite(bound) and bound > 0 and g > 0):
        raise ValueError(f"no grid for the noise bound {bound!r}: it must be a finite number > 2^-1000")
    return g


def _to_units(x: np.ndarray, g: float) -> np.ndarray:
    """rint(x/g) as int64, clipped to ±2^61 grid units: |n(x) − n(x′)| ≤ |x − x′|/g + 1 per coordinate."""
    return np.rint(np.clip(np.asarray(x, dtype=np.float64) / g, -_MAX_UNITS, _MAX_UNITS)).astype(np.int64)


def _shift(sensitivity: float, g: float, coordinates: int) -> int:
    """⌊Δ/g⌋ + coordinates: the largest integer L1 (or per-score) shift of the rounded values."""
    return math.floor(sensitivity / g) + coordinates


def _ceil_ratio(numerator, epsilon: float, largest: int, what: str) -> int:
    scale = math.ceil(Fraction(numerator) / Fraction(epsilon))
    if scale > largest:
        raise ValueError(
            f"the secure sampler cannot calibrate {what}: its noise would be {scale} grid units, "
            f"above 2^{largest.bit_length() - 1}"
        )
    return scale


@functools.lru_cache(maxsize=256)
def _laplace_params(sensitivity: float, epsilon: float, coordinates: int) -> tuple[float, int]:
    """(g, T) for L1 sensitivity Δ over d coordinates: g = grid(Δ/d), T = ⌈(⌊Δ/g⌋ + d + 1)/ε⌉."""
    g = grid(sensitivity / coordinates)
    shift = _shift(sensitivity, g, coordinates)
    return g, _ceil_ratio(shift + 1, epsilon, _MAX_LAPLACE_SCALE, f"Laplace noise for {coordinates} coordinates")


def _gaussian_scale(variance: Fraction) -> tuple[int, int]:
    """(t, c) with t = ⌊σ⌋ + 1, c = ⌈σ²/t⌉, so σ_Z² = t·c ≥ ``variance`` (in grid units²)."""
    t = math.isqrt(math.floor(variance)) + 1
    c = math.ceil(variance / t)
    if t > _MAX_GAUSSIAN_SCALE or c > _MAX_GAUSSIAN_SCALE:
        raise ValueError(
            f"the secure sampler cannot calibrate Gaussian noise of {math.sqrt(variance):.4g} grid units "
            f"(at most 2^30): the sensitivity is too small for the number of coordinates"
        )
    return t, c


@functools.lru_cache(maxsize=256)
def _gaussian_params(sensitivity: float, noise_multiplier: float, coordinates: int) -> tuple[float, int, int]:
    """(g, t, c) for L2 sensitivity Δ₂ over d coordinates: g = grid(σΔ₂), σ_Z² ≥ σ²(Δ₂/g + √d)²."""
    g = grid(sensitivity * noise_multiplier)
    root_d = Fraction(math.isqrt(coordinates << 40) + 1, 1 << 20)  # ≥ √d
    norm = Fraction(sensitivity) / Fraction(g) + root_d
    return (g, *_gaussian_scale(Fraction(noise_multiplier) ** 2 * norm**2))


@functools.lru_cache(maxsize=256)
def _argmax_params(sensitivity: float, epsilon: float, monotonic: bool) -> tuple[float, int]:
    """(g, T) for scores of sensitivity Δ: g = grid(Δ), T = ⌈c·(⌊Δ/g⌋ + 1)/ε⌉, c = 1 monotonic else 2."""
    g = grid(sensitivity)
    shift = (1 if monotonic else 2) * _shift(sensitivity, g, 1)
    return g, _ceil_ratio(shift, epsilon, _MAX_LAPLACE_SCALE, "report-noisy-max noise")


def exponential_log_weights(utilities: np.ndarray, sensitivity: float, epsilon: float, monotonic: bool) -> np.ndarray:
    """ε(u − max u)/(2Δ) (ε(u − max u)/Δ if ``monotonic``): the exponential mechanism's log-weights
    shifted so the largest is 0 (McSherry & Talwar 2007); a gap too large for floating point is −inf."""
    factor = epsilon / ((1.0 if monotonic else 2.0) * sensitivity)
    with np.errstate(over="ignore"):
        return factor * (utilities - utilities.max())


def screened_log_weights(utilities, sensitivity: float, epsilon: float, monotonic: bool):
    """Bounds on ``exponential_log_weights(utilities.exact(), …)`` from bounds |u − û| ≤ E on the utilities (a
    :class:`~dpbench.privacy.screening.ScreenedValues`), as a ScreenedValues of the log-weights whose exact values
    are those floats. The exact log-weights are v = fl(f·fl(u − M)), M = max u, f = ε/(2Δ) (ε/Δ if monotonic);
    M lies in [max(û − E), max(û + E)], so within E* of M̂ = max û, and each of the two roundings moves a value by
    at most u = 2⁻⁵³ of it, so |v − fl(f·fl(û − M̂))| ≤ f(E + E*)(1 + 2⁻⁵⁰) + 2⁻⁴⁹|v̂| (the rounding of this bound
    included). Finer bounds on the utilities give finer bounds on the log-weights."""
    from dpbench.privacy.screening import ScreenedValues

    factor = epsilon / ((1.0 if monotonic else 2.0) * sensitivity)
    approx, error = utilities.approx, utilities.error
    with np.errstate(over="ignore", invalid="ignore"):
        top = approx.max()
        shift = max((approx + error).max() - top, top - (approx - error).max())  # |M − M̂|
        log_weights = factor * (approx - top)
        bound = factor * (error + shift) * (1.0 + 2.0**-50) + 2.0**-49 * np.abs(log_weights)
    finer = utilities.finer
    return ScreenedValues(
        log_weights,
        bound,
        lambda: exponential_log_weights(utilities.exact(), sensitivity, epsilon, monotonic),
        None if finer is None else lambda which: screened_log_weights(finer(which), sensitivity, epsilon, monotonic),
    )


# ------------------------------------------------------------------------------------ samplers
@dataclass(frozen=True)
class SVTDraw:
    """AboveThreshold's noise for one run, in the sampler's units: query i is ⊤ iff
    ``units(q_i) + noise[i] >= threshold``. ``screens``: whether the units are the values themselves, so
    that an approximate value with an error bound may decide the test
    (:class:`~dpbench.privacy.screening.ScreenedValue`)."""

    units: Callable[[object], object]
    threshold: object
    noise: np.ndarray
    screens: bool = False


class NumpySampler:
    """numpy's continuous draws (``Generator.laplace``, ``normal``, ``gumbel``): dpbench's historical
    outputs, bit for bit. Open to Mironov's floating-point attack (module docstring)."""

    name = "numpy"

    def laplace(self, rng, x: np.ndarray, *, sensitivity: float, epsilon: float, coordinates: int) -> np.ndarray:
        """x + Lap(Δ₁/ε) per entry."""
        return x + rng.laplace(0.0, sensitivity / epsilon, size=x.shape)

    def gaussian(
        self, rng, x: np.ndarray, *, sensitivity: float, noise_multiplier: float, coordinates: int
    ) -> np.ndarray:
        """x + N(0, (σΔ₂)²) per entry."""
        return x + rng.normal(0.0, sensitivity * noise_multiplier, size=x.shape)

    def report_noisy_max(self, rng, values: np.ndarray, *, sensitivity: float, epsilon: float, monotonic: bool):
        """argmax over the last axis of values + Lap(cΔ/ε), c = 1 if ``monotonic`` else 2."""
        scale = (1.0 if monotonic else 2.0) * sensitivity / epsilon
        return np.argmax(values + rng.laplace(0.0, scale, size=values.shape), axis=-1)

    def report_noisy_max_screened(self, rng, screened, *, sensitivity: float, epsilon: float, monotonic: bool) -> int:
        """:meth:`report_noisy_max` of ``screened.exact()`` (one vector of values), from the same draws,
        computing the exact values only when the approximate ones cannot decide
        (:class:`~dpbench.privacy.screening.ScreenedValues`)."""
        scale = (1.0 if monotonic else 2.0) * sensitivity / epsilon
        return screened.argmax(rng.laplace(0.0, scale, size=screened.approx.shape))

    def exponential(self, rng, utilities: np.ndarray, *, sensitivity: float, epsilon: float, monotonic: bool):
        """argmax over the last axis of the log-weights + standard Gumbel noise (Gumbel-max)."""
        scores = exponential_log_weights(utilities, sensitivity, epsilon, monotonic)
        return np.argmax(scores + rng.gumbel(size=scores.shape), axis=-1)

    def exponential_screened(self, rng, screened, *, sensitivity: float, epsilon: float, monotonic: bool) -> int:
        """:meth:`exponential` of ``screened.exact()`` (one vector of utilities), from the same draws, computing
        the exact utilities only when bounds on the log-weights cannot decide (:func:`screened_log_weights`)."""
        noise = rng.gumbel(size=screened.approx.shape)
        return screened_log_weights(screened, sensitivity, epsilon, monotonic).argmax(noise)

    def above_threshold(self, rng, calibration, threshold: float, threshold_shape, query_shape) -> SVTDraw:
        """threshold + ρ, then the query noise ν (``calibration``: a sparse_vector.SVTNoise)."""
        noisy = threshold + calibration.threshold_noise(rng, threshold_shape)
        return SVTDraw(lambda v: v, noisy, calibration.query_noise(rng, query_shape), screens=True)


class SecureSampler:
    """Exact discrete noise on a value-independent grid (module docstring; CKS Algs. 1–3)."""

    name = "secure"

    def laplace(self, rng, x: np.ndarray, *, sensitivity: float, epsilon: float, coordinates: int) -> np.ndarray:
        """g·(rint(x/g) + Z), Z i.i.d. discrete Laplace of scale T (``_laplace_params``); ``coordinates``
        = d, the number of entries the L1 sensitivity spans (x may stack independent releases)."""
        if x.size == 0:
            return x.copy()
        g, scale = _laplace_params(sensitivity, epsilon, coordinates)
        noise = discrete_laplace(rng, scale, x.size).reshape(x.shape)
        return (_to_units(x, g) + noise).astype(np.float64) * g

    def gaussian(
        self, rng, x: np.ndarray, *, sensitivity: float, noise_multiplier: float, coordinates: int
    ) -> np.ndarray:
        """g·(rint(x/g) + Z), Z i.i.d. discrete Gaussian of variance t·c (``_gaussian_params``)."""
        if x.size == 0:
            return x.copy()
        g, t, c = _gaussian_params(sensitivity, noise_multiplier, coordinates)
        noise = discrete_gaussian(rng, t, c, x.size).reshape(x.shape)
        return (_to_units(x, g) + noise).astype(np.float64) * g

    def report_noisy_max(self, rng, values: np.ndarray, *, sensitivity: float, epsilon: float, monotonic: bool):
        """argmax over the last axis of rint(v/g) + discrete Laplace noise (lowest index on ties)."""
        g, scale = _argmax_params(sensitivity, epsilon, monotonic)
        noise = discrete_laplace(rng, scale, values.size).reshape(values.shape)
        return np.argmax(_to_units(values, g) + noise, axis=-1)

    def report_noisy_max_screened(self, rng, screened, *, sensitivity: float, epsilon: float, monotonic: bool) -> int:
        """:meth:`report_noisy_max` of ``screened.exact()``: the rounding to the grid needs the exact values."""
        return int(
            self.report_noisy_max(rng, screened.exact(), sensitivity=sensitivity, epsilon=epsilon, monotonic=monotonic)
        )

    def exponential_screened(self, rng, screened, *, sensitivity: float, epsilon: float, monotonic: bool) -> int:
        """:meth:`exponential` of ``screened.exact()``: the rounding to the grid needs the exact utilities."""
        return int(
            self.exponential(rng, screened.exact(), sensitivity=sensitivity, epsilon=epsilon, monotonic=monotonic)
        )

    def exponential(self, rng, utilities: np.ndarray, *, sensitivity: float, epsilon: float, monotonic: bool):
        """argmax over the last axis of rint(u/g) + one-sided geometric noise: report-noisy-max with
        (discrete) exponential noise, i.e. permute-and-flip (McKenna & Sheldon 2020)."""
        g, scale = _argmax_params(sensitivity, epsilon, monotonic)
        noise = geometric(rng, scale, utilities.size).reshape(utilities.shape)
        return np.argmax(_to_units(utilities, g) + noise, axis=-1)

    def above_threshold(self, rng, calibration, threshold: float, threshold_shape, query_shape) -> SVTDraw:
        """Rounded threshold + discrete noise, then the query noise, in grid units (module docstring)."""
        g, draw_threshold, draw_queries = _svt_noise(calibration)
        rho = draw_threshold(rng, _size(threshold_shape))
        noisy = _to_units(threshold, g) + (rho[0] if threshold_shape is None else rho.reshape(threshold_shape))
        noise = draw_queries(rng, _size(query_shape)).reshape(query_shape)
        return SVTDraw(lambda v: _to_units(v, g), noisy, noise)


def _size(shape) -> int:
    """The number of entries of a draw of ``shape`` (None: one scalar)."""
    return 1 if shape is None else math.prod(np.atleast_1d(shape).tolist())


def _svt_noise(calibration) -> tuple[float, Callable, Callable]:
    """(g, threshold sampler, query sampler) for an SVTNoise: see the module docstring."""
    sensitivity, event = calibration.sensitivity, calibration.event
    if calibration.gaussian:
        g = grid(sensitivity * event.sigma1)
        shift = Fraction(_shift(sensitivity, g, 1))
        t1, c1 = _gaussian_scale((Fraction(event.sigma1) * shift) ** 2)
        t2, c2 = _gaussian_scale((Fraction(event.sigma2) * shift) ** 2)
        return g, lambda rng, n: discrete_gaussian(rng, t1, c1, n), lambda rng, n: discrete_gaussian(rng, t2, c2, n)
    g = grid(sensitivity)
    shift = _shift(sensitivity, g, 1)
    t1 = _ceil_ratio(shift + 1, event.epsilon1, _MAX_LAPLACE_SCALE, "AboveThreshold's threshold noise")
    t2 = _ceil_ratio(Fraction(2 * shift + 1, 2), event.epsilon2, _MAX_LAPLACE_SCALE, "AboveThreshold's query noise")
    return g, lambda rng, n: discrete_laplace(rng, t1, n), lambda rng, n: discrete_laplace(rng, t2, n)


_SAMPLERS = {"numpy": NumpySampler(), "secure": SecureSampler()}
_ACTIVE: ContextVar[NumpySampler | SecureSampler] = ContextVar("dpbench_sampler", default=_SAMPLERS["numpy"])


def current_sampler() -> NumpySampler | SecureSampler:
    """The sampler the mechanisms draw from in this context (``"numpy"`` unless :func:`use_sampler`)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def use_sampler(name: str) -> Iterator[NumpySampler | SecureSampler]:
    """Make ``name`` (one of :data:`SAMPLERS`) the current sampler inside the ``with`` block (per
    thread / asyncio task: a ContextVar), restoring the previous one on exit."""
    if name not in _SAMPLERS:
        raise ValueError(f"unknown sampler {name!r}; valid names are {', '.join(SAMPLERS)}")
    token = _ACTIVE.set(_SAMPLERS[name])
    try:
        yield _SAMPLERS[name]
    finally:
        _ACTIVE.reset(token)


def require_numpy_sampler(mechanism: str) -> None:
    """Raise :class:`UnsupportedSampler` unless the current sampler is numpy's: for mechanisms that
    have no secure implementation (they must not silently draw floating-point noise)."""
    active = current_sampler().name
    if active != "numpy":
        raise UnsupportedSampler(
            f"{mechanism} has no {active!r} implementation: privacy.sampler={active} is not "
            f"available for it (use privacy.sampler=numpy)"
        )
