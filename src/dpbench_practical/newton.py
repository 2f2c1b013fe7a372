"""DP-Newton with double noise, and the DP-GD it is compared with (Ganesh, Haghifam, Steinke & Thakurta,
"Faster Differentially Private Convex Optimization via Second-Order Methods", NeurIPS 2023; the authors'
code: tensorflow/privacy ``research/dp_newton/src/opt_algs.py``, ``DoubleNoiseMech`` and ``gd_priv``).

For a GLM with rows clipped to ‖x‖ ≤ 1, |ℓ′| ≤ G and ℓ″ ≤ β (logistic: 1 and 1/4), F(θ) =
(1/n̄)Σᵢ ℓ(θ; dᵢ) + (μ/2)‖θ‖². Each of T steps of DP-Newton splits its share ρ/T of the budget into
ρ_g = ``grad_share``·ρ/T, ρ_tr = (1 − ``grad_share``)·``trace_share``·ρ/T and ρ_dir = the rest, and releases,
through :func:`dpbench.privacy.mechanisms.gaussian_mechanism` (σ = Δ/√(2ρ′) each, ρ′-zCDP):

1. g̃ = ∇(data term)(θ) + N(0, σ_g²I), Δ = G/n̄, and the public μθ added;
2. the trace of the data term's Hessian H, + N(0, σ_tr²), Δ = β/n̄; then λ₀ = max((c·max(tr̃, 0)/(n̄²ρ_dir))^{1/3},
   1/n̄), c = ``trace_coeff``;
3. the direction v = M⁻¹g̃ + N(0, σ_dir²I), where M = H + μI + λ₀I (``modification=add``) or H + μI with every
   eigenvalue below λ₀ raised to λ₀ (``clip``), so that M ⪰ λI with λ = λ₀ + μ (add) or max(λ₀, μ) (clip). One
   record adds or removes a rank-one ℓ″xxᵀ/n̄ of norm ≤ β/n̄ to H, which moves M⁻¹ by at most β/(n̄λ² + βλ)
   (add; Sherman–Morrison along M's smallest eigenvector) or β/(n̄λ² − βλ) (clip), so v moves by at most ‖g̃‖
   times that: Δ_dir, public since g̃ is. (The authors' code has no μ: λ = λ₀.);
4. θ ← θ − v.

ρ is the largest total whose T steps the run's ledger can pay for (``accountant = rdp``: Gaussian events,
converted to (ε, δ) by the tight RDP conversion; the authors convert ε to ρ by Bun & Steinke's Lemma 3.6).
DP-GD (:class:`NoisyGD`, their ``gd_priv``): T steps θ ← θ − (∇(data term)(θ) + N(0, σ²I))/β − μθ/β, Δ = G/n̄.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpbench.algorithms.base import Algorithm, AuditCoverage, FitResult, Look
from dpbench.algorithms.palette import BROWN, LIGHT_BROWN
from dpbench.constraints import COUNT, PROBABILITY_OPEN, Constraint, Options, Real
from dpbench.privacy.calibrate import calibrate_noise
from dpbench.privacy.events import ComposedEvent, GaussianEvent
from dpbench.privacy.mechanisms import gaussian_mechanism
from dpbench_practical.data_terms import data_gradient, data_hessian


class _GLMOnRowsOfNormOne(Algorithm):
    """What the two methods share: rows clipped to norm 1, the logistic or Huberized-hinge loss, RDP (Gaussian
    releases), add/remove natively (replace-one by group privacy), the paper."""

    accountant: ClassVar[str] = "rdp"
    supported_losses: ClassVar[frozenset[str]] = frozenset({"logistic"})
    unsupported_reason: ClassVar[str] = (
        "the paper's GLM is logistic regression (its curvature bounds are the logistic loss's)"
    )
    paper: ClassVar[str] = "ganesh_newton"


@dataclass
class DPNewton(_GLMOnRowsOfNormOne):
    """DP-Newton with double noise (module docstring) at the authors' defaults (run_privacy_utility: T = 15,
    grad_frac 0.7, trace_frac 0.1, trace_coeff 0.5). ``curvature``: the Hessian (``hessian``, their DN-Hess) or the
    tightest quadratic upper bound of the logistic loss (``upper_bound``, DN-UB, the default: its step minimises a
    bound of F, so it cannot overshoot as the pure Newton step from far away does); both have entries ≤ β."""

    steps: int = 15
    grad_share: float = 0.7
    trace_share: float = 0.1
    trace_coeff: float = 0.5
    modification: str = "add"
    curvature: str = "upper_bound"

    name: ClassVar[str] = "dp_newton"
    label: ClassVar[str] = "DP-Newton"
    look: ClassVar[Look] = Look(BROWN, "s")
    audit: ClassVar[AuditCoverage] = AuditCoverage(("gaussian", "dp_newton_direction"))
    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        "steps": [COUNT],
        "grad_share": [PROBABILITY_OPEN],
        "trace_share": [PROBABILITY_OPEN],
        "trace_coeff": [Real(0, closed="neither")],
        "modification": [Options("add", "clip")],
        "curvature": [Options("hessian", "upper_bound")],
    }
    tuning_grid: ClassVar[dict[str, list]] = {"steps": [5, 15, 30], "grad_share": [0.5, 0.7, 0.9]}

    def noise_multipliers(self, scale: float) -> tuple[float, float, float]:
        """(σ_g, σ_tr, σ_dir)/Δ for the total ρ = 1/scale²: each release's share ρ′ gives 1/√(2ρ′)."""
        rho = 1.0 / scale**2 / self.steps
        shares = (
            self.grad_share,
            (1.0 - self.grad_share) * self.trace_share,
            (1.0 - self.grad_share) * (1.0 - self.trace_share),
        )
        return tuple(1.0 / math.sqrt(2.0 * share * rho) for share in shares)

    def step_event(self, scale: float) -> ComposedEvent:
        """One step's three Gaussian releases at the total ρ = 1/scale²."""
        return ComposedEvent(tuple(GaussianEvent(m) for m in self.noise_multipliers(scale)))

    def effective_floor(self, floor: float, reg: float) -> float:
        """The smallest eigenvalue M can have with the model's public ridge μ in H: λ₀ + μ (``add``: M = H + μI +
        λ₀I), max(λ₀, μ) (``clip``: H + μI's eigenvalues raised to λ₀). The authors' code has no μ."""
        return floor + reg if self.modification == "add" else max(floor, reg)

    def direction_sensitivity(self, gradient_norm: float, n: float, beta: float, floor: float) -> float:
        """Δ_dir = ‖g̃‖β/(n̄λ₀² ± βλ₀) (+ for ``add``, − for ``clip``)."""
        sign = 1.0 if self.modification == "add" else -1.0
        return gradient_norm * beta / (n * floor**2 + sign * beta * floor)

    def modified_inverse(self, hessian: np.ndarray, floor: float, reg: float = 0.0) -> np.ndarray:
        """M⁻¹ for the data term's ``hessian`` H, the model's ridge μ = ``reg`` and the floor λ₀:
        (H + μI + λ₀I)⁻¹ (``add``), or H + μI with its eigenvalues below λ₀ raised to λ₀, inverted (``clip``)."""
        ridged = hessian + reg * np.eye(hessian.shape[0])
        if self.modification == "add":
            return np.linalg.inv(ridged + floor * np.eye(hessian.shape[0]))
        values, vectors = np.linalg.eigh(ridged)
        return (vectors / np.maximum(values, floor)) @ vectors.T

    def fit(self, problem, ledger, rng: np.random.Generator, tracer) -> FitResult:
        problem = problem.within(row_norm=1.0)
        n, d, T = problem.n_public, problem.dim, self.steps
        lipschitz, beta = problem.loss.lipschitz, problem.loss.smoothness
        scale = calibrate_noise(lambda s: ledger.eps_if(self.step_event(s), T), ledger.epsilon)
        sigma_g, sigma_tr, sigma_dir = self.noise_multipliers(scale)
        rho_dir = 1.0 / (2.0 * sigma_dir**2)
        tracer.plan(T, rows_per_iteration=n)
        theta = np.zeros(d)
        tracer.record(0, theta, step_size=0.0)
        for t in range(1, T + 1):
            noisy = gaussian_mechanism(
                data_gradient(problem, theta),
                sensitivity=lipschitz / n,
                noise_multiplier=sigma_g,
                rng=rng,
                ledger=ledger,
                label="dp_newton.gradient",
            )
            gradient = noisy + problem.reg * theta
            hessian = data_hessian(problem, theta, self.curvature)
            trace = gaussian_mechanism(
                float(np.trace(hessian)),
                sensitivity=beta / n,
                noise_multiplier=sigma_tr,
                rng=rng,
                ledger=ledger,
                label="dp_newton.trace",
            )
            floor = max((self.trace_coeff * max(trace, 0.0) / (n**2 * rho_dir)) ** (1.0 / 3.0), 1.0 / n)
            gradient_norm = float(np.linalg.norm(gradient))
            direction = gaussian_mechanism(
                self.modified_inverse(hessian, floor, problem.reg) @ gradient,
                sensitivity=self.direction_sensitivity(
                    gradient_norm, n, beta, self.effective_floor(floor, problem.reg)
                ),
                noise_multiplier=sigma_dir,
                rng=rng,
                ledger=ledger,
                label="dp_newton.direction",
            )
            theta = theta - direction
            tracer.record(t, theta, step_size=1.0, force=t == T)
        return FitResult(w=theta, n_iterations=T, info={"rho": 1.0 / scale**2})


