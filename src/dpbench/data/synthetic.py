"""Synthetic logistic-regression data of kuru_acc Sec 5 (d = 20, n = 10^5, ||u||_1 <= 20).

The generator is the one in the authors' code (repo sibirbil/DPAccGradMethods,
``main_compare_methods.m``, cited in kuru_acc footnote 2): ``X = rand(n, d)``; rows with
``||x||_1 > C`` rescaled to ``||x||_1 = C``; ``w* = randn(d, 1)``; ``y = sign(X w*)``. The L1
bound C makes the gradient's L1 sensitivity ``S_1 = 2C`` (kuru_acc eq. 5.2). Here the stream is
``numpy.random.default_rng(seed)`` (X drawn first, then w*), and ``sign(0)`` counts as +1.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dpbench.data.dataset import Dataset, arrays_checksum, make_info
from dpbench.data.options import integer, positive_number

SYNTHETIC_OPTIONS = {
    "n": integer(100_000, 1),
    "d": integer(20, 1),
    "l1_radius": positive_number(20.0),
    "seed": integer(0, 0),
}


def make_logreg(n: int, d: int, l1_radius: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(X, y, w_star)``: X ~ U[0,1]^{n x d} projected radially into the L1 ball, y = sign(X w*)."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    l1 = X.sum(axis=1)  # entries are non-negative
    X *= np.minimum(1.0, l1_radius / l1)[:, None]
    w_star = rng.standard_normal(d)
    y = np.where(X @ w_star >= 0, 1.0, -1.0)
    return X, y, w_star


def load_synthetic_logreg(options: dict, data_dir: Path, allow_download: bool) -> Dataset:
    """kuru_acc's synthetic logistic-regression dataset; no bias column, no test split."""
    X, y, w_star = make_logreg(options["n"], options["d"], float(options["l1_radius"]), options["seed"])
    notes = ["X ~ U[0,1]^{n x d}, rows rescaled to ||x||_1 <= l1_radius; w* ~ N(0, I); y = sign(X w*), 0 -> +1"]
    info = make_info(  # X ∈ [0, 1]^d and ‖x‖₁ ≤ min(d, l1_radius), by construction
        "kuru_acc",
        X,
        None,
        [],
        options,
        notes,
        feature_bound=1.0,
        row_l1_bound=float(min(options["d"], options["l1_radius"])),
        w_star=w_star.tolist(),
    )
    return Dataset("synthetic_logreg", X, y, None, None, arrays_checksum(X, y), info)
