"""Products with the design matrix in its own dtype, and row-wise reductions in row blocks.

The data X are float64 (the default) or float32 (``data.dtype=float32``). A product of float32
data with a float64 vector makes numpy, and scipy.sparse, convert the whole matrix to float64 first:
a copy of X at twice its size. So here vectors are cast to X's dtype before a product, and the
result comes back in float64. Float64 is the dtype of every per-example scalar, iterate, noise draw
and ledger entry. For float64 data these functions compute exactly X @ w and Xᵀs, with the same
floats.

Row-wise reductions (norms, finiteness) go through dense rows in blocks of about
``BLOCK_ENTRIES`` entries, in float64. A call on the whole matrix would build an n × d temporary.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

BLOCK_ENTRIES = 1 << 20  # row blocks of ≤ 8 MB of float64 for row-wise reductions


def as_design_matrix(X):
    """X as a float32 or float64 matrix: dense stays dense (no copy when it already is one), sparse
    becomes CSR; any other dtype (integers, booleans, float16) becomes float64."""
    if sp.issparse(X):
        X = X.tocsr()
        return X if X.dtype in (np.float32, np.float64) else X.astype(np.float64)
    X = np.asarray(X)
    return X if X.dtype in (np.float32, np.float64) else X.astype(np.float64)


def in_dtype_of(X, v: np.ndarray) -> np.ndarray:
    """``v`` in X's dtype (no copy when it already is)."""
    v = np.asarray(v)
    return v if v.dtype == X.dtype else v.astype(X.dtype)


def _float64(result) -> np.ndarray:
    result = np.asarray(result)
    return result if result.dtype == np.float64 else result.astype(np.float64)


def matvec(X, w: np.ndarray) -> np.ndarray:
    """X @ w computed in X's dtype, as float64 (``w`` a vector or a d × k matrix)."""
    return _float64(X @ in_dtype_of(X, w))


def rmatvec(X, s: np.ndarray) -> np.ndarray:
    """Xᵀ s computed in X's dtype, as float64."""
    return _float64(X.T @ in_dtype_of(X, s))


def exact_matvec(X, w: np.ndarray) -> np.ndarray:
    """X @ w accumulated in float64 whatever X's dtype: float32 rows are converted block by block
    (never the whole matrix), about 3× the time of a float32 product. For reference values (F*)
    that need more than float32's 7 digits; for float64 data it is :func:`matvec`."""
    if X.dtype == np.float64:
        return matvec(X, w)
    if sp.issparse(X):
        return _float64_sparse(X) @ np.asarray(w, dtype=np.float64)
    out = np.empty(X.shape[0])
    for rows in row_blocks(*X.shape):
        out[rows] = _float64_rows(X, rows) @ w
    return out


def exact_rmatvec(X, s: np.ndarray) -> np.ndarray:
    """Xᵀ s accumulated in float64 whatever X's dtype, as :func:`exact_matvec`."""
    if X.dtype == np.float64:
        return rmatvec(X, s)
    if sp.issparse(X):
        return _float64_sparse(X).T @ np.asarray(s, dtype=np.float64)
    out = np.zeros(X.shape[1])
    for rows in row_blocks(*X.shape):
        out += _float64_rows(X, rows).T @ s[rows]
    return out


def row_blocks(n: int, d: int) -> list[slice]:
    """Slices of about ``BLOCK_ENTRIES`` entries covering n rows of d entries each."""
    rows = max(1, BLOCK_ENTRIES // max(d, 1))
    return [slice(start, min(start + rows, n)) for start in range(0, n, rows)]


def _float64_rows(X, rows: slice) -> np.ndarray:
    return X[rows].astype(np.float64, copy=False)


def _float64_sparse(X):
    """Sparse X with float64 values (itself when it has them)."""
    if X.dtype == np.float64:
        return X
    return sp.csr_matrix((X.data.astype(np.float64), X.indices, X.indptr), shape=X.shape)


def row_norms(X) -> np.ndarray:
    """‖x_i‖₂ of every row in float64. Dense rows go block by block (the same floats as one call,
    without an n × d temporary of squares), sparse ones by :func:`_sparse_row_sums`."""
    if sp.issparse(X):
        return np.sqrt(_sparse_row_sums(X, np.square))
    return np.concatenate([np.linalg.norm(_float64_rows(X, rows), axis=1) for rows in row_blocks(*X.shape)])


def row_l1_norms(X) -> np.ndarray:
    """‖x_i‖₁ of every row in float64, as :func:`row_norms`."""
    if sp.issparse(X):
        return _sparse_row_sums(X, np.abs)
    return np.concatenate([np.abs(_float64_rows(X, rows)).sum(axis=1) for rows in row_blocks(*X.shape)])


def _sparse_row_sums(X, transform) -> np.ndarray:
    """Σ_j transform(x_ij) over the nonzeros of every row of sparse X, in float64, ``BLOCK_ENTRIES``
    nonzeros at a time. Each row is summed in stored order, as scipy's ``X.multiply(X).sum(axis=1)``
    and ``abs(X).sum(axis=1)`` do (the same floats), without their copy of the whole matrix.
    A matrix with duplicate or unsorted entries is canonicalised on a copy first."""
    X = X.tocsr()
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    n, indptr = X.shape[0], X.indptr
    sums = np.zeros(n)
    start = 0
    while start < n:
        stop = int(np.searchsorted(indptr, indptr[start] + BLOCK_ENTRIES, side="right")) - 1
        stop = min(max(stop, start + 1), n)
        values = transform(X.data[indptr[start] : indptr[stop]].astype(np.float64))
        starts = indptr[start:stop]
        filled = starts < indptr[start + 1 : stop + 1]
        if values.size:
            sums[start:stop][filled] = np.add.reduceat(values, starts[filled] - indptr[start])
        start = stop
    return sums


def all_finite(X) -> bool:
    """Whether every entry of X (dense or sparse) is finite; dense rows block by block."""
    if sp.issparse(X):
        return bool(np.isfinite(X.data).all())
    return all(bool(np.isfinite(X[rows]).all()) for rows in row_blocks(*X.shape))
