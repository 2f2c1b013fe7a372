"""Audit targets for the mechanisms under ``privacy.sampler=secure`` (:mod:`dpbench.privacy.samplers`).

Each samples the secure sampler's vectorised primitive, which the public mechanism calls with the
same calibration: :func:`~dpbench.audit.probe.probe_same_release` first checks, seed by seed, that the
mechanism releases exactly the primitive's draw. A stacked array of n values with ``coordinates=1``
is n independent scalar releases (the grid and the noise scale depend only on the public
parameters). Pairs and proofs are those of the numpy targets (:mod:`dpbench.audit.targets`); the
secure noise is calibrated to the sensitivity inflated by rounding, so each claim is the numpy one.
"""

from __future__ import annotations

import numpy as np

from dpbench.audit.core import Target
from dpbench.audit.probe import probe_same_release
from dpbench.audit.targets import DELTA, ample_ledger, claimed_epsilon
from dpbench.privacy.calibrate import gaussian_noise_for_budget
from dpbench.privacy.events import GaussianEvent
from dpbench.privacy.mechanisms import (
    exponential_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    report_noisy_max,
)
from dpbench.privacy.samplers import use_sampler

__all__ = [
    "secure_exponential_target",
    "secure_gaussian_target",
    "secure_laplace_target",
    "secure_report_noisy_max_target",
]

PROOF = "; grid-rounded, discrete noise calibrated to the inflated sensitivity (samplers module, CKS 2020)"


def _probe(release, primitive) -> None:
    """:func:`probe_same_release` with both sides under the secure sampler."""

    def secure(call):
        def run(rng):
            with use_sampler("secure"):
                return call(rng)

        return run

    probe_same_release(secure(release), secure(primitive))


def secure_laplace_target(epsilon: float = 1.0) -> Target:
    """``laplace_mechanism`` under the secure sampler: f(D) = 0, f(D′) = Δ = 1 (the numpy target's pair).
    Both outputs lie on the same grid, so the density ratio is e^{ε|Δn|/T} ≤ e^ε (discrete Laplace)."""
    ledger = ample_ledger()
    _probe(
        lambda rng: laplace_mechanism(0.0, sensitivity=1.0, epsilon=epsilon, rng=rng, ledger=ledger),
        lambda rng: float(_laplace(rng, np.zeros(1), epsilon)[0]),
    )

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return _laplace(rng, np.full(n, float(side)), epsilon)

    return Target(
        "secure_laplace",
        epsilon,
        0.0,
        sample,
        pair="f(D) = 0, f(D′) = Δ = 1 (L1 sensitivity 1)",
        proof="discrete Laplace mechanism, CKS 2020 / Dwork & Roth Thm 3.6" + PROOF,
    )


def _laplace(rng: np.random.Generator, x: np.ndarray, epsilon: float) -> np.ndarray:
    with use_sampler("secure") as secure:
        return secure.laplace(rng, x, sensitivity=1.0, epsilon=epsilon, coordinates=1)


def secure_gaussian_target(epsilon: float = 1.0, delta: float = DELTA) -> Target:
    """``gaussian_mechanism`` under the secure sampler with σ = ``gaussian_noise_for_budget(ε, δ)``:
    f(D) = 0, f(D′) = Δ₂ = 1. The discrete Gaussian is 1/(2σ²)-zCDP (CKS Thm 15), the RDP curve of
    GaussianEvent(σ); claimed ε: a fresh RDP ledger's ε at δ after that event."""
    sigma = gaussian_noise_for_budget(epsilon, delta)
    claim = claimed_epsilon(GaussianEvent(sigma), delta)
    ledger = ample_ledger("rdp", delta)

    def gaussian(rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
        with use_sampler("secure") as secure:
            return secure.gaussian(rng, x, sensitivity=1.0, noise_multiplier=sigma, coordinates=1)

    _probe(
        lambda rng: gaussian_mechanism(0.0, sensitivity=1.0, noise_multiplier=sigma, rng=rng, ledger=ledger),
        lambda rng: float(gaussian(rng, np.zeros(1))[0]),
    )
    return Target(
        "secure_gaussian",
        claim,
        delta,
        lambda side, n, rng: gaussian(rng, np.full(n, float(side))),
        pair=f"f(D) = 0, f(D′) = Δ₂ = 1; σ = {sigma:.4g}",
        proof="discrete Gaussian, CKS 2020 Thm 15 (zCDP = the Gaussian RDP curve), ε by the RDP conversion" + PROOF,
    )


def _argmax_target(
    name: str, method: str, mechanism, pairs: tuple[np.ndarray, np.ndarray], epsilon: float, pair: str, proof: str
) -> Target:
    """A secure argmax mechanism (``method`` of the sampler) on ``pairs``, vectorised over runs."""
    ledger = ample_ledger()

    def primitive(rng: np.random.Generator, values: np.ndarray) -> np.ndarray:
        with use_sampler("secure") as secure:
            return getattr(secure, method)(rng, values, sensitivity=1.0, epsilon=epsilon, monotonic=False)

    for v in pairs:
        _probe(
            lambda rng, v=v: mechanism(v, sensitivity=1.0, epsilon=epsilon, rng=rng, ledger=ledger),
            lambda rng, v=v: int(primitive(rng, v)),
        )

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return primitive(rng, np.broadcast_to(pairs[side], (n, pairs[side].size)))

    return Target(name, epsilon, 0.0, sample, pair=pair, proof=proof + PROOF)


def secure_report_noisy_max_target(epsilon: float = 1.0) -> Target:
    """``report_noisy_max`` (general form) under the secure sampler, on the numpy target's pair:
    v(D) = (−2, 0, …, 0), v(D′) = (−1, …, −1), 8 candidates, Δ = 1."""
    pairs = (np.array([-2.0] + [0.0] * 7), np.full(8, -1.0))
    return _argmax_target(
        "secure_report_noisy_max",
        "report_noisy_max",
        report_noisy_max,
        pairs,
        epsilon,
        pair="v(D) = (−2, 0, …, 0), v(D′) = (−1, …, −1), 8 candidates, Δ = 1",
        proof="report noisy max with discrete Laplace noise, Dwork & Roth 2014 Claim 3.9",
    )


def secure_exponential_target(epsilon: float = 1.0) -> Target:
    """``exponential_mechanism`` under the secure sampler (report-noisy-max with discrete exponential noise,
    i.e. permute-and-flip): u(D) = (−2, 0, 0, 0), u(D′) = (−1, −1, −1, −1), Δ = 1. With exponential noise
    of scale 2Δ/ε, P[first wins] is exactly e^ε times larger on D′ (memorylessness), so the pair is tight."""
    pairs = (np.array([-2.0, 0.0, 0.0, 0.0]), np.full(4, -1.0))
    return _argmax_target(
        "secure_exponential",
        "exponential",
        exponential_mechanism,
        pairs,
        epsilon,
        pair="u(D) = (−2, 0, 0, 0), u(D′) = (−1, −1, −1, −1), Δ = 1",
        proof="report noisy max with exponential noise = permute-and-flip (McKenna & Sheldon 2020)",
    )
