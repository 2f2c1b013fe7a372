"""Noise calibration and privacy guarantee of liu_dda Theorem 1 (proof: Sec. 4.1). Data-free.

The proof composes, per iteration t, one Gaussian release ζ = ĝ + ν per active node:

* Lemma 4.1 with L2 sensitivity Δ = 2L (replace one sample; ‖ĝ‖ ≤ L, Assumption 3): the release
  M_t is (ε_t, δ₀)-DP, ε_t = 2L√(2 log(2/δ₀))/σ (first display of "DP at each time t"; the
  classical proof of this Gaussian bound needs ε_t < 1);
* Lemma 4.2, node sampling at rate ι times one of q local samples: 𝒜_t is (ε'_t, ιδ₀/q)-DP with
  ε'_t = 2ιε_t/q ≥ ln(1 + ι(e^{ε_t} − 1)/q) (true for ε_t ≤ 1.25);
* Lemma 4.3 (advanced composition, needs every ε'_t ≤ 0.9), over t iterations, with S = Σ_τ ε'_τ²:
  ε̃ = √(2S log(e + √S/δ')) + S and δ̃ = 1 − (1 − δ')(1 − ιδ₀/q)^t for any δ' ∈ (0, 1]; the proof
  takes δ' = √S. Post-processing (Lemma 4.4) carries (ε̃, δ̃) to Algorithm 1.

With Theorem 1's σ² = 32ι²L²T log(2/δ₀)/(q²ε²): ε_t² = q²ε²/(4ι²T) (eq. (16)), ≤ 0.2 when
T ≥ 5q²ε²/(4ι²), and S = ε² after T iterations (eq. (17)).

Two slips in Sec. 4.1 (see :func:`proof_guarantee`, which evaluates the chain as stated):

1. The final display bounds ε̃ as if S = ε²/5 ("+ (1/5)ε²", "√(3Σε'²) = √(3ε²/5)"), but (17) gives
   S = ε². With S = ε² the chain yields ε̃ = ε√(2 log(e + 1)) + ε² ≈ 1.62ε + ε² > ε, so the
   printed σ does not prove (ε, δ)-DP. Five times the variance (constant 160 instead of 32,
   ``corrected=True``) makes S = ε²/5 and ε̃ ≤ √(3/5)ε + ε/5 < ε, as the display intends. Remark
   3.1's ε̂(t) (eq. (7)) is the bound for that corrected σ.
2. The δ̃ display writes (1 − ιδ₀)^T, dropping the 1/q of Lemma 4.2; the printed value is larger,
   hence valid but looser. :func:`theorem1_delta` uses ιδ₀/q.

"For some constant δ" (Theorem 1) is δ = δ̃ with δ' = √S: δ = 1 − (1 − ε)(1 − ιδ₀/q)^T for the
printed σ, 1 − (1 − ε/√5)(1 − ιδ₀/q)^T for the corrected one. Either way δ ≥ ε/√5 (0.36 at
ε = 0.8), and the factor (1 − ιδ₀/q)^T ≈ exp(−Tιδ₀/q) pushes δ towards 1 once Tιδ₀/q ≳ 1.
Theorem 1's guarantee is weak, and inherently so: with the corrected σ at ε = 0.8, δ' can only
shrink from √S = 0.358 to 0.115 before ε̃ exceeds ε.

The condition on T is restrictive at the scale of Sec. 5: on rcv1 (q = 677,399/20 = 33,869 rows
per node, ι = 0.1, ε = 0.8) it asks for T ≥ 9.2·10¹⁰ iterations, while 3 epochs are ~10⁶; below
it ε_t exceeds 1 and Lemmas 4.1–4.3 no longer apply (:func:`check_iteration_condition` refuses).
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from dpbench.privacy._checks import check_count, check_positive

__all__ = [
    "check_iteration_condition",
    "per_step_epsilon",
    "proof_guarantee",
    "remark31_epsilon",
    "sec5_sigma",
    "theorem1_delta",
    "theorem1_sigma",
]

_PRINTED_CONSTANT = 32.0  # Theorem 1
_CORRECTED_CONSTANT = 160.0  # 5 × 32: S = ε²/5 as the final display of Sec. 4.1 assumes
_COMPOSITION_CAP = 0.9  # Lemma 4.3: every ε_i ∈ (0, 0.9]


def _check_epsilon(epsilon: object) -> float:
    """Theorem 1 assumes ε ∈ (0, 1]."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, Real) or not 0.0 < epsilon <= 1.0:
        raise ValueError(f"epsilon must be in (0, 1] (liu_dda Theorem 1), got {epsilon!r}")
    return float(epsilon)


