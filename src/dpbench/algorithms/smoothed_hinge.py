"""The minimum of the ℓ2-regularised hinge loss on data too large to copy, with a certified gap.

The objective is F(w) = (1/n) Σ max(0, 1 − y_i x_iᵀw) + (μ/2)‖w‖². liblinear's dual coordinate
descent (the NON-PRIVATE baseline, :mod:`dpbench.algorithms.baselines`) builds its own float64
copy of X at 16 bytes per entry; on epsilon-sized dense data (400,000 × 2,000) that copy alone is
12.8 GB. This solver reads X only through products (:mod:`dpbench.problems.products`), so it
never copies it. The products are accumulated in float64; float32 rows are converted block by block.

It runs by continuation. L-BFGS minimises the huberized hinge ℓ_h of chen_lee Sec 5.3, which is
within h/4 of the hinge, for h = 1, 0.1, 0.01, …, each run warm-started from the last. After each
run the solver checks the Lagrange dual of F (e.g. Shalev-Shwartz & Zhang, JMLR 2013, eq. (2)):

    D(α) = (1/n) Σ α_i − (1/(2μ)) ‖(1/n) Σ α_i y_i x_i‖²,  α ∈ [0, 1]ⁿ,

with D(α) ≤ F* ≤ F(w) for every such α and every w. The dual point is α_i = −ℓ_h′(y_i x_iᵀw), which
is optimal for the smoothed problem. The primal point is the better of w and the dual's own
w(α) = (1/(μn)) Σ α_i y_i x_i. The solver stops when the gap F(w) − D(α) is ≤ ``gap_tol``.
The returned value is then within the reported gap of F*.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from dpbench.problems.glm import GLMProblem
from dpbench.problems.losses import HuberHingeLoss
from dpbench.problems.products import exact_matvec, exact_rmatvec

log = logging.getLogger(__name__)

FIRST_SMOOTHING = 1.0
SMOOTHING_FACTOR = 0.1
SMALLEST_SMOOTHING = 1e-9


@dataclass(frozen=True)
class HingeOptimum:
    """The solver's answer: the weights, F at them, the certified gap F(w) − D(α) ≥ F(w) − F*, and
    the number of L-BFGS iterations over all smoothing levels."""

    w: np.ndarray
    value: float
    gap: float
    n_iterations: int


def hinge_optimum(problem: GLMProblem, gap_tol: float, max_iter: int) -> HingeOptimum:
    """Minimise the hinge objective of ``problem`` (μ > 0, no ℓ1 term) to a duality gap ≤ ``gap_tol``
    (module docstring), with every product accumulated in float64 (float32 data included: their
    float32 products are 1e-6 off, more than the gap). ``max_iter`` bounds each L-BFGS run. Raises
    when the smoothing reaches 1e-9 without certifying the gap."""
    from scipy.optimize import minimize

    if problem.loss.name != "hinge" or problem.reg <= 0 or problem.l1_reg:
        raise ValueError(
            f"hinge_optimum needs the hinge loss with μ > 0 and no ℓ1 term; got {problem.loss.name}, "
            f"μ = {problem.reg}, φ = {problem.l1_reg}"
        )
    w, iterations, h = np.zeros(problem.dim), 0, FIRST_SMOOTHING
    while True:
        smoothed = HuberHingeLoss(h)
        result = minimize(
            _smoothed_objective,
            w,
            args=(problem, smoothed),
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": max_iter, "gtol": 1e-12, "ftol": 1e-15, "maxcor": 20},
        )
        w, iterations = result.x, iterations + int(result.nit)
        best = _certified(problem, w, smoothed)
        log.info("F* by smoothing: h = %.0e, %d L-BFGS iterations, duality gap %.3g", h, result.nit, best.gap)
        if best.gap <= gap_tol:
            return HingeOptimum(best.w, best.value, best.gap, iterations)
        h *= SMOOTHING_FACTOR
        if h < SMALLEST_SMOOTHING:
            raise RuntimeError(f"the smoothed hinge solver stopped at a duality gap of {best.gap:.3g} > {gap_tol:g}")


def _smoothed_objective(w: np.ndarray, problem: GLMProblem, loss: HuberHingeLoss) -> tuple[float, np.ndarray]:
    """F_h(w) = mean ℓ_h(y_i x_iᵀw) + (μ/2)‖w‖² and its gradient (counted as n evaluations of each)."""
    problem.counts.obj_evals += problem.n
    problem.counts.grad_evals += problem.n
    margins = problem.y * exact_matvec(problem.X, w)
    value = loss.value(margins).mean() + 0.5 * problem.reg * (w @ w)
    grad = exact_rmatvec(problem.X, loss.derivative(margins) * problem.y) / problem.n + problem.reg * w
    return float(value), grad


def _hinge_objective(problem: GLMProblem, w: np.ndarray) -> float:
    return float(np.maximum(0.0, 1.0 - problem.y * exact_matvec(problem.X, w)).mean() + 0.5 * problem.reg * (w @ w))


def _certified(problem: GLMProblem, w: np.ndarray, smoothed: HuberHingeLoss) -> HingeOptimum:
    """The better of w and w(α), and its gap to the dual value D(α) at α = −ℓ_h′(margins of w)."""
    n, mu = problem.n, problem.reg
    alpha = -smoothed.derivative(problem.y * exact_matvec(problem.X, w))
    v = exact_rmatvec(problem.X, alpha * problem.y) / n
    dual = float(alpha.mean() - v @ v / (2.0 * mu))
    value, best = min(((_hinge_objective(problem, x), x) for x in (w, v / mu)), key=lambda pair: pair[0])
    return HingeOptimum(best, value, max(value - dual, 0.0), 0)
