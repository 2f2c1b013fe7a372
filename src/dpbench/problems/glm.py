"""Regularised linear models (GLMs): F(w) = (1/n) Σ ℓ(y_i wᵀx_i) + (μ/2)‖w‖² + φ‖w‖₁.

For a linear model the per-example gradient of the data term is a scalar times x_i,
s_i = ℓ′(y_i wᵀx_i)·y_i, so clipped gradient sums are one matrix–vector product,
Xᵀ(s ⊙ min(1, C/(|s_i|·‖x_i‖))), for dense arrays and scipy.sparse alike; row norms are computed
once. Objective clipping min(ℓ_i, C_obj) bounds the sensitivity of objective queries
(chen_lee Thm 1 and the objective clipping of Lee & Kifer 2018).

Methods that algorithms call to look at the data (``objective``, ``gradient``,
``clipped_gradient_sum``, ``clipped_loss_sum``) count per-example evaluations in
``self.counts``; the ``evaluate_*`` methods are for metrics and are not counted.
The regulariser is data-independent, so private methods add μw after noising. The ℓ1 term
φ‖w‖₁ (liu_dda Sec. 5.3, ℓ1-SVM) is 0 unless asked for; only methods that handle it through a
proximal step accept a problem with φ > 0 (``Algorithm.supports_l1``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh

from dpbench.problems.losses import make_loss
from dpbench.problems.products import (
    as_design_matrix,
    in_dtype_of,
    matvec,
    rmatvec,
    row_l1_norms,
    row_norms,
)
from dpbench.problems.screened_losses import ClippedLossLine

_DENSE_ROWS_MAX_ENTRIES = 1 << 24  # 128 MB of float64: Adult (32k × 124) qualifies, rcv1 does not


_HESSIAN_BLOCK = 4096
"""Rows per block of :meth:`GLMProblem.hessian` on dense data."""


@dataclass
class EvalCounts:
    """Per-example evaluations an algorithm asked for (chen_lee Fig. 2 counts these)."""

    grad_evals: int = 0
    obj_evals: int = 0


class GLMProblem:
    """The objective of a linear classifier with an L2 regulariser of coefficient ``reg`` (μ).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d), float64 or float32 (``data.dtype``): kept in
        its dtype, never copied to another; products with it are taken in that dtype and come back
        in float64 (:mod:`dpbench.problems.products`), the dtype of every scalar, iterate and noise
    y : ndarray, shape (n,), labels in {−1, +1}
    loss : a loss from :mod:`dpbench.problems.losses`
    reg : μ ≥ 0, the L2 coefficient (chen_lee Sec 5.1 uses μ = 0.001)
    l1_reg : φ ≥ 0, the ℓ1 coefficient (liu_dda Sec 5.3 uses φ = 0.0005)
    public_row_norm : a bound on every ‖x_i‖ known without looking at the data (the encoding's,
        e.g. 1 for unit-normalised rows), or None; methods that need a Lipschitz constant may use it
    public_feature_bound : a bound on every |x_ij| known without looking at the data (1 for features
        scaled to [0, 1] plus a bias), or None; a public row-norm bound is one too
    public_row_l1_norm : a public bound on every ‖x_i‖₁ (the encoding's, e.g. 15 for a9a: at most 15
        entries equal to 1), or None
    public_n : n̄, the training-set size as a public constant (``n_public``; default: the number of
        rows). Private methods use n̄, never the number of rows they are given, for everything they
        normalise or charge (rates q = L/n̄, means Σ/n̄, round counts), so that the run is the same
        mechanism on D and on D with a record added or removed (``privacy.neighbouring=add_remove``).
        The engine sets it to the paid noisy count ñ under add/remove (:mod:`dpbench.privacy.counts`),
        to the fold's size under replace-one, where the relation fixes n.

    No method may look at the data to decide whether its assumptions hold (an abort that fires on a
    dataset reveals a fact about it): :meth:`within` restricts the rows to public bounds instead.
    """

    def __init__(
        self,
        X,
        y: np.ndarray,
        loss,
        reg: float,
        l1_reg: float = 0.0,
        public_row_norm: float | None = None,
        public_feature_bound: float | None = None,
        public_row_l1_norm: float | None = None,
        public_n: int | None = None,
    ) -> None:
        if X.shape[0] != y.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels")
        if X.shape[0] == 0:
            raise ValueError("the training set is empty")
        if not (np.isfinite(reg) and reg >= 0):
            raise ValueError(f"regulariser μ must be finite and ≥ 0, got {reg}")
        if not (np.isfinite(l1_reg) and l1_reg >= 0):
            raise ValueError(f"ℓ1 regulariser φ must be finite and ≥ 0, got {l1_reg}")
        for key, bound in (
            ("public_row_norm", public_row_norm),
            ("public_feature_bound", public_feature_bound),
            ("public_row_l1_norm", public_row_l1_norm),
        ):
            if bound is not None and not (np.isfinite(bound) and bound > 0):
                raise ValueError(f"{key} must be None or finite and > 0, got {bound}")
        self.X = as_design_matrix(X)
        self.dtype = self.X.dtype
        self.y = np.asarray(y, dtype=float)
        self.loss = loss
        self.reg = float(reg)
        self.l1_reg = float(l1_reg)
        self.public_row_norm = None if public_row_norm is None else float(public_row_norm)
        bounds = [float(b) for b in (public_feature_bound, public_row_norm) if b is not None]  # |x_ij| ≤ ‖x_i‖
        self.public_feature_bound = min(bounds) if bounds else None
        self.public_row_l1_norm = None if public_row_l1_norm is None else float(public_row_l1_norm)
        self.n, self.dim = X.shape
        if public_n is not None and (
            isinstance(public_n, bool) or not isinstance(public_n, (int, np.integer)) or public_n < 1
        ):
            raise ValueError(f"public_n must be None or an integer ≥ 1, got {public_n!r}")
        self.n_public = self.n if public_n is None else int(public_n)
        self.row_norms = row_norms(self.X)
        # Minibatch rows come from a row-major dense copy when it is small: scipy's sparse fancy
        # indexing costs ~0.1 ms per call, more than the minibatch's own products. Full-data
        # products use a column-major copy of small dense data, on which Xᵀr is several times
        # faster than on row-major storage (scripts/bench.py).
        small = self.n * self.dim <= _DENSE_ROWS_MAX_ENTRIES
        if sp.issparse(self.X):
            self._minibatch_rows = self.X.toarray() if small else self.X
        else:
            self._minibatch_rows = np.ascontiguousarray(self.X)
            if small:
                self.X = np.asfortranarray(self.X)
        # Full-data gradients of small dense data use the signed rows y_i·x_i (exact for y = ±1):
        # the margins are then one product and the gradient sum another, with no passes for y.
        signed = small and not sp.issparse(self.X) and bool(np.all(np.abs(self.y) == 1.0))
        self._signed_X = np.asfortranarray(in_dtype_of(self.X, self.y)[:, None] * self.X) if signed else None
        self._margins = np.empty(self.n) if signed else None  # reused: a fresh n-vector per call costs page faults
        self._last_batch: tuple | None = None
        self._last_product: tuple[np.ndarray, np.ndarray] | None = None
        self._l1_row_norms: np.ndarray | None = None
        self._max_norms: dict[int, float] = {}
        self.counts = EvalCounts()
        self._gram_norm: float | None = None
        self._last_objective: tuple[np.ndarray, float] | None = None

    def within(self, row_norm: float | None = None, feature_bound: float | None = None) -> GLMProblem:
        """This problem with every row clipped to L2 norm ≤ ``row_norm`` and every entry to
        [−``feature_bound``, ``feature_bound``] — what a method whose analysis assumes those bounds
        trains on. A clipped row depends on its own record only, so the restriction is private to
        apply and never needs a look at the data; when the public bounds already guarantee it, the
        problem itself is returned. The restricted problem shares :attr:`counts` with this one."""
        rows = row_norm is not None and (self.public_row_norm is None or self.public_row_norm > row_norm)
        entries = feature_bound is not None and (
            self.public_feature_bound is None or self.public_feature_bound > feature_bound
        )
        if not (rows or entries):
            return self
        X = self.X.tocsr(copy=True) if sp.issparse(self.X) else np.array(self.X, order="C")
        values = X.data if sp.issparse(X) else X
        if entries:
            np.clip(values, -feature_bound, feature_bound, out=values)
        if rows:
            norms = row_norms(X)
            factor = np.minimum(1.0, row_norm / np.where(norms > 0, norms, 1.0))
            if sp.issparse(X):
                X.data *= np.repeat(factor, np.diff(X.indptr))
            else:
                X *= factor[:, None]
        restricted = GLMProblem(
            X,
            self.y,
            self.loss,
            self.reg,
            self.l1_reg,
            public_row_norm=row_norm if rows else self.public_row_norm,
            public_feature_bound=feature_bound if entries else self.public_feature_bound,
            public_row_l1_norm=self.public_row_l1_norm,  # clipping only shrinks entries
            public_n=self.n_public,
        )
        restricted.counts = self.counts
        return restricted

    # ----------------------------------------------------------------------------- data access
    def _rows(self, idx):
        if idx is None:
            return self.X, self.y, self.row_norms
        idx = np.asarray(idx)
        cached = self._last_batch
        if cached is None or cached[0].shape != idx.shape or not np.array_equal(cached[0], idx):
            # line searches query one minibatch many times: keep its rows until another comes
            rows = self._minibatch_rows
            # np.take gathers dense rows in about half the time of fancy indexing (the same floats)
            rows = rows[idx] if sp.issparse(rows) else np.take(rows, idx, axis=0)
            cached = self._last_batch = (idx.copy(), rows, self.y[idx], self.row_norms[idx])
        return cached[1:]

    def full_product(self, w: np.ndarray) -> np.ndarray:
        """X·w on every row (read-only; the floats of ``matvec(X, w)``), kept for the last w: a full-batch method
        asks for the gradient and then its noisy min or line search at the same point."""
        cached = self._last_product
        if cached is None or not np.array_equal(cached[0], w):
            product = matvec(self.X, w)
            product.setflags(write=False)
            cached = self._last_product = (np.array(w, copy=True), product)
        return cached[1]

    def _grad_scalars(self, w: np.ndarray, X, y) -> np.ndarray:
        """s_i with ∇ℓ_i(w) = s_i·x_i: ℓ′(y_i·x_iᵀw)·y_i, in one buffer."""
        s = np.array(self.full_product(w)) if X is self.X else matvec(X, w)
        s *= y
        self.loss.derivative(s, out=s)
        s *= y
        return s

    def clipped_gradient_sum(self, w: np.ndarray, idx: np.ndarray | None, clip: float, norm: int = 2) -> np.ndarray:
        """Σ_{i∈idx} clip(∇ℓ_i(w), C) with clip(g, C) = g / max(1, ‖g‖/C) (chen_lee eq. (6)), in the
        L2 norm, or in the L1 norm with ``norm=1`` (the L1 sensitivity of kuru_acc eq. 3.2).

        Each clipped term has norm ≤ C, so the sum has sensitivity C under add/remove-one (2C under
        replace-one). When no term can exceed C (C ≥ sup|ℓ′|·max_i‖x_i‖) the scaling, which would
        be exactly 1, is skipped: the result is the same either way.
        """
        if norm not in (1, 2):
            raise ValueError(f"norm must be 1 or 2, got {norm}")
        X, y, l2_norms = self._rows(idx)
        if idx is None and self._signed_X is not None:  # ∇ℓ_i = ℓ′(y_i x_iᵀw)·(y_i x_i)
            X = self._signed_X
            s = self.loss.derivative(self._signed_margins(w), out=self._margins)
        else:
            s = self._grad_scalars(w, X, y)
        self.counts.grad_evals += len(y)
        if clip < self.loss.lipschitz * self._max_norm(norm):
            norms = l2_norms if norm == 2 else (self._l1_norms() if idx is None else self._l1_norms()[idx])
            factor = np.abs(s)  # → C/max(|s_i|·‖x_i‖, C) = min(1, C/‖g_i‖), safe for ‖g_i‖ = 0
            factor *= norms
            np.maximum(factor, clip, out=factor)
            np.divide(clip, factor, out=factor)
            s *= factor
        return rmatvec(X, s)

    def clipped_loss_sum(self, w: np.ndarray, idx: np.ndarray | None, clip: float) -> float:
        """Σ_{i∈idx} min(ℓ_i(w), C_obj): objective clipping, sensitivity C_obj (chen_lee Thm 1)."""
        X, y, _ = self._rows(idx)
        self.counts.obj_evals += len(y)
        product = self.full_product(w) if idx is None else matvec(X, w)
        return float(np.minimum(self.loss.value(y * product), clip).sum())

    def clipped_loss_line(
        self, w: np.ndarray, direction: np.ndarray, idx: np.ndarray | None, clip: float, max_step: float | None = None
    ):
        """Σ_{i∈idx} min(ℓ_i(v), C_obj) at v = w and along v = w − η·direction (η ≤ ``max_step``), exactly or with
        an error bound (:class:`~dpbench.problems.screened_losses.ClippedLossLine`): NoisyBTLS's Armijo queries.
        Counts |idx| evaluations, for v = w; the caller counts one more per query it asks."""
        X, y, norms = self._rows(idx)
        self.counts.obj_evals += len(y)
        product = self.full_product(w) if idx is None else matvec(X, w)
        return ClippedLossLine(self, X, y, norms, w, y * product, direction, clip, max_step)

    def objective(self, w: np.ndarray) -> float:
        """F(w) on the whole training set (non-private methods)."""
        self.counts.obj_evals += self.n
        return self.evaluate_objective(w)

    def objective_and_gradient(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        """F(w) and ∇F(w) in one pass (for L-BFGS); F must be smooth (no ℓ1 term)."""
        if self.l1_reg:
            raise ValueError(f"F has the non-smooth term φ‖w‖₁ (φ = {self.l1_reg}): it has no gradient")
        self.counts.obj_evals += self.n
        self.counts.grad_evals += self.n
        if self._signed_X is not None:  # the same floats: y_i·x_i is exact for y = ±1
            margins = self._signed_margins(w)
            value = self.loss.value(margins).mean() + 0.5 * self.reg * (w @ w)
            grad = rmatvec(self._signed_X, self.loss.derivative(margins, out=margins)) / self.n + self.reg * w
            return float(value), grad
        margins = self.y * matvec(self.X, w)
        value = self.loss.value(margins).mean() + 0.5 * self.reg * (w @ w)
        grad = rmatvec(self.X, self.loss.derivative(margins) * self.y) / self.n + self.reg * w
        return float(value), grad

    def hessian(self, w: np.ndarray, curvature=None) -> np.ndarray:
        """∇²F(w) = (1/n)Σᵢ ℓ″(mᵢ)xᵢxᵢᵀ + μI, dense d × d (Newton-type methods; a smooth loss, no ℓ1 term).
        ``curvature``: a function of the margins mᵢ = yᵢxᵢᵀw to use in place of ℓ″ (a quadratic upper bound's
        coefficients, say); None: the loss's own ℓ″."""
        if self.l1_reg or (curvature is None and not hasattr(self.loss, "curvature")):
            raise ValueError(f"F has no Hessian: the {self.loss.name} loss or φ‖w‖₁ is not twice differentiable")
        self.counts.grad_evals += self.n
        weights = (curvature or self.loss.curvature)(self.y * matvec(self.X, w)) / self.n
        X = self.X
        if sp.issparse(X):
            H = np.asarray((X.T @ sp.diags(in_dtype_of(X, weights)) @ X).toarray(), dtype=float)
        else:  # blocks of rows: no n × d temporary
            H = np.zeros((self.dim, self.dim))
            for start in range(0, self.n, _HESSIAN_BLOCK):
                block = X[start : start + _HESSIAN_BLOCK]
                H += block.T @ (block * in_dtype_of(X, weights[start : start + _HESSIAN_BLOCK])[:, None])
        H[np.diag_indices_from(H)] += self.reg
        return H

    def _signed_margins(self, w: np.ndarray) -> np.ndarray:
        """y ⊙ Xw from the signed rows, in the reused buffer ``_margins``."""
        if self.dtype == np.float64:
            return np.matmul(self._signed_X, w, out=self._margins)
        self._margins[:] = matvec(self._signed_X, w)
        return self._margins

    def regulariser_gradient(self, w: np.ndarray) -> np.ndarray:
        """∇(μ/2)‖w‖² = μw (data-independent)."""
        return self.reg * w

    def _l1_norms(self) -> np.ndarray:
        if self._l1_row_norms is None:
            self._l1_row_norms = row_l1_norms(self.X)
        return self._l1_row_norms

    def _max_norm(self, norm: int) -> float:
        if norm not in self._max_norms:
            self._max_norms[norm] = float((self.row_norms if norm == 2 else self._l1_norms()).max())
        return self._max_norms[norm]

    def public_row_bound(self) -> float | None:
        """The tightest public bound on every ‖x_i‖: ``public_row_norm``, or √d·``public_feature_bound``
        (|x_ij| ≤ b for all d entries), whichever is smaller; None when neither is known."""
        bounds = [b for b in (self.public_row_norm,) if b is not None]
        if self.public_feature_bound is not None:
            bounds.append(math.sqrt(self.dim) * self.public_feature_bound)
        return min(bounds) if bounds else None

    def public_row_l1_bound(self) -> float | None:
        """The tightest public bound on every ‖x_i‖₁: ``public_row_l1_norm``, d·``public_feature_bound``
        or √d times :meth:`public_row_bound`, whichever is smallest; None when none is known."""
        bounds = [b for b in (self.public_row_l1_norm,) if b is not None]
        if self.public_feature_bound is not None:
            bounds.append(self.dim * self.public_feature_bound)
        if self.public_row_bound() is not None:
            bounds.append(math.sqrt(self.dim) * self.public_row_bound())
        return min(bounds) if bounds else None

    # ----------------------------------------------------------------------------- metrics
    def evaluate_objective(self, w: np.ndarray, X=None, y=None) -> float:
        """F(w) on (X, y) (default: the training set); not counted as an algorithm's evaluation.

        On the training set the last value is kept (the trace's last record and the results row
        evaluate the same released w), and F(0) = ℓ(0) needs no pass over the rows: every margin is 0."""
        if X is not None:
            return self._objective_on(w, X, y)
        if self._last_objective is None or not np.array_equal(self._last_objective[0], w):
            value = float(self.loss.value(0.0)) if not np.any(w) else self._objective_on(w, None, None)
            self._last_objective = (np.array(w, copy=True), value)
        return self._last_objective[1]

    def _objective_on(self, w: np.ndarray, X, y) -> float:
        if X is None and self._signed_X is not None:
            margins = self._signed_margins(w)
        elif X is None:
            margins = self.y * self.full_product(w)
        else:
            margins = y * matvec(X, w)
        return float(self.loss.value(margins).mean() + 0.5 * self.reg * (w @ w) + self.l1_reg * np.abs(w).sum())

    # ----------------------------------------------------------------------------- constants
    @property
    def max_row_norm(self) -> float:
        return self._max_norm(2)

    def lipschitz(self) -> float:
        """Bound on every per-example gradient norm of the data term: sup|ℓ′|·max‖x_i‖."""
        return self.loss.lipschitz * self.max_row_norm

    def gram_norm(self) -> float:
        """λ_max(XᵀX/n), computed once (Lanczos)."""
        if self._gram_norm is None:
            self._gram_norm = _gram_spectral_norm(self.X)
        return self._gram_norm

    def smoothness(self) -> float:
        """L with ∇F L-Lipschitz: sup ℓ″ · λ_max(XᵀX/n) + μ. Raises for non-smooth losses."""
        if self.loss.smoothness is None:
            raise ValueError(f"the {self.loss.name} loss is not smooth")
        return self.loss.smoothness * self.gram_norm() + self.reg


def make_problem(
    X,
    y,
    *,
    loss: str,
    reg: float,
    l1_reg: float = 0.0,
    public_row_norm: float | None = None,
    public_feature_bound: float | None = None,
    public_row_l1_norm: float | None = None,
    public_n: int | None = None,
    **loss_params: float,
) -> GLMProblem:
    """Build a :class:`GLMProblem` from a loss name (``logistic``, ``hinge``, ``huber_hinge``)."""
    return GLMProblem(
        X,
        y,
        make_loss(loss, **loss_params),
        reg,
        l1_reg=l1_reg,
        public_row_norm=public_row_norm,
        public_feature_bound=public_feature_bound,
        public_row_l1_norm=public_row_l1_norm,
        public_n=public_n,
    )


def _gram_spectral_norm(X) -> float:
    n, d = X.shape
    if d <= 512:
        gram = X.T @ X
        gram = gram.toarray() if sp.issparse(gram) else gram
        return float(np.linalg.eigvalsh(np.asarray(gram, dtype=np.float64) / n)[-1])
    op = LinearOperator((d, d), matvec=lambda v: rmatvec(X, matvec(X, v)) / n, dtype=float)
    return float(eigsh(op, k=1, which="LA", return_eigenvectors=False)[0])
