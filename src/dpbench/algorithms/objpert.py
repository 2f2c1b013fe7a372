"""ObjPert: objective perturbation (Chaudhuri, Monteleoni & Sarwate, JMLR 2011; the (ε, δ)
Gaussian version of Kifer, Smith & Thakurta, COLT 2012, Thm 2), a baseline of chen_lee Sec 5.3.

Minimise J(w) = F(w) + (Δ/(2n))‖w‖² + bᵀw/n exactly, where F is the run's regularised objective,
Δ = 2λ/ε and b ~ N(0, σ²I) with σ² = ζ²(8 ln(2/δ) + 4ε)/ε²
(:func:`~dpbench.privacy.mechanisms.objective_perturbation_noise`). The guarantee needs
per-example gradients bounded by ζ and rank-one Hessians bounded by λ: for a GLM with ‖x_i‖ ≤ 1,
ζ = sup|ℓ′| = 1 and λ = sup ℓ″ (logistic 1/4, Huberized hinge 1/(2h)); so the method trains on
rows clipped to norm 1 (:meth:`~dpbench.problems.GLMProblem.within`, a no-op when the public bound
is already 1: ``conf/algorithm/objpert.yaml`` sets ``data.row_norm: 1``, as the public DP-AGD code
normalises rows for this method) and the hinge loss is refused. The minimiser is computed by
L-BFGS to a tight tolerance; the theorem assumes the exact one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.optimize import minimize

from dpbench.algorithms.base import Algorithm, FitResult, Tracer
from dpbench.privacy.mechanisms import objective_perturbation_noise


@dataclass
class ObjPert(Algorithm):
    """Objective perturbation with Gaussian noise (module docstring); ``tol`` is L-BFGS's gradient tolerance.

    Neighbouring relation: ``replace_one``. Kifer, Smith & Thakurta's Thm 2 (like Chaudhuri et al.
    2011) is proved for datasets differing in one entry with n fixed: the noise b that maps D's
    minimiser w to itself on D′ shifts by ∇ℓ_z(w) − ∇ℓ_z′(w), of norm ≤ 2ζ, which is what
    σ² = ζ²(8 ln(2/δ) + 4ε)/ε² is calibrated to. J divides Δ and b by the training-set size n while
    F's (μ/2)‖w‖² is not a sum over records, so under add/remove (n → n − 1) the shift is
    ∇ℓ_z(w) + μw instead, unbounded in ‖w‖.
    """

    tol: float = 1e-10
    max_iter: int = 20_000

    name: ClassVar[str] = "objpert"
    paper: ClassVar[str] = "chen_lee"
    accountant: ClassVar[str] = "approx"
    secure_sampler: ClassVar[bool] = False  # its Gaussian linear term has no discrete version here
    neighbouring: ClassVar[str] = "replace_one"
    supported_losses: ClassVar[frozenset[str]] = frozenset({"logistic", "huber_hinge"})
    unsupported_reason: ClassVar[str] = "objective perturbation needs a loss with a bounded second derivative"

    def __post_init__(self) -> None:
        if not (self.tol > 0 and self.max_iter >= 1):
            raise ValueError(f"objpert needs tol > 0 and max_iter ≥ 1, got tol={self.tol}, max_iter={self.max_iter}")

    def fit(self, problem, ledger, rng: np.random.Generator, tracer: Tracer) -> FitResult:
        problem = problem.within(row_norm=1.0)  # Thm 2 needs ‖x_i‖ ≤ 1: rows beyond a public bound of 1 are clipped
        n, epsilon = problem.n, ledger.epsilon
        curvature = problem.loss.smoothness  # λ for ‖x‖ ≤ 1
        extra_reg = 2.0 * curvature / epsilon  # Δ = 2λ/ε
        b = objective_perturbation_noise(
            problem.dim, gradient_bound=problem.loss.lipschitz, epsilon=epsilon, delta=ledger.delta, rng=rng, ledger=ledger
        )

        def perturbed(w: np.ndarray) -> tuple[float, np.ndarray]:
            value, grad = problem.objective_and_gradient(w)
            value += (0.5 * extra_reg * (w @ w) + b @ w) / n
            return value, grad + (extra_reg * w + b) / n

        result = minimize(
            perturbed, np.zeros(problem.dim), jac=True, method="L-BFGS-B",
            options={"maxiter": self.max_iter, "gtol": self.tol, "ftol": self.tol * 1e-4, "maxcor": 20},
        )
        if not np.all(np.isfinite(result.x)) or not math.isfinite(result.fun):
            raise ValueError("objpert: the perturbed objective diverged")
        tracer.record(int(result.nit), result.x, step_size=float("nan"), force=True)
        return FitResult(w=result.x, n_iterations=int(result.nit))
