"""Random-walk Metropolis on a box, R independent chains at once (han_pwa Sec. 5.1).

han_pwa samples the exponential mechanism (Thm 19) "using the Metropolis algorithm with a
multivariate Gaussian proposal distribution", Σ = ηc·I with η = 0.1, and takes the state after
5000 steps as the sample. Here every chain is a row of an R × d array: each step draws R proposals
y = x + σ·z, evaluates the log-density of all of them in one call, and accepts or rejects all
rows at once. A proposal outside the box has target density 0 and is always rejected (the chain
stays put), which keeps the target's restriction to P exact.

Acceptance uses an exponential variate instead of log U: accept iff E > −(log π(y) − log π(x)),
E ~ Exp(1), which has probability min(1, π(y)/π(x)) and never takes the log of 0.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpbench.privacy._checks import check_count, check_generator, check_positive

__all__ = ["MetropolisResult", "metropolis_box"]

_BLOCK_ELEMENTS = 1 << 20  # proposal noise is drawn for several steps at once, ~8 MB at a time


@dataclass(frozen=True)
class MetropolisResult:
    """Final states ``x`` (R × d) and each chain's fraction of accepted proposals (R,)."""

    x: np.ndarray
    acceptance_rate: np.ndarray


def metropolis_box(
    log_density: Callable[[np.ndarray], np.ndarray],
    x0: np.ndarray,
    *,
    half_width: float,
    proposal_std: float,
    n_steps: int,
    rng: np.random.Generator,
) -> MetropolisResult:
    """Run R Metropolis chains with isotropic Gaussian proposals N(x, σ²I) for ``n_steps`` steps,
    targeting π ∝ exp(``log_density``) restricted to the box {−c ⪯ x ⪯ c}, c = ``half_width``.

    ``log_density`` maps an R × d array to R log-densities (up to a common constant). It is called
    on every proposal, inside the box or not; the values of proposals outside are ignored (they
    are rejected). ``x0`` (R × d) must lie in the box. Returns the state after the last step and
    the acceptance rates.
    """
    c = check_positive("half_width", half_width)
    sigma = check_positive("proposal_std", proposal_std)
    n_steps = check_count("n_steps", n_steps)
    check_generator(rng)
    x = np.array(x0, dtype=np.float64)
    if x.ndim != 2 or x.size == 0:
        raise ValueError(f"x0 must be a non-empty R x d array, got shape {x.shape}")
    if not np.all(np.abs(x) <= c):
        raise ValueError(f"every starting point must lie in the box [-{c}, {c}]^d")
    R, d = x.shape
    log_p = np.asarray(log_density(x), dtype=np.float64)
    if log_p.shape != (R,) or not np.all(np.isfinite(log_p)):
        raise ValueError(f"log_density must return R = {R} finite values at the starting points")
    accepted = np.zeros(R, dtype=np.int64)
    block = max(1, min(n_steps, _BLOCK_ELEMENTS // (R * d)))
    done = 0
    while done < n_steps:
        steps = min(block, n_steps - done)
        noise = rng.standard_normal((steps, R, d))
        noise *= sigma
        exponentials = rng.standard_exponential((steps, R))
        for s in range(steps):
            y = x + noise[s]
            log_q = np.asarray(log_density(y), dtype=np.float64)
            accept = (np.abs(y) <= c).all(axis=1) & (exponentials[s] > log_p - log_q)
            x[accept] = y[accept]
            log_p[accept] = log_q[accept]
            accepted += accept
        done += steps
    return MetropolisResult(x=x, acceptance_rate=accepted / n_steps)
