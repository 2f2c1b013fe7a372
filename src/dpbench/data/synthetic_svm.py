"""Synthetic SVM data, dense or sparse, a small stand-in for liu_dda's epsilon and rcv1 (Sec. 5, Table 2).

Both of those have rows of unit L2 norm (epsilon dense, rcv1 sparse), so the hinge loss is
1-Lipschitz in the model; the generator keeps that: rows x = g/‖g‖ with g ~ N(0, I) on a random
support of ``density``·d coordinates (at least one), labels y = sign(xᵀw*) (0 → +1) with
w* ~ N(0, I), each flipped with probability ``label_noise`` so the data are not separable. A test
split of ``n_test`` rows is drawn from the same law. ``density`` = 1 gives a dense array; below 1, a
CSR matrix built without any dense n × d intermediate. All of it is a deterministic function of the
options (``numpy.random.default_rng(seed)``).

Dense rows are drawn and normalised in float64 blocks of rows (the same random stream and the same
floats as one n × d draw) and stored in the requested dtype (``data.dtype``), so a float32 matrix
never exists as float64 first; the labels come from the float64 rows, so both dtypes have the
same labels.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from dpbench.data.dataset import Dataset, arrays_checksum, make_info
from dpbench.data.options import Option, integer
from dpbench.problems.products import row_blocks

SYNTHETIC_SVM_OPTIONS = {
    "n": integer(4000, 2),
    "n_test": integer(1000, 0),
    "d": integer(50, 1),
    "density": Option(
        1.0, lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v <= 1, "a number in (0, 1]"
    ),
    "label_noise": Option(
        0.05, lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < 0.5, "a number in [0, 0.5)"
    ),
    "seed": integer(0, 0),
}


def _unit_rows(n: int, d: int, density: float, rng: np.random.Generator, w_star: np.ndarray, dtype: str):
    """n rows of unit L2 norm, each with max(1, round(density·d)) nonzeros on a uniform support, in
    ``dtype``, and their margins Xw* computed in float64."""
    if density == 1.0:
        X, margins = np.empty((n, d), dtype=dtype), np.empty(n)
        for rows in row_blocks(n, d):
            block = rng.standard_normal((rows.stop - rows.start, d))
            block /= np.linalg.norm(block, axis=1, keepdims=True)
            margins[rows] = block @ w_star
            X[rows] = block
        return X, margins
    k = max(1, round(density * d))
    if n * d <= 1 << 24:  # a uniform k-subset per row: the k smallest of d uniform keys
        cols = np.argsort(rng.random((n, d)), axis=1)[:, :k]
    else:  # large d: row by row, never an n × d array
        cols = np.stack([rng.choice(d, k, replace=False) for _ in range(n)])
    vals = rng.standard_normal((n, k))
    vals /= np.linalg.norm(vals, axis=1, keepdims=True)
    X = sp.csr_matrix((vals.ravel(), np.sort(cols, axis=1).ravel(), np.arange(0, n * k + 1, k)), shape=(n, d))
    margins = X @ w_star
    return X.astype(dtype, copy=False), margins


def make_svm(n: int, n_test: int, d: int, density: float, label_noise: float, seed: int, dtype: str = "float64"):
    """(X, y, X_test, y_test, w*) for the options (module docstring), X and X_test in ``dtype``."""
    rng = np.random.default_rng(seed)
    w_star = rng.standard_normal(d)
    out = []
    for rows in (n, n_test):
        X, margins = _unit_rows(rows, d, float(density), rng, w_star, dtype)
        y = np.where(margins >= 0, 1.0, -1.0)
        y[rng.random(rows) < label_noise] *= -1.0
        out += [X, y]
    return (*out, w_star)


def load_synthetic_svm(options: dict, data_dir: Path, allow_download: bool, dtype: str = "float64") -> Dataset:
    """The synthetic SVM dataset (module docstring); ``row_norm_bound`` = 1 is public by construction."""
    X, y, X_test, y_test, w_star = make_svm(**options, dtype=dtype)
    sparse = sp.issparse(X)
    notes = [
        (
            "rows g/||g||, g ~ N(0, I) on a uniform support of density*d coordinates; y = sign(x'w*), 0 -> +1, "
            "flipped with probability label_noise; w* ~ N(0, I)"
        )
    ]
    parts = [X.data, X.indices, X.indptr] if sparse else [X]
    parts_test = [X_test.data, X_test.indices, X_test.indptr] if sparse else [X_test]
    checksum = arrays_checksum(*parts, y, *parts_test, y_test)
    info = make_info("synthetic_svm", X, X_test, [], options, notes, row_norm_bound=1.0, w_star=w_star.tolist())
    if options["n_test"] == 0:
        X_test, y_test = None, None
    return Dataset("synthetic_svm", X, y, X_test, y_test, checksum, info)
