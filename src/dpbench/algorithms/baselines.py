"""Reference baselines of chen_lee Sec 5.3: NON-PRIVATE (the L-BFGS optimum) and MAJORITY.

Both look at the training data without noise, so they are marked ``private = False``: the
engine records ε = ∞ for them and draws them as reference lines, never as private methods.
Their solvers (scipy.optimize, scikit-learn) are imported when first used, not with the algorithm
registry: a configuration error is then answered without loading scikit-learn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpbench.algorithms.base import Algorithm, FitResult, Look, Tracer
from dpbench.algorithms.palette import BLACK, GREY
from dpbench.constraints import COUNT, POSITIVE, Constraint

LIBLINEAR_MAX_DENSE_ENTRIES = 1 << 24  # liblinear's own copy of 16M dense entries: 256 MB
HINGE_GAP_TOL = 1e-7  # certified F(w) − F* of the smoothed hinge solver (F(0) = 1 for the hinge)


@dataclass
class NonPrivate(Algorithm):
    """Minimise F(w) = (1/n) Σ ℓ_i(w) + (μ/2)‖w‖² to a tight tolerance (chen_lee Sec 5.3).

    Smooth losses use scipy's L-BFGS-B from w = 0; the non-smooth hinge loss, on which
    quasi-Newton methods stall, is solved by liblinear's dual coordinate descent
    (scikit-learn ``LinearSVC``) with C = 1/(nμ), which minimises the same objective up to the
    factor μ. Dense data of more than ``LIBLINEAR_MAX_DENSE_ENTRIES`` entries, of which liblinear would
    make a float64 copy at 16 bytes per entry, are solved instead without a copy by smoothing
    continuation to a certified duality gap ≤ ``HINGE_GAP_TOL`` (:mod:`~dpbench.algorithms.smoothed_hinge`;
    ``info["certified_gap"]``). With an ℓ1 term and no ℓ2 term (liu_dda Sec 5.3, F = mean hinge + φ‖w‖₁) F is a
    linear program, solved exactly (to HiGHS's 1e-7 feasibility tolerance) by scipy's HiGHS:
    min φ𝟏ᵀ(u + v) + (1/n)𝟏ᵀξ s.t. y_i x_iᵀ(u − v) + ξ_i ≥ 1, u, v, ξ ≥ 0, w = u − v.
    Its objective value is the F* of the suboptimality metric.

    Neighbouring relation: ``none`` — it reads the data without noise and protects no one.
    """

    tol: float = 1e-10
    max_iter: int = 200_000

    name: ClassVar[str] = "nonprivate"
    label: ClassVar[str] = "NON-PRIVATE"
    look: ClassVar[Look] = Look(BLACK, "", "--")
    paper: ClassVar[str] = "baseline"
    private: ClassVar[bool] = False
    supports_l1: ClassVar[bool] = True

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {"tol": [POSITIVE], "max_iter": [COUNT]}

    def fit(self, problem, ledger, rng: np.random.Generator, tracer: Tracer) -> FitResult:
        info: dict = {}
        if problem.l1_reg:
            w, n_iter = self._l1_hinge_lp(problem)
        elif problem.loss.smoothness is None and _too_large_for_liblinear(problem):
            from dpbench.algorithms.smoothed_hinge import hinge_optimum

            optimum = hinge_optimum(problem, HINGE_GAP_TOL, self.max_iter)
            w, n_iter, info = (
                optimum.w,
                optimum.n_iterations,
                {"solver": "smoothed_hinge", "certified_gap": optimum.gap},
            )
        elif problem.loss.smoothness is None:
            w, n_iter = self._liblinear(problem)
        else:
            w, n_iter = self._lbfgs(problem)
        tracer.record(n_iter, w, step_size=float("nan"), force=True)
        return FitResult(w=w, n_iterations=n_iter, info=info)

    def _lbfgs(self, problem) -> tuple[np.ndarray, int]:
        from scipy.optimize import minimize

        result = minimize(
            problem.objective_and_gradient,
            np.zeros(problem.dim),
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": self.max_iter, "gtol": self.tol, "ftol": self.tol * 1e-4, "maxcor": 20},
        )
        return result.x, int(result.nit)

    def _liblinear(self, problem) -> tuple[np.ndarray, int]:
        if problem.loss.name != "hinge":
            raise ValueError(f"no exact solver for the non-smooth {problem.loss.name} loss")
        if problem.reg <= 0:
            raise ValueError("the non-private hinge-loss solver needs a regulariser μ > 0")
        from sklearn.svm import LinearSVC

        svc = LinearSVC(
            loss="hinge",
            C=1.0 / (problem.n * problem.reg),
            fit_intercept=False,
            dual=True,
            tol=self.tol,
            max_iter=self.max_iter,
        )
        svc.fit(problem.X, problem.y)
        problem.counts.grad_evals += problem.n * int(svc.n_iter_)
        return svc.coef_.ravel().copy(), int(svc.n_iter_)

    def _l1_hinge_lp(self, problem) -> tuple[np.ndarray, int]:
        if problem.loss.name != "hinge" or problem.reg:
            raise ValueError(
                f"the non-private ℓ1 solver is a linear program for the hinge loss without an ℓ2 term; got loss "
                f"{problem.loss.name} with μ = {problem.reg}"
            )
        import scipy.sparse as sp
        from scipy.optimize import linprog

        n, d = problem.n, problem.dim
        signed = sp.csr_array(sp.diags_array(problem.y) @ sp.csr_array(problem.X))
        constraints = sp.hstack([-signed, signed, -sp.eye_array(n)], format="csc")
        cost = np.concatenate([np.full(2 * d, problem.l1_reg), np.full(n, 1.0 / n)])
        result = linprog(
            cost, A_ub=constraints, b_ub=-np.ones(n), bounds=(0, None), method="highs-ipm"
        )  # + crossover: a vertex
        if result.status != 0:
            raise RuntimeError(f"HiGHS did not solve the ℓ1-SVM linear program: {result.message}")
        problem.counts.grad_evals += n
        return result.x[:d] - result.x[d : 2 * d], int(result.nit)


def _too_large_for_liblinear(problem) -> bool:
    import scipy.sparse as sp

    return not sp.issparse(problem.X) and problem.n * problem.dim > LIBLINEAR_MAX_DENSE_ENTRIES


@dataclass
class Majority(Algorithm):
    """Predict the most frequent training label for every example (chen_lee Sec 5.3, Table 1).

    Neighbouring relation: ``none`` — the label is released without noise."""

    name: ClassVar[str] = "majority"
    label: ClassVar[str] = "MAJORITY"
    look: ClassVar[Look] = Look(GREY, "", ":")
    paper: ClassVar[str] = "baseline"
    private: ClassVar[bool] = False

    def fit(self, problem, ledger, rng: np.random.Generator, tracer: Tracer) -> FitResult:
        label = 1.0 if problem.y.sum() >= 0 else -1.0
        return FitResult(w=None, n_iterations=0, constant_label=label)
