"""The primal step (6) of liu_dda in closed form, for d(x) = ½‖x‖² and the two regularisers of Sec. 5.

    x = argmin_x ⟨z, x⟩ + w·h(x) + γ·d(x),   w = ι·A_{t+1}, γ = γ_{t+1}   (eq. (6))

* h(x) = (μ/2)‖x‖² (Sec. 5.2): z + (wμ + γ)x = 0, so x = −z/(wμ + γ);
* h(x) = φ‖x‖₁ (Sec. 5.3): separable, x = −soft_threshold(z, wφ)/γ, soft_threshold(z, τ) =
  sign(z)·max(|z| − τ, 0).

Every function takes z as one vector or as a k × m array of rows (one per active node) sharing
the scalars w and γ, and can write into a preallocated ``out`` (the simulator's hot loop).
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from dpbench.privacy._checks import check_positive

__all__ = ["REGULARISERS", "dual_averaging_step", "prox_l1", "prox_l2", "soft_threshold"]

REGULARISERS = ("l2", "l1")


def _check_nonnegative(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not (math.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)


def soft_threshold(z, tau: float, *, out: np.ndarray | None = None) -> np.ndarray:
    """sign(z)·max(|z| − τ, 0), elementwise (τ ≥ 0); written into ``out`` if given (not overlapping z)."""
    tau = _check_nonnegative("tau", tau)
    z = np.asarray(z, dtype=np.float64)
    shrunk = np.abs(z, out=np.empty_like(z) if out is None else out)
    shrunk -= tau
    np.maximum(shrunk, 0.0, out=shrunk)
    return np.copysign(shrunk, z, out=shrunk)


def prox_l2(z, *, weight: float, gamma: float, mu: float, out: np.ndarray | None = None) -> np.ndarray:
    """argmin ⟨z, x⟩ + weight·(μ/2)‖x‖² + γ·½‖x‖² = −z/(weight·μ + γ) (eq. (6), h of Sec. 5.2)."""
    mu = check_positive("mu", mu)
    denominator = _check_nonnegative("weight", weight) * mu + _check_nonnegative("gamma", gamma)
    if denominator <= 0:
        raise ValueError(f"weight·mu + gamma must be > 0, got weight = {weight!r}, gamma = {gamma!r}")
    return np.divide(np.asarray(z, dtype=np.float64), -denominator, out=out)


def prox_l1(z, *, weight: float, gamma: float, phi: float, out: np.ndarray | None = None) -> np.ndarray:
    """argmin ⟨z, x⟩ + weight·φ‖x‖₁ + γ·½‖x‖² = −soft_threshold(z, weight·φ)/γ (eq. (6), h of Sec. 5.3)."""
    phi = check_positive("phi", phi)
    gamma = check_positive("gamma", gamma)
    shrunk = soft_threshold(z, _check_nonnegative("weight", weight) * phi, out=out)
    return np.divide(shrunk, -gamma, out=shrunk)


def dual_averaging_step(
    z, *, regulariser: str, strength: float, weight: float, gamma: float, out: np.ndarray | None = None
) -> np.ndarray:
    """Eq. (6) for ``regulariser`` "l2" (h = (strength/2)‖x‖²) or "l1" (h = strength·‖x‖₁); the result
    goes into ``out`` (same shape as z, not overlapping it) if given."""
    if regulariser == "l2":
        return prox_l2(z, weight=weight, gamma=gamma, mu=strength, out=out)
    if regulariser == "l1":
        return prox_l1(z, weight=weight, gamma=gamma, phi=strength, out=out)
    raise ValueError(f"regulariser must be one of {', '.join(REGULARISERS)}, got {regulariser!r}")
