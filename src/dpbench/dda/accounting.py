"""Privacy accounting for Algorithm 1 of liu_dda with a numerical (RDP) accountant instead of Theorem 1.

Why. Theorem 1's chain (:mod:`dpbench.dda.noise`) certifies only δ ≥ ε/√5 and needs
T ≥ 5q²ε²/(4ι²), which no experiment of Sec. 5 meets (≈10¹⁰ iterations for rcv1/epsilon). This
module prices the same releases with the RDP accountant, for any T and small δ.

Threat model (stated, and more conservative than the paper's). Neighbouring datasets differ in one
sample of one node (replace-one, Sec. 2). The adversary sees every message, hence which nodes are
active at every iteration; the gossip is data-independent, so we draw it first
(:func:`~dpbench.dda.gossip.edge_schedule`) and count, per node, the iterations K_i in which it
releases. When node i is active it releases ζ_i = ĝ_i(ξ) + N(0, σ²I) with ξ one of its q samples
drawn uniformly: a Gaussian of L2 sensitivity 2L (Assumption 3, ‖ĝ‖ ≤ L) on a sample of size 1
drawn without replacement from q — ``SampledWithoutReplacementEvent(1, q, GaussianEvent(σ/(2L)))``,
priced by Wang, Balle & Kasiviswanathan 2019 Thm 9. Whichever node holds the differing sample, it
releases at most K = max_i K_i times, and the releases of the other nodes do not depend on it given
the public schedule and the past releases (adaptive composition); the run is charged K copies.

We do not use the paper's amplification by node sampling (ι): it treats "node i silent" as the
unsampled branch of a subsampled mechanism, but a silent node is not a neighbouring output of the
Gaussian release (the divergence between "no message" and "a message" is infinite), so the
subsampling theorems do not apply to it once messages are visible. The all-nodes baseline releases
at every iteration: K = T.
"""

from __future__ import annotations

import math

import numpy as np

from dpbench.dda.gossip import activation_counts
from dpbench.privacy._checks import check_count, check_delta, check_positive
from dpbench.privacy.accountants import RDPAccountant
from dpbench.privacy.calibrate import calibrate_noise
from dpbench.privacy.events import GaussianEvent, SampledWithoutReplacementEvent

__all__ = ["release_event", "releases_per_sample", "sigma_for_budget"]


def release_event(sigma: float, *, lipschitz: float, q: int) -> SampledWithoutReplacementEvent:
    """One release of an active node, seen from one of its q samples (module docstring): the Gaussian
    ĝ(ξ) + N(0, σ²I) with L2 sensitivity 2L, on ξ drawn uniformly from the node's q samples."""
    sigma, lip = check_positive("sigma", sigma), check_positive("lipschitz", lipschitz)
    return SampledWithoutReplacementEvent(1, check_count("q", q), GaussianEvent(sigma / (2.0 * lip)))


def releases_per_sample(n: int, schedule: np.ndarray | None, iterations: int) -> int:
    """K = max_i K_i, the most releases any node makes under ``schedule`` (iterations × n_edges × 2;
    None for the all-nodes baseline, where every node releases at every iteration: K = T)."""
    steps = check_count("iterations", iterations)
    if schedule is None:
        return steps
    if np.shape(schedule)[0] != steps:
        raise ValueError(f"the schedule has {np.shape(schedule)[0]} iterations, expected {steps}")
    return int(activation_counts(n, schedule).max())


def sigma_for_budget(
    epsilon: float, delta: float, *, releases: int, lipschitz: float, q: int, accountant: RDPAccountant | None = None
) -> float:
    """The smallest σ (relative precision 1e-6, never below the exact value) such that ``releases``
    copies of :func:`release_event` fit (ε, δ) under ``accountant`` (default: an RDPAccountant with
    the tight conversion) — what a fresh :class:`~dpbench.privacy.ledger.Ledger` on it charging
    them would compute."""
    eps, d = check_positive("epsilon", epsilon), check_delta(delta)
    k, lip, q = check_count("releases", releases), check_positive("lipschitz", lipschitz), check_count("q", q)
    if accountant is None:
        accountant = RDPAccountant()
    elif not isinstance(accountant, RDPAccountant):
        raise ValueError(f"accountant must be an RDPAccountant, got {type(accountant).__name__}")

    def epsilon_of(noise_multiplier: float) -> float:
        event = SampledWithoutReplacementEvent(1, q, GaussianEvent(noise_multiplier))
        return accountant.epsilon(accountant.zero() + k * accountant.cost(event), d)

    sigma = 2.0 * lip * calibrate_noise(epsilon_of, eps)
    while epsilon_of(sigma / (2.0 * lip)) > eps:  # σ/(2L) may round below the calibrated multiplier
        sigma = math.nextafter(sigma, math.inf)
    return sigma
