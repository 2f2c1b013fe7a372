"""The data term of a GLM objective, (1/n̄)Σᵢ ℓ(θ; dᵢ), as the practical methods use it: the rows' sum over the
public n̄ (never over the number of rows, which under add/remove is secret), without the model's ridge μ."""

from __future__ import annotations

import numpy as np


def data_gradient(problem, theta: np.ndarray) -> np.ndarray:
    """∇ of the data term (1/n̄)Σᵢ ℓ(θ; dᵢ) (the rows' sum over the public n̄)."""
    _, gradient = problem.objective_and_gradient(theta)  # mean over the rows + μθ
    return (gradient - problem.reg * theta) * (problem.n / problem.n_public)


def logistic_upper_bound(margins: np.ndarray) -> np.ndarray:
    """tanh(m/2)/(2m) (1/4 at m = 0): the coefficient of the tightest quadratic that bounds the logistic loss
    above and touches it at m (Jaakkola & Jordan 2000; the authors' ``upperbound``); in (0, 1/4]."""
    m = np.asarray(margins, dtype=float)
    safe = np.where(np.abs(m) > 1e-9, m, 1.0)
    return np.where(np.abs(m) > 1e-9, 0.5 * np.tanh(safe / 2.0) / safe, 0.25)


def data_hessian(problem, theta: np.ndarray, curvature: str = "hessian") -> np.ndarray:
    """∇² of the data term (1/n̄)Σᵢ ℓ(θ; dᵢ), or (``upper_bound``) the matrix of its tightest quadratic upper
    bound at θ (logistic loss)."""
    weights = logistic_upper_bound if curvature == "upper_bound" else None
    hessian = problem.hessian(theta, weights)  # mean over the rows + μI
    hessian[np.diag_indices_from(hessian)] -= problem.reg
    return hessian * (problem.n / problem.n_public)
