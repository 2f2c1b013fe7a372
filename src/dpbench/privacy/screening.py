"""Report-noisy-max, the exponential mechanism and AboveThreshold decided from approximate values where their
error bounds allow it.

Report-noisy-max releases only the index argmax_j fl(v_j + L_j) of the noisy values. Its noise L is drawn
independently of the values v, so it can be drawn first; then, if approximate values v̂ with a bound
|v_j − v̂_j| ≤ E_j (v_j the float64 value the exact computation would return) already separate the largest
noisy value from every other, that index is the one the exact computation would release, and the exact
values are never needed. Otherwise finer approximations are tried, if any (``ScreenedValues.finer``), then the
exact values are computed and the index taken from them as always. Either way
the index, the draws and the charge are the exact mechanism's, bit for bit: the screening changes the cost,
never the release (Dwork & Roth 2014, Claim 3.9, applies unchanged).

The exponential mechanism is report-noisy-max of its log-weights with Gumbel noise (the Gumbel-max trick), so
bounds on the utilities give bounds on the log-weights (:func:`~dpbench.privacy.samplers.screened_log_weights`)
and the same argument applies. A finer level is told which entries the coarser one left able to win
(:meth:`ScreenedValues.contenders`), so that it may compute only those.

Separation is checked with margins for the rounding of the additions: fl(v_j + L_j) lies within
E_j + 2⁻⁵⁰(|v̂_j| + E_j + |L_j|) of the computed v̂_j + L_j, so when the lower end of the largest exceeds the
upper end of every other, the exact noisy values have the same unique maximum.

AboveThreshold (chen_lee Alg. 1) releases the first i with fl(q_i + ν_i) ≥ T̂; its noise too is drawn before
any query is asked. Rounding is monotone and T̂ is a float, so when q̂_i + ν_i lies farther from T̂ than
|q_i − q̂_i| plus the rounding margins, the test's outcome is the exact value's (:class:`ScreenedValue`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

ROUNDING = 2.0**-50  # relative margin for fl(v + L), fl(v̂ + L) (each within 2⁻⁵³ of the sum), four times over


@dataclass(frozen=True)
class ScreenedValues:
    """Values known to within ``error`` (|exact − approx| ≤ error, entrywise), and how to compute them exactly;
    ``finer``, if given, computes tighter bounds on the same exact values (a dearer approximation tried before
    the exact values are). It is called with the contenders (a boolean mask: the entries these bounds leave
    able to win, :meth:`contenders`), so that it may tighten only those."""

    approx: np.ndarray
    error: np.ndarray
    exact: Callable[[], np.ndarray]
    finer: Callable[[np.ndarray], ScreenedValues] | None = None

    def argmax(self, noise: np.ndarray) -> int:
        """argmax of exact + ``noise``: decided by these bounds, else by each finer one in turn, else from the
        exact values."""
        level = self
        while (decided := level.decide(noise)) is None:
            if level.finer is None:
                return int(np.argmax(level.exact() + noise))
            level = level.finer(level.contenders(noise))
        return decided

    def decide(self, noise: np.ndarray) -> int | None:
        """argmax of exact + ``noise`` if the bounds determine it, else None (module docstring)."""
        noisy, slack = self._noisy(noise)
        if slack is None:
            return None
        best = int(np.argmax(noisy))
        if noisy.size == 1:
            return best
        others = np.delete(noisy + slack, best)
        return best if noisy[best] - slack[best] > others.max() else None

    def contenders(self, noise: np.ndarray) -> np.ndarray:
        """A boolean mask of the entries that may be the argmax of exact + ``noise``: those whose noisy upper end
        reaches the largest noisy lower end (every entry, when a bound is not finite)."""
        noisy, slack = self._noisy(noise)
        if slack is None:
            return np.ones(np.shape(noisy), dtype=bool)
        return noisy + slack >= (noisy - slack).max()

    def _noisy(self, noise: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """approx + ``noise`` and the slack around each sum (None when a sum or a bound is not finite)."""
        noisy = self.approx + noise
        if noisy.ndim != 1 or not (np.all(np.isfinite(noisy)) and np.all(np.isfinite(self.error))):
            return noisy, None
        return noisy, self.error + ROUNDING * (np.abs(self.approx) + self.error + np.abs(noise))


@dataclass(frozen=True)
class ScreenedValue:
    """A value known to within ``error`` (|exact − approx| ≤ error), and how to compute it exactly; ``finer``, if
    given, computes a tighter bound on the same exact value (tried before the exact value is)."""

    approx: float
    error: float
    exact: Callable[[], float]
    finer: Callable[[], ScreenedValue] | None = None

    def is_above(self, noise: float, threshold: float) -> bool | None:
        """:meth:`decide_above` by this bound, else by each finer one in turn; None if none decides."""
        level: ScreenedValue | None = self
        while level is not None:
            decided = level.decide_above(noise, threshold)
            if decided is not None:
                return decided
            level = level.finer() if level.finer is not None else None
        return None

    def decide_above(self, noise: float, threshold: float) -> bool | None:
        """Whether fl(exact + ``noise``) ≥ ``threshold`` (AboveThreshold's test), if the bound determines it,
        else None (module docstring)."""
        noisy = self.approx + noise
        if not (math.isfinite(noisy) and math.isfinite(self.error) and math.isfinite(threshold)):
            return None
        slack = self.error + ROUNDING * (abs(self.approx) + self.error + abs(noise) + abs(threshold))
        if noisy - slack > threshold:
            return True
        if noisy + slack < threshold:
            return False
        return None
