"""The two releases of Approximate Minima Perturbation (AMP; Iyengar, Near, Song, Thakkar, Thakurta &
Wang, IEEE S&P 2019, Algorithm 1): the linear term b of a perturbed objective, and the Gaussian noise on
an approximate minimiser of it. Both are (ε, δ) releases priced by the ``approx`` accountant.

**The tail-bound Gaussian** (:func:`tail_bound_gaussian_sigma`): σ = Δ(1 + s)/ε with s = √(2 ln(1/δ)).
At a shift of norm ≤ Δ the Gaussian mechanism's privacy loss is at most (Δ/σ)·t + Δ²/(2σ²) =
εt/(1 + s) + ε²/(2(1 + s)²), t the noise's component along the shift over σ, a standard normal. For
t ≤ s this is ≤ ε whenever **ε ≤ 2(1 + s)** (ε ≤ 11.6 at δ = 10⁻⁵), and P[t > s] ≤ e^{−s²/2} = δ; a loss
bounded by ε except with probability δ is (ε, δ)-DP. Above that range σ is refused. (The analytic
Gaussian of Balle & Wang 2018 is smaller; AMP's published calibration is this one.)

**The objective's linear term** (:func:`amp_objective_noise`): J(θ) = Σᵢ ℓ(θ; dᵢ) + (Λ/2)‖θ‖² + bᵀθ
(plus any public ridge), b ~ N(0, σ²I) with σ = 2ζ(1 + s)/ε_noise and Λ = rλ/(ε_obj − ε_noise), r = 2,
for a GLM loss with |ℓ′|·‖x‖ ≤ ζ and 0 ≤ ℓ″·‖x‖² ≤ λ. Its exact minimiser θ* is (ε_obj, δ)-DP under
replace-one and under add/remove (with n̄ public), by the change of variables b ↦ θ* (Chaudhuri,
Monteleoni & Sarwate 2011; Kifer, Smith & Thakurta 2012, Thm 2): the density ratio of θ* on neighbours is
(i) the Jacobian ratio det(H + ℓ″(z)xxᵀ)/det(H + ℓ″(z′)x′x′ᵀ) ≤ 1 + λ/Λ ≤ e^{(ε_obj − ε_noise)/2} (H ⪰ ΛI),
times (ii) the ratio of b's densities at b and b + v, v = ∇ℓ(θ; z′) − ∇ℓ(θ; z) of norm ≤ 2ζ and in the
span of x and x′. Since bᵀv ≤ 2ζ‖Pb‖, P the projection on that span (dimension ≤ 2), the log-ratio is at
most (2ζ‖Pb‖ + 2ζ²)/σ², and ‖Pb‖²/σ² is χ² with ≤ 2 degrees of freedom, whose tail beyond s² is ≤
e^{−s²/2} = δ: (ii) ≤ ε_noise except with probability δ whenever ε_noise ≤ 2(1 + s), as above. The split
ε_obj − ε_noise < 1 is AMP's own condition (the public code's ``(eps_obj − eps_p) >= 1`` guard).

**The output** (:func:`tail_bound_gaussian_mechanism`): AMP releases θ̂ + N(0, σ_out²I) for any θ̂ with
‖∇J(θ̂)‖ ≤ τ. J is (Λ + n̄μ)-strongly convex, so ‖θ̂ − θ*‖ ≤ τ/(Λ + n̄μ). Given θ* = t (the first
release), b is a function of (D, t), hence so is θ̂ = t + e(D, t) with ‖e‖ ≤ τ/(Λ + n̄μ) on every
dataset: on neighbours the second release moves by ≤ 2τ/(Λ + n̄μ), its sensitivity, and the pair
composes adaptively to (ε_obj + ε_out, δ_obj + δ_out). The AMP authors' code calibrates to τ/Λ
(one side only); Redberg, Koskela & Wang's AMP (NeurIPS 2023, ``Delta_f = 2*tau/lambd``) to 2τ/Λ.
"""

from __future__ import annotations

import math

import numpy as np

from dpbench.privacy._charge import charge
from dpbench.privacy._checks import check_count, check_delta, check_finite_array, check_generator, check_positive
from dpbench.privacy.events import ApproxDPEvent
from dpbench.privacy.samplers import require_numpy_sampler