def _check_unit(name: str, value: object) -> float:
    """ι and δ₀ are in (0, 1] (Theorem 1)."""
    if isinstance(value, bool) or not isinstance(value, Real) or not 0.0 < value <= 1.0:
        raise ValueError(f"{name} must be in (0, 1], got {value!r}")
    return float(value)


def _composed_delta(delta_prime: float, per_step_delta: float, steps: int) -> float:
    """1 − (1 − δ')(1 − δ_step)^t (Lemma 4.3), without cancellation for small δ's."""
    if delta_prime >= 1.0 or per_step_delta >= 1.0:
        return 1.0
    return -math.expm1(math.log1p(-delta_prime) + steps * math.log1p(-per_step_delta))


def check_iteration_condition(iterations: int, *, epsilon: float, iota: float, q: int) -> None:
    """Raise unless T ≥ 5q²ε²/(4ι²) (Theorem 1), the condition making ε_t² ≤ 0.2 in eq. (16)."""
    t = check_count("iterations", iterations)
    eps, iota, q = _check_epsilon(epsilon), _check_unit("iota", iota), check_count("q", q)
    bound = 5.0 * q**2 * eps**2 / (4.0 * iota**2)
    if t < bound * (1.0 - 1e-12):  # tolerate rounding in the bound itself
        raise ValueError(
            f"T = {t} iterations is below Theorem 1's requirement T >= 5q²ε²/(4ι²) = {bound:.6g} "
            f"(q = {q} samples per node, ε = {eps:g}, ι = {iota:g}): run at least {math.ceil(bound * (1.0 - 1e-12))} "
            f"iterations, or lower q·ε/ι (fewer samples per node, a smaller ε or a larger ι)"
        )


def theorem1_sigma(
    epsilon: float, *, delta0: float, iota: float, q: int, iterations: int, lipschitz: float, corrected: bool = False
) -> float:
    """σ = √(32ι²L²T log(2/δ₀)/(q²ε²)), the smallest noise of Theorem 1 (constant 160 if ``corrected``,
    module docstring). Checks ε ∈ (0, 1], δ₀, ι ∈ (0, 1] and the condition on T."""
    constant = _CORRECTED_CONSTANT if corrected else _PRINTED_CONSTANT
    sigma = _sigma(constant, epsilon, delta0=delta0, iota=iota, q=q, iterations=iterations, lipschitz=lipschitz)
    check_iteration_condition(iterations, epsilon=epsilon, iota=iota, q=q)
    return sigma


def sec5_sigma(epsilon: float, *, delta0: float, iota: float, q: int, iterations: int, lipschitz: float) -> float:
    """σ = √(32ι²L²T log(2/δ₀)/(q²ε²)) at any T: Theorem 1's printed σ as Sec. 5.1 draws it ("The random
    noises ... are generated accordingly based on Theorem 1", δ₀ = 0.01, runs of 3 epochs), without
    the condition T ≥ 5q²ε²/(4ι²), which those runs do not meet (Adult: 48,840 iterations where it asks
    for 2.1·10⁸). Checks ε ∈ (0, 1], δ₀, ι ∈ (0, 1].

    NOT (ε, δ)-DP for any useful δ: with the constant 32 the proof's chain gives ε̃ ≈ 1.62ε + ε² > ε
    even where the condition holds (module docstring); below it the per-release ε_t of eq. (16),
    q·ε/(2ι√T), exceeds 1 and Lemmas 4.1–4.3 do not apply (ε_t ≈ 29 on Adult at ε = 0.8, ι = 0.1); and
    the factor ι² is the amplification by node sampling, which assumes the silence of inactive nodes
    is hidden (:mod:`dpbench.dda.accounting`). Only ``fidelity=paper`` of liu_dda calls it."""
    return _sigma(_PRINTED_CONSTANT, epsilon, delta0=delta0, iota=iota, q=q, iterations=iterations, lipschitz=lipschitz)


def _sigma(
    constant: float, epsilon: float, *, delta0: float, iota: float, q: int, iterations: int, lipschitz: float
) -> float:
    """√(constant·ι²L²T log(2/δ₀)/(q²ε²)), its arguments checked."""
    eps, delta0, iota = _check_epsilon(epsilon), _check_unit("delta0", delta0), _check_unit("iota", iota)
    q, t, lip = check_count("q", q), check_count("iterations", iterations), check_positive("lipschitz", lipschitz)
    return math.sqrt(constant * iota**2 * lip**2 * t * math.log(2.0 / delta0) / (q**2 * eps**2))


