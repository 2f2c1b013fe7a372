"""Choosing the distinguishing event S of an audit from a calibration sample (never the audit draws).

Every candidate (S, direction) is scored by the Clopper–Pearson bound the calibration draws
themselves give, ln((p₁,lo − δ)/p₀,hi) at the audit's confidence — the plug-in ratio ln(p̂₁/p̂₀)
penalised for small counts, so a rare outcome with a large but noisy ratio does not win over a
common one with a reliable ratio. The best candidate is returned. Candidates:

* scalar outputs: {x ≤ t} and {x ≥ t} for t on a grid of quantiles of the pooled calibration
  draws, dense in both tails (levels 10⁻⁵ … 1 − 10⁻⁵), favouring D or D′ — the likelihood ratio
  of the additive-noise mechanisms audited here is monotone in x, so the Neyman–Pearson optimal
  events are such half-lines;
* discrete outputs (integer dtype): the sets of the j outcomes with the largest smoothed ratio
  (ĉ₁ + ½)/(ĉ₀ + ½), for every j — the Neyman–Pearson sets of the empirical laws, which include
  the single most telling outcome;
* vector outputs (n, k): reduced to scalars by the target's ``statistic`` or, by default, by the
  projection x·u onto u = the normalised difference of the two calibration means (the direction in
  which the worst-case pair moves the output), then treated as scalars.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta

__all__ = ["Event", "choose_event", "clopper_pearson_bounds"]

_TAIL = np.geomspace(1e-5, 0.5, 90)
QUANTILE_LEVELS = np.unique(np.concatenate([_TAIL, 1.0 - _TAIL]))
MAX_DISCRETE_CANDIDATES = 4096


@dataclass(frozen=True)
class Event:
    """S as a membership test on raw outputs; ``swap`` = S is likelier under D′ (bound P_D′[S] vs P_D[S])."""

    description: str
    swap: bool
    contains: Callable[[np.ndarray], np.ndarray]
    score: float
    """The calibration sample's own bound for this event (what it was chosen by)."""


def clopper_pearson_bounds(k1, n1: int, k0, n0: int, *, delta: float, confidence: float) -> np.ndarray:
    """Vectorised ln((p₁,lo − δ)/p₀,hi) with one-sided Clopper–Pearson bounds at level (1 − confidence)/2
    each (−inf where p₁,lo ≤ δ): :func:`dpbench.privacy.audit.epsilon_lower_bound` for arrays of counts."""
    k1, k0 = np.asarray(k1, dtype=float), np.asarray(k0, dtype=float)
    tail = (1.0 - confidence) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        p1_lo = np.where(k1 > 0, beta.ppf(tail, k1, n1 - k1 + 1), 0.0)
        p0_hi = np.where(k0 < n0, beta.ppf(1.0 - tail, k0 + 1, n0 - k0), 1.0)
        return np.where(p1_lo > delta, np.log((p1_lo - delta) / p0_hi), -np.inf)


def _sides(swap: bool) -> str:
    return "D′ vs D" if swap else "D vs D′"


def _format(value: float) -> str:
    return f"{value:.4g}"


def _threshold_event(a: np.ndarray, b: np.ndarray, *, delta: float, confidence: float, label: str, reduce):
    """The best half-line {s ≤ t} / {s ≥ t} on scalars a (from D) and b (from D′)."""
    a, b = np.sort(a), np.sort(b)
    pooled = np.sort(np.concatenate([a, b]))
    t = np.unique(pooled[np.minimum((QUANTILE_LEVELS * pooled.size).astype(np.int64), pooled.size - 1)])
    le = np.searchsorted(a, t, "right"), np.searchsorted(b, t, "right")
    ge = a.size - np.searchsorted(a, t, "left"), b.size - np.searchsorted(b, t, "left")
    best = None
    for upper, (ca, cb) in ((False, le), (True, ge)):
        for swap, (k1, n1, k0, n0) in ((False, (ca, a.size, cb, b.size)), (True, (cb, b.size, ca, a.size))):
            scores = clopper_pearson_bounds(k1, n1, k0, n0, delta=delta, confidence=confidence)
            i = int(np.argmax(scores))
            if best is None or scores[i] > best[0]:
                best = (float(scores[i]), float(t[i]), upper, swap)
    score, threshold, upper, swap = best

    def contains(x: np.ndarray) -> np.ndarray:
        s = reduce(x)
        return s >= threshold if upper else s <= threshold

    text = f"{label} {'≥' if upper else '≤'} {_format(threshold)}: {_sides(swap)}"
    return Event(text, swap, contains, score)


def _discrete_event(a: np.ndarray, b: np.ndarray, *, delta: float, confidence: float) -> Event:
    """The best set of top-ratio outcomes (module docstring) for integer outputs a (D) and b (D′)."""
    values = np.unique(np.concatenate([np.unique(a), np.unique(b)]))
    counts = [np.bincount(np.searchsorted(values, x), minlength=values.size) for x in (a, b)]
    best = None
    for swap in (False, True):
        c1, c0 = (counts[1], counts[0]) if swap else (counts[0], counts[1])
        n1, n0 = (b.size, a.size) if swap else (a.size, b.size)
        order = np.argsort(-(c1 + 0.5) / (c0 + 0.5), kind="stable")[:MAX_DISCRETE_CANDIDATES]
        k1, k0 = np.cumsum(c1[order]), np.cumsum(c0[order])
        scores = clopper_pearson_bounds(k1, n1, k0, n0, delta=delta, confidence=confidence)
        j = int(np.argmax(scores))
        if best is None or scores[j] > best[0]:
            best = (float(scores[j]), np.sort(values[order[: j + 1]]), swap)
    score, chosen, swap = best
    shown = ", ".join(str(int(v)) for v in chosen[:6]) + (f", … ({chosen.size} values)" if chosen.size > 6 else "")
    return Event(f"x ∈ {{{shown}}}: {_sides(swap)}", swap, lambda x: np.isin(x, chosen), score)


def _projection(a: np.ndarray, b: np.ndarray) -> tuple[Callable[[np.ndarray], np.ndarray], str]:
    direction = b.mean(axis=0) - a.mean(axis=0)
    norm = float(np.linalg.norm(direction))
    if not norm > 0:
        direction, norm = np.eye(a.shape[1])[0], 1.0
    u = direction / norm
    shown = ", ".join(_format(v) for v in u[:4]) + (", …" if u.size > 4 else "")
    return (lambda x: np.asarray(x, dtype=float) @ u), f"x·u [u = ({shown})]"


def choose_event(
    cal_d: np.ndarray,
    cal_d_prime: np.ndarray,
    *,
    delta: float,
    confidence: float,
    statistic: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Event:
    """The event (and direction) maximising the calibration sample's own bound (module docstring)."""
    a, b = np.asarray(cal_d), np.asarray(cal_d_prime)
    if a.ndim == 1 and b.ndim == 1 and np.issubdtype(a.dtype, np.integer) and np.issubdtype(b.dtype, np.integer):
        return _discrete_event(a, b, delta=delta, confidence=confidence)
    if statistic is not None:
        reduce, label = statistic, "T(x)"
    elif a.ndim == 2 and a.shape[1] > 1:
        reduce, label = _projection(a, b)
    else:
        reduce, label = (lambda x: np.asarray(x, dtype=float).reshape(len(x))), "x"
    return _threshold_event(reduce(a), reduce(b), delta=delta, confidence=confidence, label=label, reduce=reduce)