AMP_RANK = 2
"""r of Λ = rλ/(ε_obj − ε_noise): the rank of the change of the Hessian between neighbours (GLMs)."""


def tail_bound_gaussian_sigma(*, sensitivity: float, epsilon: float, delta: float) -> float:
    """σ = Δ(1 + √(2 ln(1/δ)))/ε, the Gaussian calibration of AMP (module docstring); refused for
    ε > 2(1 + √(2 ln(1/δ))), where the tail bound no longer covers the loss's mean."""
    sens = check_positive("sensitivity", sensitivity)
    eps = check_positive("epsilon", epsilon)
    tail = math.sqrt(2.0 * math.log(1.0 / check_delta(delta)))
    if eps > 2.0 * (1.0 + tail):
        raise ValueError(
            f"the tail-bound Gaussian covers ε ≤ 2(1 + √(2 ln(1/δ))) = {2.0 * (1.0 + tail):.4g} at δ = {delta:g}, "
            f"got ε = {eps:g}"
        )
    return sens * (1.0 + tail) / eps


def tail_bound_gaussian_mechanism(
    value, *, sensitivity: float, epsilon: float, delta: float, rng, ledger, label: str = "tail_bound_gaussian"
) -> np.ndarray:
    """``value`` + N(0, σ²) per coordinate with σ of :func:`tail_bound_gaussian_sigma`, for a value whose
    L2 sensitivity is ``sensitivity``; charges ApproxDPEvent(ε, δ) before sampling. numpy sampler only."""
    x = check_finite_array("value", value)
    sigma = tail_bound_gaussian_sigma(sensitivity=sensitivity, epsilon=epsilon, delta=delta)
    check_generator(rng)
    require_numpy_sampler("tail_bound_gaussian_mechanism")
    charge(ledger, ApproxDPEvent(epsilon, delta), 1.0, label)
    return x + rng.normal(0.0, sigma, size=x.shape)


def amp_regulariser(*, curvature_bound: float, epsilon: float, noise_share: float) -> float:
    """Λ = rλ/(ε_obj − ε_noise), r = 2, ε_noise = ``noise_share``·ε_obj (module docstring); AMP requires
    0 < ε_obj − ε_noise < 1."""
    lam = check_positive("curvature_bound", curvature_bound)
    eps = check_positive("epsilon", epsilon)
    if not 0.0 < noise_share < 1.0:
        raise ValueError(f"noise_share must be in (0, 1), got {noise_share!r}")
    curvature_budget = eps * (1.0 - noise_share)
    if curvature_budget >= 1.0:
        raise ValueError(
            f"AMP needs ε_obj − ε_noise < 1: ε_obj = {eps:.4g} with noise_share = {noise_share:g} leaves "
            f"{curvature_budget:.4g}; raise noise_share above {1.0 - 1.0 / eps:.4g}"
        )
    return AMP_RANK * lam / curvature_budget


def amp_objective_noise(
    dim: int,
    *,
    gradient_bound: float,
    curvature_bound: float,
    epsilon: float,
    noise_share: float,
    delta: float,
    rng,
    ledger,
    label: str = "amp_objective",
) -> tuple[np.ndarray, float]:
    """(b, Λ) for AMP's perturbed objective Σℓ + (Λ/2)‖θ‖² + bᵀθ: b ~ N(0, σ²I) with σ =
    2ζ(1 + √(2 ln(1/δ)))/ε_noise, ε_noise = ``noise_share``·ε, and Λ of :func:`amp_regulariser`, for
    ζ = ``gradient_bound`` ≥ |ℓ′|·‖x‖ and λ = ``curvature_bound`` ≥ ℓ″·‖x‖². Its exact minimiser is
    (ε, δ)-DP (module docstring); charges ApproxDPEvent(ε, δ) before sampling. numpy sampler only."""
    d = check_count("dim", dim)
    zeta = check_positive("gradient_bound", gradient_bound)
    regulariser = amp_regulariser(curvature_bound=curvature_bound, epsilon=epsilon, noise_share=noise_share)
    sigma = tail_bound_gaussian_sigma(sensitivity=2.0 * zeta, epsilon=noise_share * epsilon, delta=delta)
    check_generator(rng)
    require_numpy_sampler("amp_objective_noise")
    charge(ledger, ApproxDPEvent(epsilon, delta), 1.0, label)
    return rng.normal(0.0, sigma, size=d), regulariser
