"""Noise calibration: the smallest noise whose privacy cost fits a target ε — never one that overshoots."""

from __future__ import annotations

import math
from collections.abc import Callable

from dpbench.privacy._checks import check_count, check_delta, check_positive, check_rate
from dpbench.privacy.accountants import Accountant, RDPAccountant
from dpbench.privacy.events import GaussianEvent, PoissonSampledEvent
from dpbench.recent_answers import RecentAnswers

_MIN_NOISE = 1e-12
_MAX_NOISE = 1e12
_GAUSSIAN_NOISE = RecentAnswers(1024)  # gaussian_noise_for_budget's answers, by everything that decides them


def calibrate_noise(
    epsilon_of: Callable[[float], float],
    target_epsilon: float,
    *,
    lower: float = 1e-3,
    upper: float = 1e3,
    rtol: float = 1e-6,
) -> float:
    """The smallest noise (to relative precision ``rtol``) with ``epsilon_of(noise) <= target_epsilon``.

    ``epsilon_of`` must be non-increasing in the noise. The bracket [lower, upper] is widened by
    factors of 10 until ``lower`` is infeasible and ``upper`` feasible (within [1e-12, 1e12]; if
    even 1e-12 fits, 1e-12 is returned), then bisected geometrically. The feasible end of the
    bracket is returned, so the result never overshoots the target.

    The bisection's answer is computed with fewer evaluations than it makes: regula falsi on
    log ε(log noise) (Illinois variant) first narrows what is known — the largest noise seen not to
    fit and the smallest seen to fit — and the bisection then takes every decision at a midpoint
    outside that interval from monotonicity alone. Its decisions, hence its result, are exactly
    those of the plain bisection (tests/privacy/test_calibrate.py); about 12 evaluations of
    ``epsilon_of`` instead of 26 at rtol = 1e-6.
    """
    target = check_positive("target_epsilon", target_epsilon)
    lo, hi = check_positive("lower", lower), check_positive("upper", upper)
    if not lo < hi:
        raise ValueError(f"lower must be < upper, got lower={lower!r}, upper={upper!r}")
    if not 1e-12 <= rtol < 1.0:
        raise ValueError(f"rtol must be in [1e-12, 1), got {rtol!r}")

    known = _Known()

    def fits(noise: float) -> bool:
        eps = float(epsilon_of(noise))
        if math.isnan(eps):
            raise ValueError(f"epsilon_of({noise!r}) returned NaN")
        known.learn(noise, eps, target)
        return eps <= target

    while not fits(hi):
        if hi >= _MAX_NOISE:
            raise ValueError(f"target_epsilon={target!r} is unreachable: even noise {hi:g} exceeds it")
        lo, hi = hi, hi * 10.0
    while fits(lo):
        if lo <= _MIN_NOISE:
            return lo
        lo, hi = lo / 10.0, lo
    _narrow(fits, known, target, width=1.0 + rtol / 4.0)
    while hi > lo * (1.0 + rtol):
        mid = math.sqrt(lo * hi)
        if known.fits(mid) if known.decides(mid) else fits(mid):
            hi = mid
        else:
            lo = mid
    if not (known.fits(hi) if known.decides(hi) else fits(hi)):
        raise AssertionError(f"calibrate_noise: returned noise {hi!r} does not fit target_epsilon={target!r}")
    return hi


class _Known:
    """What the evaluations so far imply for a non-increasing ε(noise): every noise ≤ ``infeasible``
    misses the target, every noise ≥ ``feasible`` meets it; (noise, ε) at both ends for interpolation."""

    def __init__(self) -> None:
        self.infeasible, self.eps_infeasible = 0.0, math.inf
        self.feasible, self.eps_feasible = math.inf, 0.0

    def learn(self, noise: float, eps: float, target: float) -> None:
        if eps <= target and noise < self.feasible:
            self.feasible, self.eps_feasible = noise, eps
        elif eps > target and noise > self.infeasible:
            self.infeasible, self.eps_infeasible = noise, eps

    def decides(self, noise: float) -> bool:
        return noise <= self.infeasible or noise >= self.feasible

    def fits(self, noise: float) -> bool:
        return noise >= self.feasible


def _narrow(fits: Callable[[float], bool], known: _Known, target: float, width: float, max_steps: int = 30) -> None:
    """Shrink ``known`` to feasible/infeasible ≤ ``width`` by Illinois regula falsi on (log noise,
    log ε − log target), falling back to the geometric midpoint where ε is infinite or zero."""
    weight_lo = weight_hi = 1.0
    last = None
    for _ in range(max_steps):
        lo, hi = known.infeasible, known.feasible
        if hi <= lo * width:
            return
        x_lo, x_hi = math.log(lo), math.log(hi)
        if known.eps_feasible > 0.0 and math.isfinite(known.eps_infeasible):
            f_lo = weight_lo * (math.log(known.eps_infeasible) - math.log(target))  # > 0
            f_hi = weight_hi * (math.log(known.eps_feasible) - math.log(target))  # ≤ 0
            x = x_hi - f_hi * (x_hi - x_lo) / (f_hi - f_lo)
            x = min(max(x, x_lo + 1e-3 * (x_hi - x_lo)), x_hi - 1e-3 * (x_hi - x_lo))  # stay inside
        else:
            x = 0.5 * (x_lo + x_hi)
        side = fits(math.exp(x))  # True: the new point replaced the feasible end
        if side == last:  # the same end moved twice running: halve the weight of the one that stayed
            weight_lo, weight_hi = (weight_lo * 0.5, 1.0) if side else (1.0, weight_hi * 0.5)
        else:
            weight_lo = weight_hi = 1.0
        last = side


def gaussian_noise_for_budget(
    epsilon: float,
    delta: float,
    *,
    steps: int = 1,
    sampling_rate: float = 1.0,
    accountant: Accountant | None = None,
) -> float:
    """The smallest noise multiplier σ such that ``steps`` Gaussian releases, each on a Poisson
    subsample of rate ``sampling_rate``, fit (ε, δ) under ``accountant`` (default :class:`RDPAccountant`).

    The spend is computed exactly as a fresh :class:`~dpbench.privacy.ledger.Ledger` charging
    the event with ``count=steps`` would compute it.
    """
    eps = check_positive("epsilon", epsilon)
    d = check_delta(delta)
    n = check_count("steps", steps)
    q = check_rate(sampling_rate)
    acc = RDPAccountant() if accountant is None else accountant
    key = _rdp_calibration_key(acc, eps, d, n, q)
    if key in _GAUSSIAN_NOISE:
        return _GAUSSIAN_NOISE[key]

    def epsilon_of(sigma: float) -> float:
        event = GaussianEvent(sigma) if q == 1.0 else PoissonSampledEvent(q, GaussianEvent(sigma))
        return acc.epsilon(acc.zero() + n * acc.cost(event), d)

    return _GAUSSIAN_NOISE.remember(key, calibrate_noise(epsilon_of, eps))


def _rdp_calibration_key(accountant: Accountant, *inputs: float) -> tuple | None:
    """What decides :func:`gaussian_noise_for_budget`'s σ under an :class:`RDPAccountant` (its configuration and
    the inputs), so that a repeated calibration — a method fitted again at the same budget, as the audit's tens of
    thousands of fits and a job's folds are — is looked up, not bisected again; None for any other accountant (not
    remembered)."""
    if not isinstance(accountant, RDPAccountant) or (configuration := accountant.configuration_key()) is None:
        return None
    return (*configuration, *inputs)
