"""Approximate Minima Perturbation (AMP) and its hyper-parameter-free schedule (Iyengar, Near, Song,
Thakkar, Thakurta & Wang, "Towards Practical Differentially Private Convex Optimization", IEEE S&P
2019, Algorithm 1; the authors' code: sunblaze-ucb/dpml-benchmark, ``algorithms/
approximate_minima_perturbation.py``).

Objective perturbation that does not need the exact minimiser. For a GLM whose rows are clipped to L2
norm c (``clip``), ζ = c·sup|ℓ′| and λ = c²·sup ℓ″ (logistic: c and c²/4). With ε, δ the fit's budget:

1. ε_out = ``output_share``·ε and δ_out = ``output_share``·δ go to the output, ε_obj = ε − ε_out and
   δ_obj = δ − δ_out to the objective, of which ε_noise = ``noise_share``·ε_obj to its linear term;
2. b and Λ = 2λ/(ε_obj − ε_noise) from :func:`dpbench.privacy.mechanisms.amp_objective_noise`
   (σ = 2ζ(1 + √(2 ln(1/δ_obj)))/ε_noise; charged (ε_obj, δ_obj));
3. θ̂ with ‖∇J(θ̂)‖ ≤ γ (``gradient_tol``, default 1/n̄², the authors' ``gamma = 1/n**2``) for
   J(θ) = (1/n̄)[Σᵢ ℓ(θ; dᵢ) + (n̄μ/2 + Λ/2)‖θ‖² + bᵀθ], by L-BFGS;
4. released: θ̂ + N(0, σ_out²I) from :func:`~dpbench.privacy.mechanisms.tail_bound_gaussian_mechanism`
   at sensitivity 2n̄γ/(Λ + n̄μ) (charged (ε_out, δ_out)).

:mod:`dpbench.privacy.minima_perturbation` proves the two releases (ε_obj + ε_out, δ_obj + δ_out)-DP
under replace-one and under add/remove (n̄ public). A fit that cannot certify ‖∇J(θ̂)‖ ≤ γ releases
nothing: its job stops with one line naming γ.

The hyper-parameter-free schedule (:class:`HyperparameterFreeAMP`, the authors' "AMP-NT") fixes c = 1,
``output_share`` = 0.01, γ = 1/n̄² and ``noise_share`` = max(min(0.88671 + 0.0186607/ε^0.372906, 0.99),
1 − 1/ε + 0.001), their "Strategy #1" (``eps_frac is None``), fitted on public datasets: nothing is
tuned, so it ranks with ``tuning=fixed``.

``fidelity=authors_code`` runs AMP as their code does (:data:`AUTHORS_CODE`); three of its departures break
the guarantee, and its rows say so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy.optimize import minimize

from dpbench.algorithms.base import Algorithm, AuditCoverage, FidelityMode, FitResult, Look
from dpbench.algorithms.palette import LIGHT_PINK, PINK
from dpbench.constraints import COUNT, POSITIVE, PROBABILITY_OPEN, Constraint
from dpbench.privacy.mechanisms import amp_objective_noise, tail_bound_gaussian_mechanism
from dpbench.privacy.minima_perturbation import amp_regulariser, tail_bound_gaussian_sigma
from dpbench_practical.data_terms import data_hessian

AUTHORS_MAX_ATTEMPTS = 60
"""The authors' code retries without end; this emulation stops after so many attempts."""

NEWTON_STEPS = 8
"""Newton steps after L-BFGS when it stops short of γ (quadratic convergence: two or three suffice)."""

AUTHORS_RETRY_OUTPUT_SHARE = 0.01
"""The ``eps_out_frac`` of a retry: the recursive call does not pass it, so it takes the default."""

