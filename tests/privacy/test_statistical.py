"""Statistical privacy audits: on a worst-case neighbouring pair, a 99% Clopper–Pearson lower bound on ε
from 10⁶ runs per side must stay ≤ the claimed ε, and must exceed it when the noise is halved.

Each audit draws fresh samples with fixed seeds, so the outcome is deterministic; for a correct
mechanism the lower bound exceeds the claim with probability < 1% over the seeds. Distinguishing
events are fixed analytically from the mechanism's form (never from the audited samples).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import norm

from dpbench.privacy.accountants import PureDPAccountant, RDPAccountant
from dpbench.privacy.audit import epsilon_lower_bound
from dpbench.privacy.calibrate import gaussian_noise_for_budget
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.mechanisms import (
    gaussian_mechanism,
    laplace_mechanism,
    sample_above_threshold,
)

pytestmark = [
    pytest.mark.statistical,
    pytest.mark.xdist_group("privacy.test_statistical"),  # its module-scoped fixture is made once, on one worker,
]

N = 1_000_000
CONFIDENCE = 0.99
EPSILON = 1.0
DELTA = 1e-5
SENSITIVITY = 1.0


def audit(in_event_d: np.ndarray, in_event_d_prime: np.ndarray, delta: float = 0.0) -> float:
    """The 99% lower bound on ln((P[M(D) ∈ S] − δ) / P[M(D′) ∈ S]) from the indicator samples."""
    return epsilon_lower_bound(
        int(in_event_d.sum()),
        in_event_d.size,
        int(in_event_d_prime.sum()),
        in_event_d_prime.size,
        delta=delta,
        confidence=CONFIDENCE,
    )


# --- Laplace mechanism, pure ε -------------------------------------------------------------------


def laplace_audit(mechanism_epsilon: float) -> float:
    """f(D) = 0, f(D′) = Δ. The density ratio p_D/p_D′ = e^{ε} on all of S = {x ≤ 0}, its maximum, and S
    is the most probable such set: the analytically best event, with P_D[S]/P_D′[S] = e^{ε} exactly."""
    samples = [
        laplace_mechanism(
            np.full(N, value),
            sensitivity=SENSITIVITY,
            epsilon=mechanism_epsilon,
            rng=np.random.default_rng(seed),
            ledger=Ledger(10.0, DELTA, PureDPAccountant()),
        )
        for value, seed in ((0.0, 101), (SENSITIVITY, 102))
    ]
    return audit(samples[0] <= 0.0, samples[1] <= 0.0)


def test_laplace_audit_within_claim():
    eps_hat = laplace_audit(EPSILON)
    assert 0.9 * EPSILON < eps_hat <= EPSILON, eps_hat


def test_laplace_audit_catches_halved_noise():
    eps_hat = laplace_audit(2.0 * EPSILON)  # half the noise, same claim
    assert eps_hat > EPSILON, eps_hat


# --- Gaussian mechanism, (ε, δ) from the RDP calibration -----------------------------------------


def best_gaussian_threshold(std: float) -> float:
    """The t maximising the *expected* audit bound for S = {x ≤ t}, f(D) = 0, f(D′) = Δ, computed
    from the Gaussian CDFs of the mechanism under test (no samples)."""
    grid = np.linspace(-8.0 * std, SENSITIVITY / 2, 400)
    p1, p0 = norm.cdf(grid / std), norm.cdf((grid - SENSITIVITY) / std)
    expected = [
        epsilon_lower_bound(int(N * a), N, int(N * b), N, delta=DELTA, confidence=CONFIDENCE) for a, b in zip(p1, p0)
    ]
    return float(grid[int(np.argmax(expected))])


def gaussian_audit(noise_multiplier: float) -> float:
    t = best_gaussian_threshold(noise_multiplier * SENSITIVITY)
    samples = [
        gaussian_mechanism(
            np.full(N, value),
            sensitivity=SENSITIVITY,
            noise_multiplier=noise_multiplier,
            rng=np.random.default_rng(seed),
            ledger=Ledger(10.0, DELTA, RDPAccountant()),
        )
        for value, seed in ((0.0, 201), (SENSITIVITY, 202))
    ]
    return audit(samples[0] <= t, samples[1] <= t, delta=DELTA)


@pytest.fixture(scope="module")
def calibrated_sigma() -> float:
    return gaussian_noise_for_budget(EPSILON, DELTA)


def test_gaussian_audit_within_claim(calibrated_sigma):
    eps_hat = gaussian_audit(calibrated_sigma)
    assert 0.3 * EPSILON < eps_hat <= EPSILON, eps_hat


def test_gaussian_audit_catches_halved_noise(calibrated_sigma):
    eps_hat = gaussian_audit(calibrated_sigma / 2.0)
    assert eps_hat > EPSILON, eps_hat


# --- Laplace AboveThreshold, pure ε --------------------------------------------------------------

# chen_lee App. B's worst case: 8 ⊥ queries where D′ is Δ higher, then one ⊤ query where D is Δ
# higher; S = {first ⊤ at index 8}. Chosen analytically: among m ≤ 20 such queries and shifts on a
# grid, the exact output law (quadrature over the threshold noise) gives this pair the largest
# expected audit bound, P_D[S]/P_D′[S] = e^{0.984} at ε = 1 (and e^{1.98} with halved noise).
SVT_D = np.array([0.0] * 8 + [0.0])
SVT_D_PRIME = np.array([SENSITIVITY] * 8 + [-SENSITIVITY])
SVT_EVENT = 8


def svt_audit(mechanism_epsilon: float) -> float:
    runs = [
        sample_above_threshold(
            queries,
            0.0,
            sensitivity=SENSITIVITY,
            rng=np.random.default_rng(seed),
            size=N,
            noise="laplace",
            epsilon=mechanism_epsilon,
        )
        for queries, seed in ((SVT_D, 301), (SVT_D_PRIME, 302))
    ]
    return audit(runs[0] == SVT_EVENT, runs[1] == SVT_EVENT)


def test_above_threshold_pair_is_neighbouring():
    assert np.max(np.abs(SVT_D - SVT_D_PRIME)) <= SENSITIVITY


def test_above_threshold_audit_within_claim():
    eps_hat = svt_audit(EPSILON)
    assert 0.8 * EPSILON < eps_hat <= EPSILON, eps_hat


def test_above_threshold_audit_catches_halved_noise():
    eps_hat = svt_audit(2.0 * EPSILON)  # threshold noise and query noise both halved
    assert eps_hat > EPSILON, eps_hat
