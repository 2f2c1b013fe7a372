"""Audit targets of AMP's two releases (:mod:`dpbench.privacy.minima_perturbation`; Iyengar et al. 2019,
Alg. 1) and a control that draws its noise as the authors' code does.

The output release is the tail-bound Gaussian on an approximate minimiser; its target is the mechanism on
the worst shift (f(D) = 0, f(D′) = Δ). Doubling its sensitivity without doubling σ (the authors' code
calibrates to nγ/Λ where the composition needs 2nγ/Λ) is not caught by a black-box audit at N = 10⁶: the
tail bound is loose enough that the doubled shift stays under the claim at the probabilities N draws can
resolve (docs/papers/iyengar_amp.md gives the ε̂ measured); that departure is shown by the proof alone.
"""

from __future__ import annotations

import numpy as np

from dpbench.audit.algorithm_targets import _huber_pair, _perturbed_minimisers
from dpbench.audit.core import Target
from dpbench.audit.targets import DELTA, ample_ledger
from dpbench.privacy.mechanisms import amp_objective_noise, tail_bound_gaussian_mechanism

NOISE_SHARE = 0.9
"""AMP's default share of the objective's ε for its linear noise (``amp.noise_share``)."""


def tail_bound_gaussian_target(epsilon: float = 1.0, delta: float = DELTA) -> Target:
    """``tail_bound_gaussian_mechanism`` (σ = Δ(1 + √(2 ln(1/δ)))/ε) on f(D) = 0, f(D′) = Δ = 1, the full
    L2 sensitivity: AMP's output release at the largest shift its analysis allows."""

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return tail_bound_gaussian_mechanism(
            np.full(n, float(side)),
            sensitivity=1.0,
            epsilon=epsilon,
            delta=delta,
            rng=rng,
            ledger=ample_ledger("approx"),
        )

    return Target(
        "tail_bound_gaussian",
        epsilon,
        delta,
        sample,
        pair="f(D) = 0, f(D′) = Δ₂ = 1",
        proof="Gaussian tail bound P[Z > √(2 ln(1/δ))] ≤ δ (Iyengar et al. 2019, Alg. 1)",
    )


def _amp_minimisers(problem, epsilon: float, delta: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """n exact minimisers of AMP's perturbed objective on ``problem`` (ζ = sup|ℓ′|, λ = sup ℓ″ for ‖x‖ ≤ 1):
    the b of n runs are one call with dim = n (its entries are i.i.d.)."""
    b, regulariser = amp_objective_noise(
        n,
        gradient_bound=problem.loss.lipschitz,
        curvature_bound=problem.loss.smoothness,
        epsilon=epsilon,
        noise_share=NOISE_SHARE,
        delta=delta,
        rng=rng,
        ledger=ample_ledger("approx", 0.5),
    )
    return _perturbed_minimisers(problem, regulariser, b)


def amp_objective_target(epsilon: float = 1.0, delta: float = DELTA) -> Target:
    """AMP's objective release: the exact minimiser of F(w) + (Λ/2n)w² + bw/n with (b, Λ) from
    ``amp_objective_noise`` (σ = 2ζ(1 + √(2 ln(1/δ)))/(0.9ε), Λ = 2λ/(0.1ε)). Pair: the Huber pair of the
    ObjPert target (ζ = 1, λ = 1/(2h) = 1): the differing record's gradients are −1 and +1 wherever its
    margin is below 1 − h, the ‖∇ℓ(z) − ∇ℓ(z′)‖ = 2ζ of the density-ratio bound."""
    problems = _huber_pair(reg=0.01)

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return _amp_minimisers(problems[side], epsilon, delta, n, rng)

    return Target(
        "amp_objective",
        epsilon,
        delta,
        sample,
        pair="1-D Huber hinge (h = 1/2), x₀ = 1, y₀ = +1 vs −1, μ = 0.01",
        proof="change of variables b ↦ θ* (Kifer, Smith & Thakurta 2012) with AMP's split (Iyengar et al. 2019)",
    )


def amp_one_byte_seed(epsilon: float = 1.0, delta: float = DELTA) -> Target:
    """BROKEN: AMP's objective release with its noise drawn as the authors' code draws it, from numpy seeded
    with one random byte (``np.random.seed(ord(os.urandom(1)))``): 256 possible noise vectors, so the
    minimiser takes one of 256 values on D and one of 256 others on D′. Outputs are reported as integer
    multiples of 10⁻⁹ (a post-processing), so the audit may test the set of D's outcomes."""
    problems = _huber_pair(reg=0.01)

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        streams = [np.random.default_rng(seed) for seed in range(256)]
        outcomes = np.concatenate([_amp_minimisers(problems[side], epsilon, delta, 1, s) for s in streams])
        return np.round(outcomes[rng.integers(256, size=n)] * 1e9).astype(np.int64)

    return Target(
        "control_amp_one_byte_seed",
        epsilon,
        delta,
        sample,
        pair="1-D Huber hinge (h = 1/2), x₀ = 1, y₀ = +1 vs −1, μ = 0.01; noise from one of 256 seeds",
        proof="(broken) 256 possible noise vectors: D's and D′'s outputs have disjoint supports",
    )
