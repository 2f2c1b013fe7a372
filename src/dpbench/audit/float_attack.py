"""Mironov's floating-point attack on numpy's Laplace (CCS 2012): which outputs can an input produce?

``Generator.laplace(0, b)`` draws U = j·2^-53 (j uniform on 1..2^53 − 1; numpy's ``next_double``) and
returns b·log(U + U) if U < 0.5, else −b·log(2 − U − U), both in float64 (numpy's
``random_laplace``, C code calling the C library's ``log``: the model calls the same ``log`` through
:func:`math.log`, since numpy's own vectorised ``np.log`` differs from it in the last bit of ~0.3 %
of arguments under numpy 2.4); ``laplace_mechanism`` then adds the value x in float64. So y is a possible
output on x iff fl(x + L(j)) = y for some j. :func:`numpy_laplace_producible` decides it exactly:
it inverts L in real arithmetic to a candidate j*, evaluates the very float expression on every j in
a window around j*, and answers True if one gives y. It answers False only when the window's two ends
give outputs on either side of y, so (fl(x + L(j)) being non-decreasing in j, up to the libm log's
sub-ulp error) no j outside the window can give y; an unbracketed output counts as producible, so
the fraction of non-producible outputs is never overstated.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["numpy_laplace_noise", "numpy_laplace_producible"]

_ONE = 1 << 53
WINDOW = 16
"""Candidates j* − 16 … j* + 16 are evaluated exactly."""


_LIBM_LOG = np.frompyfunc(math.log, 1, 1)


def numpy_laplace_noise(j: np.ndarray, scale: float) -> np.ndarray:
    """numpy's Laplace(0, scale) draw for the 53-bit uniforms U = j·2^-53 (j ∈ 1..2^53 − 1), evaluated
    exactly as ``random_laplace`` does in float64, with the C library's ``log``."""
    u = np.asarray(j, dtype=np.int64) * (1.0 / _ONE)
    upper = u >= 0.5
    logs = _LIBM_LOG(np.where(upper, 2.0 - u - u, u + u)).astype(np.float64)
    return np.where(upper, 0.0 - scale * logs, 0.0 + scale * logs)


def _candidates(gap: np.ndarray, scale: float) -> np.ndarray:
    """The j whose noise is closest to ``gap`` = y − x in real arithmetic (the inverse of L)."""
    u = np.where(gap < 0.0, 0.5 * np.exp(gap / scale), 1.0 - 0.5 * np.exp(-gap / scale))
    return np.clip(np.rint(u * _ONE), 1, _ONE - 1).astype(np.int64)


def numpy_laplace_producible(y, x: float, scale: float) -> np.ndarray:
    """For each output y, whether ``laplace_mechanism`` with noise scale ``scale`` can output y on the
    value x (module docstring: exact within the window, conservative outside it)."""
    y = np.asarray(y, dtype=np.float64).ravel()
    offsets = np.arange(-WINDOW, WINDOW + 1)
    j = np.clip(_candidates(y - x, scale)[:, None] + offsets, 1, _ONE - 1)
    outputs = x + numpy_laplace_noise(j, scale)
    hit = np.any(outputs == y[:, None], axis=1)
    bracketed = (outputs[:, 0] < y) & (outputs[:, -1] > y)
    return hit | ~bracketed