@dataclass
class NoisyGD(_GLMOnRowsOfNormOne):
    """DP-GD as the DP-Newton paper compares it (their ``gd_priv``): T Gaussian-noised full gradients at step
    1/β (module docstring); T = 100 in their script."""

    steps: int = 100

    name: ClassVar[str] = "dp_gd_newton_baseline"
    label: ClassVar[str] = "DP-GD (1/β)"
    look: ClassVar[Look] = Look(LIGHT_BROWN, "s")
    audit: ClassVar[AuditCoverage] = AuditCoverage(("gaussian",))
    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {"steps": [COUNT]}
    tuning_grid: ClassVar[dict[str, list]] = {"steps": [20, 50, 100, 200]}

    def fit(self, problem, ledger, rng: np.random.Generator, tracer) -> FitResult:
        problem = problem.within(row_norm=1.0)
        n, T = problem.n_public, self.steps
        beta = problem.loss.smoothness
        sigma = calibrate_noise(lambda s: ledger.eps_if(GaussianEvent(s), T), ledger.epsilon)
        tracer.plan(T, rows_per_iteration=n)
        theta = np.zeros(problem.dim)
        tracer.record(0, theta, step_size=0.0)
        for t in range(1, T + 1):
            noisy = gaussian_mechanism(
                data_gradient(problem, theta),
                sensitivity=problem.loss.lipschitz / n,
                noise_multiplier=sigma,
                rng=rng,
                ledger=ledger,
                label="dp_gd.gradient",
            )
            theta = theta - (noisy + problem.reg * theta) / beta
            tracer.record(t, theta, step_size=1.0 / beta, force=t == T)
        return FitResult(w=theta, n_iterations=T, info={"noise_multiplier": sigma})
