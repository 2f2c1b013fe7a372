"""The black-box auditor: a high-confidence lower bound on the ε of a mechanism from its outputs.

Method (Jagielski, Ullman & Oprea 2020, Sec. 3; the Clopper–Pearson bound of
:func:`dpbench.privacy.audit.epsilon_lower_bound`). A :class:`Target` samples a mechanism M on
the two datasets D, D′ of a worst-case neighbouring pair. :func:`audit`

1. draws a *calibration* sample from each side and picks a distinguishing event S and a direction
   (S is likelier under D than under D′, or the reverse) that maximise the bound the calibration
   draws themselves would give (:mod:`dpbench.audit.events`);
2. draws *fresh* samples of N outputs per side, counts the hits of S, and bounds
   ε̂ = ln((p̂₁ − δ)/p̂₀) from below: a one-sided Clopper–Pearson lower bound on p₁ and upper bound
   on p₀, each at level (1 − confidence)/2, hold jointly with probability ≥ confidence.

An (ε, δ)-DP mechanism has P_D[S] ≤ e^ε P_D′[S] + δ for every S (and with D, D′ swapped), so the
event and direction are fixed before the audit draws exist, and the result exceeds ε with
probability < 1 − confidence. The verdict is "violation" iff it does.

False alarms. Every target and seed gives one such test; :func:`bonferroni_confidence` holds the
family-wise false-alarm rate of a run over all registered targets to ``FAMILY_ALPHA`` = 1% by
testing each at confidence 1 − 1%/(number of registered targets). The bound itself is never
loosened. Seeds are fixed, so a run is deterministic.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpbench.audit.events import Event, choose_event
from dpbench.privacy.audit import epsilon_lower_bound

__all__ = [
    "DEFAULT_N",
    "FAMILY_ALPHA",
    "AuditResult",
    "Sampler",
    "Target",
    "audit",
    "bonferroni_confidence",
]

DEFAULT_N = 1_000_000
FAMILY_ALPHA = 0.01
CALIBRATION_FRACTION = 0.5
"""The calibration sample per side is this fraction of N (at least 1000 draws)."""

Sampler = Callable[[int, int, np.random.Generator], np.ndarray]
"""``sample(side, n, rng)``: n independent outputs of M on D (side 0) or D′ (side 1), shape (n,) or (n, k)."""


@dataclass(frozen=True)
class Target:
    """A mechanism to audit on one neighbouring pair.

    name, epsilon, delta: the mechanism and its claimed (ε, δ) for ONE release on this pair.
    sample: :data:`Sampler`; it must call the repository's own mechanism code (vectorised).
    pair: what D and D′ are, and why they are neighbours.
    proof: the theorem the guarantee comes from, whose worst case the pair realises.
    max_n: a cap on N per side for samplers too slow for the default N (``note`` says why).
    statistic: maps vector outputs (n, k) to scalars; default: the projection onto the difference
        of the two calibration means (:func:`dpbench.audit.events.choose_event`).
    """

    name: str
    epsilon: float
    delta: float
    sample: Sampler
    pair: str
    proof: str
    max_n: int | None = None
    note: str = ""
    statistic: Callable[[np.ndarray], np.ndarray] | None = None

    def sample_d(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n outputs of M(D)."""
        return self.sample(0, n, rng)

    def sample_d_prime(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """n outputs of M(D′)."""
        return self.sample(1, n, rng)


@dataclass(frozen=True)
class AuditResult:
    """One audit: the claim, the lower bound ε̂ on the true ε, and the event it was measured on.

    n is the number of audit draws per side (a calibration sample of ``n_calibration`` per side
    came first); hits = (k₁, k₀) are the draws in S on the side S favours and on the other;
    verdict is "violation" iff eps_lower_bound > eps_claimed.
    """

    name: str
    eps_claimed: float
    delta: float
    eps_lower_bound: float
    n: int
    event: str
    verdict: str
    confidence: float
    n_calibration: int
    hits: tuple[int, int]
    seconds: float
    """Wall time of the audit (the suite adds the time to build the target)."""

    @property
    def violation(self) -> bool:
        return self.verdict == "violation"


def bonferroni_confidence(n_tests: int, family_alpha: float = FAMILY_ALPHA) -> float:
    """1 − α/m: testing each of m targets at this level keeps the chance of any false alarm ≤ α."""
    if n_tests < 1 or not 0.0 < family_alpha < 1.0:
        raise ValueError(f"need n_tests >= 1 and family_alpha in (0, 1), got {n_tests!r}, {family_alpha!r}")
    return 1.0 - family_alpha / n_tests


def _streams(seed: int, name: str) -> list[np.random.Generator]:
    """Four independent generators (calibration D, D′; audit D, D′) from (seed, name): the same
    seed gives every target its own streams, and a target the same streams in any selection."""
    children = np.random.SeedSequence([int(seed), zlib.crc32(name.encode())]).spawn(4)
    return [np.random.default_rng(child) for child in children]


def _draw(target: Target, side: int, n: int, rng: np.random.Generator) -> np.ndarray:
    out = np.asarray(target.sample(side, n, rng))
    if out.shape[:1] != (n,) or out.ndim > 2:
        raise ValueError(
            f"{target.name}: sample(side={side}, n={n}) returned shape {out.shape}, expected ({n},) or ({n}, k)"
        )
    return out


def audit(target: Target, n: int = DEFAULT_N, seed: int = 0, *, confidence: float = 0.99) -> AuditResult:
    """Audit ``target`` with N = min(n, target.max_n) fresh draws per side (module docstring)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1000:
        raise ValueError(f"n must be an integer >= 1000, got {n!r}")
    started = time.perf_counter()
    n_audit = min(n, target.max_n) if target.max_n else n
    n_cal = max(1000, int(CALIBRATION_FRACTION * n_audit))
    cal_d, cal_p, aud_d, aud_p = _streams(seed, target.name)
    event: Event = choose_event(
        _draw(target, 0, n_cal, cal_d),
        _draw(target, 1, n_cal, cal_p),
        delta=target.delta,
        confidence=confidence,
        statistic=target.statistic,
    )
    in_d = int(event.contains(_draw(target, 0, n_audit, aud_d)).sum())
    in_p = int(event.contains(_draw(target, 1, n_audit, aud_p)).sum())
    k1, k0 = (in_p, in_d) if event.swap else (in_d, in_p)
    bound = epsilon_lower_bound(k1, n_audit, k0, n_audit, delta=target.delta, confidence=confidence)
    return AuditResult(
        name=target.name,
        eps_claimed=float(target.epsilon),
        delta=float(target.delta),
        eps_lower_bound=float(bound),
        n=n_audit,
        event=event.description,
        verdict="violation" if bound > target.epsilon else "ok",
        confidence=confidence,
        n_calibration=n_cal,
        hits=(k1, k0),
        seconds=time.perf_counter() - started,
    )
