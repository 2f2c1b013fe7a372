"""Clipped logistic loss sums computed cheaply, with a rigorous bound on their distance to the exact ones.

Three private selections look at logistic loss sums S(v) = Σ_i min(ℓ(y_i x_iᵀv), C) only through a noisy
comparison: DP-AGD's noisy min over candidate steps (report-noisy-max), NoisyBTLS's Armijo queries
(AboveThreshold) and PrivGene's choice among single-coordinate moves (the exponential mechanism). Their noise
does not depend on the sums, so an approximation with an error bound decides the comparison whenever the bound
cannot change its outcome, and the exact float64 sums are computed only otherwise
(:mod:`dpbench.privacy.screening`). The released output is the exact computation's, bit for bit.

For the logistic loss the exp and log1p of every margin are the float64 computation's floor; here the
margins a − η·b are formed and the losses taken in float32 (SIMD exp and log), and summed in float64
(:class:`LogisticMargins`), or the sums at many points are bounded from one or a few anchor points by Taylor's
theorem (:class:`LogisticLineBounds` along a line, :class:`CoordinateMoveBounds` along every axis), then summed
directly in float64 only where those bounds leave the outcome open.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from dpbench.problems.losses import LogisticLoss
from dpbench.problems.products import matvec, rmatvec, row_blocks, row_l1_norms

_BLOCK_ENTRIES = 1 << 20  # float32 blocks of ≤ 4 MB: few, long passes (Adult × 21 steps: one)
_FLOAT32_MARGIN = 2.0**-16
"""Per row and step, the float32 losses are within 2⁻¹⁶(1 + C + |a_i| + η|b_i|) of the float64 ones: the
float32 margin is within 3·2⁻²⁴(|a| + η|b|), exp, 1 + · and log are within a few ulps of a value below C
where it counts, and both the loss and the clip are 1-Lipschitz in the margin (about a hundred times inside,
tests/problems/test_screened_losses.py)."""


class LogisticMargins:
    """The margins a − η·b of the points w − η·d (a = y ⊙ Xw, b = y ⊙ X·d, float64) held in float32, with what
    the error bound needs, for clipped logistic loss sums at any η."""

    def __init__(self, signed_at_w: np.ndarray, signed_along: np.ndarray) -> None:
        self._a32, self._b32 = signed_at_w.astype(np.float32), signed_along.astype(np.float32)
        self._abs_a, self._abs_b = float(np.abs(signed_at_w).sum()), float(np.abs(signed_along).sum())
        self._buffers: dict[int, np.ndarray] = {}

    def clipped_sums(self, steps: np.ndarray, clip: float) -> tuple[np.ndarray, np.ndarray]:
        """For each η in ``steps``: Σ_i min(log(1 + e^{−(a_i − η b_i)}), C) in float32 arithmetic, summed per
        block in float64; and a bound on its distance to the same sum computed in float64 from the same
        margins: 2⁻¹⁶ per row of 1 + C + |a_i| + η|b_i| (:data:`_FLOAT32_MARGIN`) plus n²C·2⁻⁵¹ for the
        rounding of the two sums.

        e^{−m} overflows to inf where ℓ ≫ C, and the minimum is then C exactly. Memory: one float32 block of
        ≤ 2²⁰ entries, never an n × k array."""
        n = self._a32.shape[0]
        etas, clip32 = steps.astype(np.float32), np.float32(clip)
        block = max(1, _BLOCK_ENTRIES // steps.size)
        if steps.size not in self._buffers:
            self._buffers[steps.size] = np.empty((steps.size, min(block, n)), dtype=np.float32)  # a step per row
        values = self._buffers[steps.size]
        sums = np.zeros(steps.size)
        with np.errstate(over="ignore"):
            for start in range(0, n, block):
                rows = slice(start, min(start + block, n))
                v = values[:, : rows.stop - start]
                np.multiply(etas[:, None], self._b32[None, rows], out=v)
                v -= self._a32[None, rows]  # −m = η·yb − ya
                np.exp(v, out=v)
                v += 1.0
                np.log(v, out=v)
                np.minimum(v, clip32, out=v)
                sums += np.einsum("ij->i", v, dtype=np.float64)
        spread = n * (1.0 + clip) + self._abs_a + steps * self._abs_b
        return sums, _FLOAT32_MARGIN * spread + n * n * clip * 2.0**-51


class LogisticLineBounds:
    """Bounds on S(η) = Σ_i min(ℓ(a_i − ηb_i), C) for η ∈ [0, η_max] (a = y ⊙ Xw, b = y ⊙ X·d, float64) from a
    few passes over the rows instead of one per step, with their distance to the float64 sums of the exact
    computation.

    A row whose margin stays above m_C = −log(e^C − 1) on the whole interval (checked at its two ends: the margin
    is linear in η) is never clipped there, and its loss f_i(η) = ℓ(a_i − ηb_i) is convex with
    f_i″ = b_i²ℓ″ ≤ b_i²/4. Summed over those rows I, Taylor's theorem at an anchor η₀ gives
    V + (η − η₀)G ≤ S_I(η) ≤ V + (η − η₀)G + (η − η₀)²Q with V = S_I(η₀), G = S_I′(η₀) = Σ_I b_iσ(−m_i(η₀)) and
    Q = Σ_I b_i²/8: one exp and log1p per row and anchor. Of the other rows (those the clip may reach: about a
    tenth on Adult), a row whose margin stays below m_C on the whole interval has loss C at every step and is only
    counted (nine in ten of them on Adult); the rest, which cross m_C, are summed at every step. With several anchors
    the intervals are intersected.

    Rounding (u = 2⁻⁵³): each float64 loss, σ and margin is within a few u of its real value, so a row's
    computed clipped loss is within 2⁻⁴⁸(1 + C + |a_i| + η|b_i|) of the real one (the loss and the clip are
    1-Lipschitz), and a sum of k such terms within k²C·2⁻⁵¹ more; the exact computation's S(η) is within that of
    the real sum too. The bounds below add these terms for the anchors' V and G, the clipped rows' sums and the
    exact computation's, and 2⁻⁴⁸ of the magnitudes for the arithmetic that combines them.
    """

    def __init__(self, signed_at_w: np.ndarray, signed_along: np.ndarray, clip: float, eta_max: float) -> None:
        a, b = signed_at_w, signed_along
        self._clip, self._eta_max, self._n = float(clip), float(eta_max), a.shape[0]
        self._a_all, self._b_all = a, b
        magnitudes = np.abs(a)
        self._abs_a, self._max_a = float(magnitudes.sum()), float(magnitudes.max(initial=0.0))
        np.abs(b, out=magnitudes)
        self._abs_b, max_b = float(magnitudes.sum()), float(magnitudes.max(initial=0.0))  # all rows: bound any subset
        m_clip = -math.log(math.expm1(self._clip))
        # a row's least margin on [0, η_max] is min(a, a − η_max·b); above m_C by more than its rounding
        reach = np.multiply(b, self._eta_max, out=magnitudes)
        np.subtract(a, reach, out=reach)
        np.minimum(reach, a, out=reach)
        rounding = 2.0**-40 * (1.0 + abs(m_clip) + self._max_a + self._eta_max * max_b)
        self._clipped_index = np.flatnonzero(reach < m_clip + rounding)
        self._k = self._n - self._clipped_index.size  # the unclipped rows I
        self._unclipped: tuple[np.ndarray, np.ndarray] | None = None  # (a_I, b_I), gathered when first needed
        a_clip, b_clip = a[self._clipped_index], b[self._clipped_index]
        self._a_clipped, self._b_clipped = a_clip, b_clip
        # a row's greatest margin on [0, η_max] is max(a, a − η_max·b); below m_C by more than its rounding, its real
        # loss exceeds C at every step, so its clipped loss is C exactly
        highest = a_clip - self._eta_max * b_clip
        np.maximum(highest, a_clip, out=highest)
        crossing = highest >= m_clip - rounding
        self._wholly_clipped = int(crossing.size - np.count_nonzero(crossing))
        self._a_clip, self._b_clip = a_clip[crossing], b_clip[crossing]
        # an upper bound on Σ_I b_i²: the sum over all rows less the clipped rows' (each within γ of its terms' sum,
        # γ = (n + 4)·2⁻⁵²), and 2⁻⁵⁰ of the larger for the three roundings of this arithmetic
        gamma = (self._n + 4) * 2.0**-52
        every, clipped = float(b @ b) * (1.0 + gamma), float(b_clip @ b_clip) * (1.0 - gamma)
        self._b2 = max(0.0, every - clipped) + 2.0**-50 * every
        self._q = self._b2 / 8.0 * (1.0 + 2.0**-51)
        self._anchors: dict[float, tuple[float, float, float, float]] = {}
        self._slope0: tuple[float, float] | None = None  # (G, e_G) at the anchor 0, for :meth:`drops`
        self._clipped_abs_sums = (float(np.abs(self._a_clip).sum()), float(np.abs(self._b_clip).sum()))
        self._last_clipped: tuple[np.ndarray, tuple[np.ndarray, np.ndarray]] | None = None

    def _unclipped_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """(a_I, b_I): the margins and slopes of the rows the clip cannot reach, gathered once when first needed."""
        if self._unclipped is None:
            if self._clipped_index.size:
                keep = np.ones(self._n, dtype=bool)
                keep[self._clipped_index] = False
                self._unclipped = self._a_all[keep], self._b_all[keep]
            else:
                self._unclipped = self._a_all, self._b_all
        return self._unclipped

    @property
    def clipped_rows(self) -> int:
        """The rows the clip may reach on [0, η_max]: those that cross m_C there (summed at every step) and those
        below it throughout (counted)."""
        return self._a_clip.shape[0] + self._wholly_clipped

    def clipped_sums(self, steps: np.ndarray, anchors) -> tuple[np.ndarray, np.ndarray]:
        """For each η in ``steps`` (all in [0, η_max]): the midpoint of the bounds on S(η) from the Taylor
        expansions at ``anchors`` (also in [0, η_max], class docstring), and a bound on its distance to the
        float64 sum the exact computation returns."""
        self._check_inside(steps=steps, anchors=np.asarray(anchors, dtype=float))
        low, high = np.full(steps.size, -np.inf), np.full(steps.size, np.inf)
        magnitude = np.zeros(steps.size)  # of the terms combined below, for the rounding of their arithmetic
        for eta0 in anchors:
            value, slope, value_error, slope_error = self._anchor(float(eta0))
            delta = steps - eta0
            linear, curvature = value + delta * slope, delta * delta * self._q
            spread = value_error + np.abs(delta) * slope_error
            low = np.maximum(low, linear - spread)
            high = np.minimum(high, linear + curvature + spread)
            magnitude = np.maximum(magnitude, abs(value) + np.abs(delta * slope) + curvature + spread)
        clipped, clipped_error = self._clipped_row_sums(steps)
        error = 0.5 * (high - low) + clipped_error + self._exact_error(steps)
        rounding = 2.0**-48 * (magnitude + np.abs(clipped) + error)
        return 0.5 * (low + high) + clipped, error + rounding

    def drops(self, steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each η in ``steps`` (all in [0, η_max]): the midpoint of bounds on the drop S(0) − S(η), and a bound on
        its distance to the difference of the float64 sums the exact computation returns at 0 and at η.

        Over the unclipped rows S_I(0) − S_I(η) lies in [−η(G + e_G) − η²Q, −η(G − e_G)] with G at the anchor 0 (class
        docstring): the value V cancels, so no log1p is taken, only σ(−a_i) = 1/(1 + e^{a_i}) for G; the rows the clip
        may reach are summed at 0 and at every step (a row below m_C throughout cancels exactly)."""
        self._check_inside(steps=steps)
        slope, slope_error = self._slope_at_zero()
        linear, curvature = steps * slope, steps * steps * self._q
        clipped, clipped_error = self._clipped_row_sums(np.concatenate(([0.0], steps)))
        clipped_drop = clipped[0] - clipped[1:]
        error = steps * slope_error + 0.5 * curvature + clipped_error[0] + clipped_error[1:]
        error += self._exact_error(np.zeros(1)) + self._exact_error(steps)
        rounding = 2.0**-48 * (np.abs(linear) + curvature + abs(clipped[0]) + np.abs(clipped[1:]) + error)
        return clipped_drop - linear - 0.5 * curvature, error + rounding

    def _slope_at_zero(self) -> tuple[float, float]:
        """G = S_I′(0) = Σ_I b_iσ(−a_i), from σ(−a) = 1/(1 + e^{a}) (e^{a} = inf gives 0), and its bound as
        :meth:`_anchor`'s (each σ within a few u of its real value either way)."""
        if self._slope0 is None:
            if 0.0 in self._anchors:
                self._slope0 = self._anchors[0.0][1], self._anchors[0.0][3]
            else:
                self._slope0 = self._slope_over_unclipped_rows()
        return self._slope0

    def _slope_over_unclipped_rows(self) -> tuple[float, float]:
        """G over I as the sum over all rows less the clipped rows' (no gather of I): each sum within
        2⁻⁴⁸Σ|b_i|(1 + max|a| + n) of the real one (a few u per σ, γ_n for the sum), so the difference within twice
        that, and 2⁻⁵² of the magnitudes for the subtraction."""

        def slope(a: np.ndarray, b: np.ndarray) -> float:
            with np.errstate(over="ignore"):
                t = np.exp(a)
            t += 1.0
            np.divide(1.0, t, out=t)
            return float(b @ t)

        every, clipped = slope(self._a_all, self._b_all), slope(self._a_clipped, self._b_clipped)
        error = 2.0 * 2.0**-48 * (self._abs_b * (1.0 + self._max_a + self._n))
        return every - clipped, error + 2.0**-52 * (abs(every) + abs(clipped))

    def direct_sums(self, steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each η in ``steps`` (all in [0, η_max]): S(η) summed over every row in float64, a pass per step, and
        a bound on its distance to the float64 sum the exact computation returns (both lie within the rounding
        bound of the real sum: class docstring)."""
        self._check_inside(steps=steps)
        clipped, clipped_error = self._clipped_row_sums(steps)
        a, b = self._unclipped_rows()
        unclipped = np.array([float(np.minimum(LogisticLoss().value(a - eta * b), self._clip).sum()) for eta in steps])
        k = self._k
        error = 2.0**-48 * (k * (1.0 + self._clip) + self._abs_a + steps * self._abs_b) + k * k * self._clip * 2.0**-51
        error += clipped_error + self._exact_error(steps)
        sums = unclipped + clipped
        return sums, error + 2.0**-48 * (np.abs(unclipped) + np.abs(clipped) + error)

    def _exact_error(self, steps: np.ndarray) -> np.ndarray:
        """The bound on the exact computation's distance to the real S(η) (class docstring)."""
        error = 2.0**-48 * (self._n * (1.0 + self._clip) + self._abs_a + steps * self._abs_b)
        return error + self._n * self._n * self._clip * 2.0**-51

    def _check_inside(self, **points: np.ndarray) -> None:
        """ValueError unless every step and anchor lies in [0, η_max], the interval the bounds were set up for."""
        for name, values in points.items():
            if values.size and not (values.min() >= 0.0 and values.max() <= self._eta_max):
                raise ValueError(f"{name} must lie in [0, {self._eta_max}], the interval the bounds were set up for")

    def _anchor(self, eta0: float) -> tuple[float, float, float, float]:
        """(V, G) at ``eta0`` over the unclipped rows, each with a bound on its distance to the real value."""
        if eta0 not in self._anchors:
            (a, b), k = self._unclipped_rows(), self._k
            margins = a - eta0 * b if eta0 else a
            t = np.exp(-margins)  # ≤ e^{C}: the margins are above m_C
            value = float(np.log1p(t).sum())
            t /= 1.0 + t  # σ(−m)
            slope = float(b @ t)
            value_error = 2.0**-48 * (k * (1.0 + self._clip) + self._abs_a + eta0 * self._abs_b)
            value_error += k * k * self._clip * 2.0**-51
            slope_error = 2.0**-48 * (self._abs_b * (1.0 + self._max_a + k) + eta0 * self._b2)
            self._anchors[eta0] = (value, slope, value_error, slope_error)
        return self._anchors[eta0]

    def _clipped_row_sums(self, steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Σ over the rows the clip may reach of min(ℓ(a_i − ηb_i), C) at each step, in float64, and the bound on
        its distance to the real sum: the crossing rows summed, C for each row below m_C throughout."""
        a, b, k = self._a_clip, self._b_clip, self._a_clip.shape[0]
        constant = float(self._wholly_clipped) * self._clip  # within 2⁻⁵³ of the real count·C
        if k == 0:
            return np.full(steps.size, constant), np.full(steps.size, constant * 2.0**-52)
        if self._last_clipped is not None and np.array_equal(self._last_clipped[0], steps):
            return self._last_clipped[1]  # DP-AGD asks again at the same steps with more anchors
        margins = a[:, None] - b[:, None] * steps[None, :]
        sums = np.minimum(LogisticLoss().value(margins), self._clip).sum(axis=0)
        abs_a, abs_b = self._clipped_abs_sums
        error = 2.0**-48 * (k * (1.0 + self._clip) + abs_a + steps * abs_b) + k * k * self._clip * 2.0**-51
        sums += constant
        error += 2.0**-48 * (np.abs(sums) + constant)  # the addition, and the constant's rounding
        self._last_clipped = (steps.copy(), (sums, error))
        return sums, error


class ClippedLossLine:
    """S(v) = Σ_{i∈B} min(ℓ_i(v), C) at v = w and along v = w − η·d, as NoisyBTLS's Armijo queries ask for it
    (chen_lee Alg. 1 line 7): exactly (:meth:`exact_at_w`, :meth:`exact`, the floats of
    ``GLMProblem.clipped_loss_sum``), or approximately with an error bound (:meth:`approximate`).

    The approximation starts from the float64 margins a = y ⊙ X_B w and b = y ⊙ X_B d (two products per line,
    instead of one per query); the exact query takes the product X_B·v of the rounded v = fl(w − fl(η·d)).
    Their distance per row is at most (2γ_k(1 + 3u) + 3u)‖x_i‖(‖w‖ + η‖d‖) ≤ (2k + 4)·2⁻⁵²·‖x_i‖(‖w‖ + η‖d‖)
    for a row of k ≤ dim entries (each dot product within γ_k = ku/(1 − ku) of its terms' absolute sum in any
    summation order, ‖v − (w − ηd)‖ ≤ 3u(‖w‖ + η‖d‖), u = 2⁻⁵³), and the loss and the clip are 1-Lipschitz,
    so that term is added to :meth:`LogisticMargins.clipped_sums`'s bound. Only the logistic loss on float64 data is
    approximated (float32 data's products round at 2⁻²⁴); otherwise :meth:`approximate` returns None.
    """

    def __init__(
        self,
        problem,
        X,
        y: np.ndarray,
        row_norms: np.ndarray,
        w,
        margins: np.ndarray,
        direction,
        clip: float,
        max_step: float | None = None,
    ):
        """``margins``: y ⊙ X_B w, the floats ``GLMProblem.clipped_loss_sum(w, B, C)`` computes; ``max_step``: the
        largest η the line will be asked about, for :meth:`bounded` (None: not bounded)."""
        self._loss, self._X, self._y, self._clip = problem.loss, X, y, clip
        self._at_w = margins
        self._direction, self._max_step = direction, max_step
        self._signed_along: np.ndarray | None = None  # y ⊙ X·d, taken by the first approximation
        self._margins: LogisticMargins | None = None
        self._bounds: LogisticLineBounds | None = None
        self._expected: dict[float, tuple[float, float]] = {}  # η → (drop, error) of :meth:`bounded_drop`
        self._screens = problem.loss.name == "logistic" and problem.dtype == np.float64
        if self._screens:
            inflate = 1.0 + 2.0**-40  # the norms and the sum below are computed in floating point
            self._products = (2 * problem.dim + 8) * 2.0**-52 * float(row_norms.sum()) * inflate
            self._norms = (float(np.linalg.norm(w)) * inflate, float(np.linalg.norm(direction)) * inflate)

    @property
    def size(self) -> int:
        """|B|, the rows each sum reads."""
        return self._y.shape[0]

    def exact_at_w(self) -> float:
        """S(w), the floats of ``GLMProblem.clipped_loss_sum(w, B, C)``."""
        return self._sum(self._at_w)

    def exact(self, v: np.ndarray) -> float:
        """S(v), the floats of ``GLMProblem.clipped_loss_sum(v, B, C)``."""
        return self._sum(self._y * matvec(self._X, v))

    def approximate(self, eta: float) -> tuple[float, float] | None:
        """(Ŝ, E) with |S(fl(w − fl(η·d))) − Ŝ| ≤ E, or None when this line is not approximated (class docstring)."""
        if not self._screens:
            return None
        if self._margins is None:
            self._margins = LogisticMargins(self._at_w, self._along())
        sums, error = self._margins.clipped_sums(np.array([eta]), self._clip)
        return float(sums[0]), float(error[0]) + self._product_error(eta)

    def bounded_drop(self, eta: float) -> tuple[float, float] | None:
        """(D̂, E) with |(S(w) − S(fl(w − fl(η·d)))) − D̂| ≤ E for the two sums as :meth:`exact_at_w` and :meth:`exact`
        compute them, from the Taylor bounds at the anchor η = 0 (:meth:`LogisticLineBounds.drops`: one pass over the
        rows for the whole line, not one per query); None when this line is not approximated or η is beyond its
        ``max_step``."""
        if not self._screens or self._max_step is None or not 0.0 <= eta <= self._max_step:
            return None
        if eta not in self._expected:
            drops, error = self._line_bounds().drops(np.array([eta]))
            self._expected[eta] = float(drops[0]), float(error[0])
        drop, error = self._expected[eta]
        return drop, error + self._product_error(eta)

    def expect_steps(self, steps) -> None:
        """Bound the drops at every η of ``steps`` in [0, ``max_step``] now, in one vectorised pass over the rows
        the clip may reach, for :meth:`bounded_drop` to look up: a search whose steps are fixed before it starts
        (NoisyBTLS's η₀β^i) pays that pass once, not once per query. The same bounds as asking for each η alone
        (the arithmetic is elementwise)."""
        if not self._screens or self._max_step is None:
            return
        etas = np.array([eta for eta in steps if 0.0 <= eta <= self._max_step], dtype=float)
        drops, error = self._line_bounds().drops(etas)
        self._expected.update(zip(etas.tolist(), zip(drops.tolist(), error.tolist())))

    def _line_bounds(self) -> LogisticLineBounds:
        if self._bounds is None:
            self._bounds = LogisticLineBounds(self._at_w, self._along(), self._clip, self._max_step)
        return self._bounds

    def _along(self) -> np.ndarray:
        if self._signed_along is None:
            self._signed_along = self._y * matvec(self._X, self._direction)
        return self._signed_along

    def _product_error(self, eta: float) -> float:
        """The bound on how far the exact query's margins, from the product X_B·fl(w − fl(η·d)), lie from a − η·b."""
        w_norm, d_norm = self._norms
        return self._products * (w_norm + eta * d_norm) * (1.0 + 2.0**-40)

    def _sum(self, margins: np.ndarray) -> float:
        return float(np.minimum(self._loss.value(margins), self._clip).sum())


class CoordinateMoveBounds:
    """Bounds on the loss sums L(c ± δe_j) = Σ_i ℓ(y_i x_iᵀ(c ± δe_j)) of every single-coordinate move of a point c,
    with their distance to the float64 sums an exact computation returns (PrivGene's all-moves population,
    chen_lee Sec 5.3, scored by ``population_fitness`` or ``CoordinateMoveScorer``): for all 2d moves from one pass
    over the rows (:meth:`CoordinateMoveSums.taylor`), then directly for the few moves that matter
    (:meth:`CoordinateMoveSums.direct`, a pass each).

    For a convex loss with ℓ″ ≤ β (the logistic loss: β = ¼), f_j(t) = L(c + te_j) has f_j″ = Σ_i x_ij²ℓ″ ≤ 2Q_j with
    Q_j = (β/2)Σ_i x_ij², so Taylor's theorem at t = 0 gives V + tG_j ≤ f_j(t) ≤ V + tG_j + t²Q_j, with V = L(c) and
    G = Xᵀ(y ⊙ ℓ′(a)), a = y ⊙ Xc: one product each way and one exp and log1p per row, instead of one per row and
    move. A candidate's coordinate is the rounded c_j ± δ, within ρ_j = 2⁻⁵²(|c_j| + δ) of the move.

    Every rounding is bounded with u = 2⁻⁵³ and γ = (n + d + 64)·8u, in any summation order: a margin of the exact
    computation within γ_d·‖x_i‖₁‖w‖_∞ + u|m_i|, each loss within 32u(1 + ℓ), the sum of n within γ_n of its
    terms' absolute sum, ℓ′ within 4u and ¼ of a margin's error, Xᵀ s within γ_n‖x_j‖₁: all inside
    γ·(n + L + Σ|a_i| + n·R₁(‖c‖_∞ + δ) + δ‖x_j‖₁) for a sum, twice that between two computations of it, and
    δ‖x_j‖₁·γ·(1 + R₁‖c‖_∞ + max|a_i|) for δG_j, R₁ = maxᵢ‖x_i‖₁. Float64 data, the logistic loss and labels ±1
    only (else :meth:`for_problem` is None).
    """

    def __init__(self, problem) -> None:
        self.problem = problem
        n, d = problem.X.shape
        self.gamma = (n + d + 64) * 2.0**-50
        inflate = 1.0 + self.gamma  # the sums below are computed in floating point
        column_l1, column_squares = _column_sums(problem.X)
        self.column_l1 = column_l1 * inflate
        self.curvature = 0.5 * problem.loss.smoothness * column_squares * inflate
        self.max_row_l1 = float(row_l1_norms(problem.X).max(initial=0.0)) * inflate
        self.columns = sp.csc_matrix(problem.X) if sp.issparse(problem.X) else problem.X

    @classmethod
    def for_problem(cls, problem) -> CoordinateMoveBounds | None:
        """The bounds for ``problem``, or None when they do not apply (float32 data, another loss, labels not ±1)."""
        if problem.dtype != np.float64 or problem.loss.name != "logistic" or not np.all(np.abs(problem.y) == 1.0):
            return None
        return cls(problem)

    def at(self, point: np.ndarray, delta: float) -> CoordinateMoveSums:
        """The loss sums of the moves ±δe_j of ``point``."""
        return CoordinateMoveSums(self, point, delta)


class CoordinateMoveSums:
    """The loss sums of the 2d moves +δe_1 … +δe_d, then −δe_1 … −δe_d of one point (the order of PrivGene's
    population), as intervals holding the float64 sums an exact computation returns (:class:`CoordinateMoveBounds`)."""

    def __init__(self, bounds: CoordinateMoveBounds, point: np.ndarray, delta: float) -> None:
        problem = bounds.problem
        self._bounds, self._delta = bounds, delta
        self._margins = problem.y * matvec(problem.X, point)
        self._value = float(problem.loss.value(self._margins).sum())
        abs_margins = np.abs(self._margins)
        self._max_margin = float(abs_margins.max(initial=0.0))
        self._point_max = float(np.abs(point).max(initial=0.0))
        self._column_l1 = np.tile(bounds.column_l1, 2)  # per move: +e_1 … +e_d, −e_1 … −e_d
        self._rho = 2.0**-52 * (np.tile(np.abs(point), 2) + delta)  # the candidate's coordinate is fl(c_j ± δ)
        moved = problem.n * bounds.max_row_l1 * (self._point_max + delta)
        self._common = problem.n + float(abs_margins.sum()) + moved + self._column_l1 * delta

    def taylor(self) -> tuple[np.ndarray, np.ndarray]:
        """(midpoints, half-widths) of every move's interval, from the Taylor bounds at the point."""
        bounds, problem, delta = self._bounds, self._bounds.problem, self._delta
        slopes = rmatvec(problem.X, problem.y * problem.loss.derivative(self._margins))
        steps = np.concatenate([slopes, -slopes]) * delta
        curvature = np.tile(bounds.curvature, 2)
        widths = curvature * delta * delta
        rounding = bounds.gamma * (self._common + abs(self._value) + np.abs(steps) + widths)
        rounding += (
            self._column_l1 * delta * bounds.gamma * (1.0 + bounds.max_row_l1 * self._point_max + self._max_margin)
        )
        rounding += self._rho * (self._column_l1 + curvature * (2.0 * delta + self._rho))
        return _inflated(self._value + steps + 0.5 * widths, 0.5 * widths + rounding)

    def direct(self, moves: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(sums, error bounds) of the moves at the indices ``moves``, each summed over the rows directly."""
        bounds, problem = self._bounds, self._bounds.problem
        d = problem.dim
        sums = np.empty(len(moves))
        for position, move in enumerate(moves):  # the few moves left able to win: one pass each
            column = bounds.columns[:, move % d]
            column = column.toarray().ravel() if sp.issparse(column) else column
            step = self._delta if move < d else -self._delta
            sums[position] = problem.loss.value(self._margins + step * (problem.y * column)).sum()
        rounding = 2.0 * bounds.gamma * (self._common[moves] + np.abs(sums)) + self._rho[moves] * self._column_l1[moves]
        return _inflated(sums, rounding)


def _inflated(middle: np.ndarray, error: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(middle, error) with the rounding of the arithmetic that made them added to the error."""
    return middle, (error + 2.0**-49 * (np.abs(middle) + error)) * (1.0 + 2.0**-40)


def _column_sums(X) -> tuple[np.ndarray, np.ndarray]:
    """(Σ_i |x_ij|, Σ_i x_ij²) for every column j, a dense X block by block (no n × d temporary)."""
    if sp.issparse(X):
        return np.asarray(abs(X).sum(axis=0)).ravel(), np.asarray(X.multiply(X).sum(axis=0)).ravel()
    column_l1, column_squares = np.zeros(X.shape[1]), np.zeros(X.shape[1])
    for rows in row_blocks(*X.shape):
        block = X[rows]
        column_l1 += np.abs(block).sum(axis=0)
        column_squares += np.einsum("ij,ij->j", block, block)
    return column_l1, column_squares