def per_step_epsilon(sigma: float, *, lipschitz: float, delta0: float) -> float:
    """ε_t = 2L√(2 log(2/δ₀))/σ: one release ĝ + N(0, σ²I) of L2 sensitivity 2L is (ε_t, δ₀)-DP
    (Lemma 4.1, first display of Sec. 4.1, eq. (16))."""
    sigma, lip = check_positive("sigma", sigma), check_positive("lipschitz", lipschitz)
    return 2.0 * lip * math.sqrt(2.0 * math.log(2.0 / _check_unit("delta0", delta0))) / sigma


def remark31_epsilon(t, *, iterations: int, epsilon: float):
    """ε̂(t) = √(3t/(5T))·ε + t·ε²/(5T) for 1 ≤ t ≤ T (Remark 3.1, eq. (7)); a float for scalar t."""
    eps, total = _check_epsilon(epsilon), check_count("iterations", iterations)
    ts = np.asarray(t)
    if not np.issubdtype(ts.dtype, np.integer) or ts.size == 0 or ts.min() < 1 or ts.max() > total:
        raise ValueError(f"t must be integers in [1, T = {total}], got {t!r}")
    frac = ts / total
    value = np.sqrt(3.0 * frac / 5.0) * eps + frac * eps**2 / 5.0
    return float(value) if np.ndim(t) == 0 else value


def theorem1_delta(
    epsilon: float, *, delta0: float, iota: float, q: int, iterations: int, corrected: bool = False
) -> float:
    """The δ of Theorem 1 as the proof (Sec. 4.1) produces it: δ = 1 − (1 − δ')(1 − ιδ₀/q)^T with
    δ' = √(Σ_t ε'_t²) = ε by eq. (17) (ε/√5 with the ``corrected`` σ), ιδ₀/q the per-step δ of
    Lemma 4.2. Equals ``proof_guarantee(T, sigma=theorem1_sigma(...))[1]``."""
    eps, delta0, iota = _check_epsilon(epsilon), _check_unit("delta0", delta0), _check_unit("iota", iota)
    q, t = check_count("q", q), check_count("iterations", iterations)
    check_iteration_condition(t, epsilon=eps, iota=iota, q=q)
    delta_prime = eps / math.sqrt(5.0) if corrected else eps
    return _composed_delta(delta_prime, iota * delta0 / q, t)


def proof_guarantee(
    t: int, *, sigma: float, lipschitz: float, delta0: float, iota: float, q: int, delta_prime: float | None = None
) -> tuple[float, float]:
    """(ε̃, δ̃) after t iterations at noise σ by the chain of Sec. 4.1 (module docstring):

    ε'_τ = 2ι·ε_τ/q, ε_τ = 2L√(2 log(2/δ₀))/σ (Lemmas 4.1–4.2); S = t·ε'²;
    ε̃ = √(2S log(e + √S/δ')) + S and δ̃ = 1 − (1 − δ')(1 − ιδ₀/q)^t (Lemma 4.3),
    δ' = √S by default, as in the proof (it must be ≤ 1).

    Raises when the lemmas do not apply: ε_τ ≥ 1 (Gaussian mechanism) or ε'_τ > 0.9 (Lemma 4.3).
    """
    steps, q = check_count("t", t), check_count("q", q)
    iota = _check_unit("iota", iota)
    eps_step = per_step_epsilon(sigma, lipschitz=lipschitz, delta0=delta0)
    if eps_step >= 1.0:
        raise ValueError(
            f"per-step epsilon 2L√(2 log(2/δ₀))/σ = {eps_step:.6g} must be < 1 for Lemma 4.1; increase sigma"
        )
    eps_sub = 2.0 * iota * eps_step / q
    if eps_sub > _COMPOSITION_CAP:
        raise ValueError(f"amplified per-step epsilon 2ι·ε_t/q = {eps_sub:.6g} exceeds 0.9 (Lemma 4.3); increase sigma")
    total = steps * eps_sub**2
    if delta_prime is None:
        if total > 1.0:
            raise ValueError(
                f"the proof's δ' = √(Σε'²) = {math.sqrt(total):.6g} must be <= 1; increase sigma or pass delta_prime"
            )
        delta_prime = math.sqrt(total)
    else:
        delta_prime = _check_unit("delta_prime", delta_prime)
    eps_total = math.sqrt(2.0 * total * math.log(math.e + math.sqrt(total) / delta_prime)) + total
    return eps_total, _composed_delta(delta_prime, iota * _check_unit("delta0", delta0) / q, steps)