AUTHORS_CODE = FidelityMode(
    changes=(
        (
            "output noise calibrated to sensitivity n̄γ/Λ (sensitivity_out = n*gamma/big_lambda), half the 2n̄γ/Λ "
            "of the composition argument, and without the model's μ"
        ),
        "λ = c² (beta = pow(L, 2)) where the logistic loss has c²/4: Λ four times larger",
        "the model's L2 term μ is left out of the objective (lambda_param is unused)",
        (
            "scipy BFGS to gtol = γ; when it reports failure, a new attempt with fresh noise and γ doubled "
            "(or the objective scaled by 10 while γ < 10⁻⁴), unpaid, until one succeeds; a retry splits ε at the "
            "default eps_out_frac = 0.01 (the recursive call does not pass it on)"
        ),
        (
            "each attempt's noise comes from numpy seeded with one random byte (np.random.seed(ord(os.urandom(1)))): "
            "one of 256 streams"
        ),
    ),
    breaks_guarantee=(
        "unpaid retries with fresh noise, 256 possible noise streams, and output noise for half the sensitivity"
    ),
)
"""AMP as sunblaze-ucb/dpml-benchmark's ``amp_run_classification`` runs it."""


def hyperparameter_free_noise_share(epsilon: float) -> float:
    """The share of the objective's ε given to its linear noise by the authors' "Strategy #1"
    (``eps_frac is None``): max(min(0.88671 + 0.0186607/ε^0.372906, 0.99), 1 − 1/ε + 0.001)."""
    best = min(0.88671 + 0.0186607 / epsilon**0.372906, 0.99)
    return max(best, 1.0 - 1.0 / epsilon + 0.001)


class _MinimaPerturbation(Algorithm):
    """What AMP and its hyper-parameter-free schedule share: the fit, given the budget's split."""

    accountant: ClassVar[str] = "approx"
    secure_sampler: ClassVar[bool] = False  # both releases are numpy Gaussians
    relations: ClassVar[dict[str, str]] = {"add_remove": "native", "replace_one": "native"}
    paper_relation: ClassVar[str] = "replace_one"
    supported_losses: ClassVar[frozenset[str]] = frozenset({"logistic", "huber_hinge"})
    unsupported_reason: ClassVar[str] = "objective perturbation needs a loss with a bounded second derivative"
    audit: ClassVar[AuditCoverage] = AuditCoverage(("amp_objective", "tail_bound_gaussian"))
    paper: ClassVar[str] = "iyengar_amp"
    fidelity_modes: ClassVar[dict[str, FidelityMode]] = {"authors_code": AUTHORS_CODE}

    def settings(self, epsilon: float) -> tuple[float, float, float, float | None]:
        """(noise_share, output_share, clip, gradient_tol or None for 1/n̄²) at the fit's ε."""
        raise NotImplementedError

    def fit(self, problem, ledger, rng: np.random.Generator, tracer) -> FitResult:
        noise_share, _, clip, tol = self.settings(ledger.epsilon)
        problem = problem.within(row_norm=clip)
        n = problem.n_public
        gamma = 1.0 / n**2 if tol is None else tol
        if self.fidelity == "authors_code":
            return self._authors_fit(problem, ledger, rng, tracer, noise_share, clip, gamma)
        zeta, lam = clip * problem.loss.lipschitz, clip**2 * problem.loss.smoothness
        b, regulariser = self._objective_release(problem.dim, ledger, rng, noise_share, zeta, lam)
        theta = _certified_minimiser(problem, regulariser, b, gamma, self.max_iter)
        sensitivity = 2.0 * n * gamma / (regulariser + n * problem.reg)
        info = {"regulariser": regulariser, "noise_share": noise_share, "gradient_tol": gamma}
        return self._output_release(theta, sensitivity, ledger, rng, tracer, info)

    def _authors_fit(self, problem, ledger, rng, tracer, noise_share: float, clip: float, gamma: float) -> FitResult:
        """``amp_run_classification`` of the authors' file on these rows. The ledger holds what they claim:
        the first attempt's objective and the released output; the failed attempts' noise is not charged.
        A retry is their recursive call, which does not pass ``eps_out_frac`` on: it splits at the default 0.01."""
        n, d = problem.n_public, problem.dim
        beta = clip**2  # beta = pow(L, 2)
        mult, attempts, share = 1.0, 0, self.settings(ledger.epsilon)[1]
        while attempts < AUTHORS_MAX_ATTEMPTS:
            attempts += 1
            stream = np.random.default_rng(int(rng.integers(256)))  # np.random.seed(ord(os.urandom(1)))
            (eps_obj, delta_obj), _ = self._budget(ledger, share)
            if attempts == 1:  # the release they account for
                b, regulariser = self._objective_release(d, ledger, stream, noise_share, clip, beta)
            else:  # an unpaid retry
                regulariser = amp_regulariser(curvature_bound=beta, epsilon=eps_obj, noise_share=noise_share)
                sigma = tail_bound_gaussian_sigma(
                    sensitivity=2.0 * clip, epsilon=noise_share * eps_obj, delta=delta_obj
                )
                b = stream.normal(0.0, sigma, size=d)
            theta, success = _authors_bfgs(problem, regulariser, b, gamma, mult)
            if success:  # the one output they account for, whichever attempt made it
                info = {"regulariser": regulariser, "noise_share": noise_share, "gradient_tol": gamma}
                sensitivity = n * gamma / regulariser  # sensitivity_out = n*gamma/big_lambda
                info["attempts"] = attempts
                return self._output_release(theta, sensitivity, ledger, stream, tracer, info, share)
            share = AUTHORS_RETRY_OUTPUT_SHARE
            if gamma * mult < 1e-4:
                mult *= 10.0
            else:
                mult, gamma = 1.0, 2.0 * gamma
        raise ValueError(f"{self.name}: the authors' BFGS failed {AUTHORS_MAX_ATTEMPTS} times")

    def _budget(self, ledger, share: float | None = None) -> tuple[tuple[float, float], tuple[float, float]]:
        """((ε_obj, δ_obj), (ε_out, δ_out)): ``output_share`` (or ``share``) of the fit's ε and δ to the output
        (the authors' ``delta_out_frac = eps_out_frac``), the rest to the objective."""
        share = self.settings(ledger.epsilon)[1] if share is None else share
        eps_out, delta_out = share * ledger.epsilon, share * ledger.delta
        return (ledger.epsilon - eps_out, ledger.delta - delta_out), (eps_out, delta_out)

    def _objective_release(
        self, dim: int, ledger, rng, noise_share: float, gradient_bound: float, curvature_bound: float
    ) -> tuple[np.ndarray, float]:
        """(b, Λ) of the perturbed objective, charged (ε_obj, δ_obj)."""
        (eps_obj, delta_obj), _ = self._budget(ledger)
        return amp_objective_noise(
            dim,
            gradient_bound=gradient_bound,
            curvature_bound=curvature_bound,
            epsilon=eps_obj,
            noise_share=noise_share,
            delta=delta_obj,
            rng=rng,
            ledger=ledger,
            label="amp.objective",
        )

    def _output_release(
        self, theta, sensitivity: float, ledger, rng, tracer, info: dict, share: float | None = None
    ) -> FitResult:
        """θ̂ + N(0, σ_out²I) at ``sensitivity``, charged (ε_out, δ_out): the fit's one release."""
        _, (eps_out, delta_out) = self._budget(ledger, share)
        released = tail_bound_gaussian_mechanism(
            theta, sensitivity=sensitivity, epsilon=eps_out, delta=delta_out, rng=rng, ledger=ledger, label="amp.output"
        )
        tracer.record(1, released, step_size=math.nan, force=True)
        return FitResult(w=released, n_iterations=1, info=info)


