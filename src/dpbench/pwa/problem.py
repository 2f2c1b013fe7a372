"""The piecewise-affine problem of han_pwa: minimise f(x) = max_i (a_iᵀx + b_i) over a box.

han_pwa eq. (2)–(3): f(x) = max_{i=1..m} {a_iᵀx + b_i} on the polytope P; Sec. 5.1 takes P to be
the hypercube {x : −c ⪯ x ⪯ c} centred at the origin, diam(P) = 2√d·c. The database is
D = {b_i} (Sec. 2.2); the slopes a_i and the box are public. Two databases are adjacent when
max_i |b_i − b_i′| ≤ b_max (eq. 4), so *every* offset may move by b_max at once.

Generator (Sec. 5.1 and 5.2). a_i and b_i are i.i.d. Gaussian; the paper gives neither their
variance nor d, b_max, c or m, so we take a_i ~ N(0, I_d), b_i ~ N(0, 1), d = 10, b_max = 1
(one standard deviation of an offset: a neighbour may move every b_i by as much as its typical
size), c = 1 and m = 50 as defaults. Sec. 5.2 requires the pieces used for a smaller m to be a
subset of those for a larger m: row i is drawn from its own stream, child i of
``SeedSequence(seed)``, so the first m rows are identical for every m′ ≥ m (and for every c and
b_max, which do not enter the draw).

Exact optimum. The epigraph form  min_{x,t} t  s.t.  a_iᵀx − t ≤ −b_i (i = 1..m), −c ≤ x ≤ c
is a linear program, solved by HiGHS (``scipy.optimize.linprog(method="highs")``).
:func:`solve_lp_batch` solves R such programs that share A and c (R perturbed databases, han_pwa
Thm 16) as a few block-diagonal LPs: the blocks share no variable and no constraint, so an
optimum of the block LP is an optimum of every block, and one HiGHS call replaces ~100 for the
default sizes (≈ 3× faster than a loop of ``linprog`` calls at m = 50, d = 10).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from dpbench.privacy._checks import check_count, check_positive

__all__ = [
    "DEFAULT_B_MAX",
    "DEFAULT_C",
    "DEFAULT_D",
    "DEFAULT_M",
    "PWAProblem",
    "make_problem",
    "objective",
    "project_box",
    "solve_lp",
    "solve_lp_batch",
]

DEFAULT_D = 10
DEFAULT_M = 50
DEFAULT_C = 1.0
DEFAULT_B_MAX = 1.0
_CONSTRAINTS_PER_LP = 5000  # rows of one block-diagonal LP (R·m); larger blocks solve slower per row


def _slopes(A: object) -> np.ndarray:
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] < 1 or A.shape[1] < 1:
        raise ValueError(f"A must be a non-empty m x d array, got shape {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError("A must be finite")
    return A


def _offsets(b: object, m: int, name: str = "b") -> np.ndarray:
    b = np.asarray(b, dtype=np.float64)
    if b.shape[-1:] != (m,) or b.ndim > 2:
        raise ValueError(f"{name} must have shape ({m},) or (R, {m}), got {b.shape}")
    if not np.all(np.isfinite(b)):
        raise ValueError(f"{name} must be finite")
    return b


def objective(A: np.ndarray, b: np.ndarray, X: np.ndarray) -> np.ndarray | float:
    """f(x) = max_i (a_iᵀx + b_i) (han_pwa eq. 2) at every row of X (R × d); a float for X of shape (d,).

    ``b`` may be one database (m,) or one per point (R × m)."""
    X = np.asarray(X, dtype=np.float64)
    values = (X @ A.T + b).max(axis=-1)
    return float(values) if X.ndim == 1 else values


def project_box(X: np.ndarray, c: float) -> np.ndarray:
    """The Euclidean projection onto P = {−c ⪯ x ⪯ c}: clip every coordinate (a new array)."""
    return np.clip(X, -c, c)


def _epigraph(A: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The data-free parts of the epigraph LP over (x, t): cost (0, …, 0, 1), the m × (d+1) block
    [A, −1] of A_ub, and the bounds (−c ≤ x_j ≤ c, t free)."""
    m, d = A.shape
    cost = np.zeros(d + 1)
    cost[-1] = 1.0
    block = np.hstack([A, -np.ones((m, 1))])
    bounds = np.array([(-c, c)] * d + [(-np.inf, np.inf)])
    return cost, block, bounds


def _check_solved(result, what: str) -> None:
    if result.status != 0:
        raise RuntimeError(f"HiGHS failed on {what}: status {result.status} ({result.message})")


def solve_lp(A: np.ndarray, b: np.ndarray, c: float) -> tuple[np.ndarray, float]:
    """(x_opt, f(x_opt)) of min_{−c⪯x⪯c} max_i (a_iᵀx + b_i), by HiGHS on the epigraph LP.

    x_opt is clipped onto the box (HiGHS may overstep a bound by its 1e-7 feasibility tolerance)
    and the value is f recomputed at that x, not the LP's t."""
    A = _slopes(A)
    b = _offsets(b, A.shape[0])
    if b.ndim != 1:
        raise ValueError(f"b must have shape ({A.shape[0]},), got {b.shape}; use solve_lp_batch for several")
    c = check_positive("c", c)
    cost, block, bounds = _epigraph(A, c)
    result = linprog(cost, A_ub=block, b_ub=-b, bounds=bounds, method="highs")
    _check_solved(result, "the epigraph LP")
    x = project_box(result.x[:-1], c)
    return x, objective(A, b, x)


