"""Feature and label preprocessing shared by the loaders.

The census recipe follows chen_lee Sec 5.2 ("categorical attributes one-hot encoded, numeric ones
scaled to [0, 1]") and DP-AGD's ``load_dat(path, minmax=(0, 1), bias_term=True)`` (Lee & Kifer,
KDD 2018; repo ppmlguy/DP-AGD ``common/dat.py``): per-feature min–max to [0, 1], then a column of
ones prepended as the bias.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np
import scipy.sparse as sp

from dpbench.data.dataset import Matrix
from dpbench.problems.products import row_norms


def minmax_scale(X: np.ndarray, reference: np.ndarray | None = None) -> np.ndarray:
    """Scale each column of dense ``X`` to [0, 1] by the min and max of ``reference`` (default ``X``).

    Constant columns map to 0 (as sklearn's ``MinMaxScaler``, which DP-AGD uses). Values outside the
    reference range — test rows scaled with training statistics — are clipped to [0, 1], so every
    row keeps the norm bound the privacy analyses rely on.
    """
    X = np.asarray(X, dtype=np.float64)
    ref = X if reference is None else np.asarray(reference, dtype=np.float64)
    lo, hi = ref.min(axis=0), ref.max(axis=0)
    span = hi - lo
    scaled = (X - lo) / np.where(span > 0, span, 1.0)
    scaled[:, span == 0] = 0.0
    return np.clip(scaled, 0.0, 1.0, out=scaled)


def add_bias(X: Matrix) -> Matrix:
    """Prepend a column of ones (dense stays dense, sparse becomes CSR)."""
    ones = np.ones((X.shape[0], 1))
    if sp.issparse(X):
        return sp.hstack([sp.csr_matrix(ones), X], format="csr", dtype=np.float64)
    return np.hstack([ones, np.asarray(X, dtype=np.float64)])


def unit_features_after_bias(X: Matrix) -> np.ndarray:
    """Rows (x₀, f) → (x₀, f/‖f‖): every row's features after column 0 (the bias :func:`add_bias`
    prepends) scaled to unit L2 norm, rows with f = 0 left as they are. DP-AGD's ObjPert loader
    (ppmlguy/DP-AGD, ``run_objpert_logistic.py``: ``load_dat(..., normalize=True, bias_term=True)``,
    ``common/dat.py`` runs sklearn's ``Normalizer`` on the features, then prepends the ones), so each
    row has norm √2. Dense input only (those files are dense)."""
    if sp.issparse(X):
        raise ValueError("unit_features_after_bias: dense rows only (DP-AGD's .dat matrices), got a sparse matrix")
    out = np.array(X, dtype=np.float64)
    norms = np.linalg.norm(out[:, 1:], axis=1)
    out[:, 1:] /= np.where(norms > 0, norms, 1.0)[:, None]
    return out


def clip_rows(X: Matrix, max_norm: float) -> Matrix:
    """Return a copy of ``X`` whose rows with L2 norm > ``max_norm`` are rescaled to norm ``max_norm``.

    Dense input gives a dense array, sparse input a CSR matrix (never densified), in X's dtype when
    it is float32 (``data.dtype=float32``), else float64; the norms are taken in float64.
    """
    if not (isinstance(max_norm, Real) and math.isfinite(max_norm) and max_norm > 0):
        raise ValueError(f"clip_rows: max_norm must be a positive finite number, got {max_norm!r}")
    dtype = np.float32 if X.dtype == np.float32 else np.float64
    if sp.issparse(X):
        out = sp.csr_matrix(X, dtype=dtype, copy=True)
        factor = _shrink_factors(row_norms(out), max_norm)
        out.data *= np.repeat(factor, np.diff(out.indptr))
        return out
    out = np.array(X, dtype=dtype)
    out *= _shrink_factors(row_norms(out), max_norm)[:, None]
    return out


def _shrink_factors(norms: np.ndarray, max_norm: float) -> np.ndarray:
    factor = np.ones_like(norms)
    big = norms > max_norm
    factor[big] = max_norm / norms[big]
    return factor


def to_pm1(labels: np.ndarray, positive: object) -> np.ndarray:
    """Map labels to float64 {-1, +1}: ``+1`` where ``labels == positive``."""
    return np.where(np.asarray(labels) == positive, 1.0, -1.0)