def _perturbed_objective(problem, regulariser: float, b: np.ndarray, with_reg: bool = True):
    """J(θ) = (1/n̄)[Σᵢ ℓ(θ; dᵢ) + (Λ/2)‖θ‖² + bᵀθ] + (μ/2)‖θ‖² (μ left out when not ``with_reg``), with its
    gradient; the data term's mean over the rows is rescaled to a sum over n̄ (n̄ public)."""
    n = problem.n_public
    scale = problem.n / n
    mu = problem.reg

    def value_and_gradient(theta: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = problem.objective_and_gradient(theta)  # mean loss + (μ/2)‖θ‖²
        reg_value, reg_grad = 0.5 * mu * (theta @ theta), mu * theta
        value, grad = (value - reg_value) * scale, (grad - reg_grad) * scale
        if with_reg:
            value, grad = value + reg_value, grad + reg_grad
        value += (0.5 * regulariser * (theta @ theta) + b @ theta) / n
        return value, grad + (regulariser * theta + b) / n

    return value_and_gradient


def _certified_minimiser(problem, regulariser: float, b: np.ndarray, gamma: float, max_iter: int) -> np.ndarray:
    """θ̂ with ‖∇J(θ̂)‖₂ ≤ γ: L-BFGS-B to the max-norm tolerance γ/√d (which implies it), then Newton steps
    on J's exact Hessian, which need no line search on J's value (its changes near the minimiser fall below
    float resolution before ‖∇J‖ reaches γ = 1/n̄²); refused when neither certifies the bound."""
    objective = _perturbed_objective(problem, regulariser, b)
    options = {"maxiter": max_iter, "gtol": gamma / math.sqrt(problem.dim), "ftol": 0.0, "maxcor": 20}
    theta = minimize(objective, np.zeros(problem.dim), jac=True, method="L-BFGS-B", options=options).x
    for _ in range(NEWTON_STEPS + 1):
        if not np.all(np.isfinite(theta)):
            raise ValueError("amp: the perturbed objective diverged")
        gradient = objective(theta)[1]
        if np.linalg.norm(gradient) <= gamma:
            return theta
        theta = theta - np.linalg.solve(_perturbed_hessian(problem, regulariser, theta), gradient)
    raise ValueError(
        f"amp: L-BFGS and {NEWTON_STEPS} Newton steps could not bring ‖∇J‖ to γ = {gamma:.3g}; "
        "raise algorithm.gradient_tol"
    )


def _perturbed_hessian(problem, regulariser: float, theta: np.ndarray) -> np.ndarray:
    """∇²J(θ): the data term's Hessian plus (μ + Λ/n̄)I."""
    hessian = data_hessian(problem, theta)
    hessian[np.diag_indices_from(hessian)] += problem.reg + regulariser / problem.n_public
    return hessian


def _authors_bfgs(problem, regulariser: float, b: np.ndarray, gamma: float, mult: float) -> tuple[np.ndarray, bool]:
    """``minimize(private_loss, x0, method='BFGS', jac=private_gradient, options={'gtol': gamma*mult,
    'norm': 2})`` on mult·J without μ; (θ, result.success)."""
    objective = _perturbed_objective(problem, regulariser, b, with_reg=False)

    def scaled(theta: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = objective(theta)
        return value * mult, grad * mult

    result = minimize(scaled, np.zeros(problem.dim), jac=True, method="BFGS", options={"gtol": gamma * mult, "norm": 2})
    return result.x, bool(result.success)


@dataclass
class ApproximateMinimaPerturbation(_MinimaPerturbation):
    """AMP with its four hyper-parameters (module docstring): ``noise_share`` (the authors' ``eps_frac``),
    ``output_share`` (``eps_out_frac``), ``clip`` (their row norm ``L``) and ``gradient_tol`` (γ; None:
    1/n̄²); ``max_iter`` bounds each L-BFGS run. Its tuning grid is the authors' (gridsearch.py, 'AMP')."""

    noise_share: float = 0.9
    output_share: float = 0.01
    clip: float = 1.0
    gradient_tol: float | None = None
    max_iter: int = 20_000
    fidelity: str = "correct"

    name: ClassVar[str] = "amp"
    label: ClassVar[str] = "AMP"
    look: ClassVar[Look] = Look(PINK, "D")
    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        "noise_share": [PROBABILITY_OPEN],
        "output_share": [PROBABILITY_OPEN],
        "clip": [POSITIVE],
        "gradient_tol": [POSITIVE, None],
        "max_iter": [COUNT],
    }
    tuning_grid: ClassVar[dict[str, list]] = {
        "noise_share": [0.9, 0.95, 0.98, 0.99],
        "output_share": [0.001, 0.01, 0.1, 0.5],
        "clip": [0.1, 1.0, 10.0],
    }

    def settings(self, epsilon: float) -> tuple[float, float, float, float | None]:
        return self.noise_share, self.output_share, self.clip, self.gradient_tol


@dataclass
class HyperparameterFreeAMP(_MinimaPerturbation):
    """AMP with the authors' hyper-parameter-free schedule (module docstring): nothing to tune."""

    max_iter: int = 20_000
    fidelity: str = "correct"

    name: ClassVar[str] = "amp_hf"
    label: ClassVar[str] = "AMP-HF"
    look: ClassVar[Look] = Look(LIGHT_PINK, "D")
    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {"max_iter": [COUNT]}

    def settings(self, epsilon: float) -> tuple[float, float, float, float | None]:
        return hyperparameter_free_noise_share(epsilon), 0.01, 1.0, None