def solve_lp_batch(A: np.ndarray, B: np.ndarray, c: float) -> tuple[np.ndarray, np.ndarray]:
    """Minimisers X (R × d) and optimal values (R,) for R databases B (R × m) sharing A and c.

    Runs are solved ⌈R·m/5000⌉ block-diagonal LPs at a time (module docstring); each block's
    minimiser is clipped onto the box and its value recomputed, as in :func:`solve_lp`."""
    A = _slopes(A)
    m, d = A.shape
    B = np.atleast_2d(_offsets(B, m, "B"))
    c = check_positive("c", c)
    cost, block, bounds = _epigraph(A, c)
    R = B.shape[0]
    chunk = max(1, _CONSTRAINTS_PER_LP // m)
    X = np.empty((R, d))
    for start in range(0, R, chunk):
        rows = B[start : start + chunk]
        k = rows.shape[0]
        big = sp.kron(sp.identity(k, format="csr"), sp.csr_matrix(block), format="csr")
        result = linprog(np.tile(cost, k), A_ub=big, b_ub=-rows.ravel(), bounds=np.tile(bounds, (k, 1)), method="highs")
        _check_solved(result, f"the block LP of runs {start}..{start + k - 1}")
        X[start : start + k] = result.x.reshape(k, d + 1)[:, :d]
    X = project_box(X, c)
    return X, objective(A, B, X)


@dataclass(frozen=True)
class PWAProblem:
    """One instance of han_pwa problem (3) on the box P = {−c ⪯ x ⪯ c} (Sec. 5.1).

    A (m × d) and c are public; b (m,) is the private database D, adjacent to every b′ with
    max_i |b_i − b_i′| ≤ b_max (eq. 4). Arrays are copied and made read-only.
    """

    A: np.ndarray
    b: np.ndarray
    c: float
    b_max: float

    def __post_init__(self) -> None:
        A = _slopes(self.A).copy()
        b = _offsets(self.b, A.shape[0]).copy()
        if b.ndim != 1:
            raise ValueError(f"b must have shape ({A.shape[0]},), got {b.shape}")
        A.setflags(write=False)
        b.setflags(write=False)
        object.__setattr__(self, "A", A)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "c", check_positive("c", self.c))
        object.__setattr__(self, "b_max", check_positive("b_max", self.b_max))

    @property
    def m(self) -> int:
        """The number of affine pieces."""
        return self.A.shape[0]

    @property
    def d(self) -> int:
        """The dimension of x."""
        return self.A.shape[1]

    @property
    def diameter(self) -> float:
        """diam(P) = max_{x,y∈P} ‖x − y‖₂ = 2√d·c (han_pwa Sec. 5.1)."""
        return 2.0 * math.sqrt(self.d) * self.c

    @property
    def lipschitz(self) -> float:
        """G = max_i ‖a_i‖₂, the Lipschitz constant of f (han_pwa Thm 17 and 24)."""
        return float(np.linalg.norm(self.A, axis=1).max())

    def objective(self, X: np.ndarray) -> np.ndarray | float:
        """f at a point (d,) → float, or at every row of an R × d batch → (R,)."""
        return objective(self.A, self.b, X)

    def project(self, X: np.ndarray) -> np.ndarray:
        """The Euclidean projection onto P (coordinate-wise clipping)."""
        return project_box(X, self.c)

    def solve(self) -> tuple[np.ndarray, float]:
        """(x_opt, f_opt) by HiGHS on the epigraph LP (:func:`solve_lp`)."""
        return solve_lp(self.A, self.b, self.c)

    def with_offsets(self, b: np.ndarray) -> PWAProblem:
        """The same public data (A, c, b_max) with another database b."""
        return PWAProblem(self.A, b, self.c, self.b_max)


def make_problem(
    m: int = DEFAULT_M,
    *,
    d: int = DEFAULT_D,
    c: float = DEFAULT_C,
    b_max: float = DEFAULT_B_MAX,
    seed: int = 0,
    a_std: float = 1.0,
    b_std: float = 1.0,
) -> PWAProblem:
    """A han_pwa Sec. 5.1 instance: a_i ~ N(0, a_std²·I_d), b_i ~ N(0, b_std²), i.i.d., nested in m.

    Row i (a_i, b_i) is ``default_rng(child_i).standard_normal(d + 1)`` scaled, child_i the i-th
    spawn of ``SeedSequence(seed)``: the first m rows are the same for every larger m (Sec. 5.2)
    and do not depend on c or b_max. The defaults (d = 10, b_max = 1, c = 1, m = 50, unit
    variances) are our choices; the paper states none of them.
    """
    m, d = check_count("m", m), check_count("d", d)
    c, b_max = check_positive("c", c), check_positive("b_max", b_max)
    a_std, b_std = check_positive("a_std", a_std), check_positive("b_std", b_std)
    if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    rows = np.array(
        [np.random.default_rng(s).standard_normal(d + 1) for s in np.random.SeedSequence(int(seed)).spawn(m)]
    )
    return PWAProblem(A=a_std * rows[:, :d], b=b_std * rows[:, d], c=c, b_max=b_max)
