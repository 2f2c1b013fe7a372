"""Private Frank–Wolfe over an ℓ1 ball (Talwar, Thakurta & Zhang, "Nearly-Optimal Private LASSO",
NeurIPS 2015, Algorithm 2, A_Noise-FW(polytope)); the authors' code of Iyengar et al. 2019 (sunblaze-ucb/
dpml-benchmark, ``algorithms/frank_wolfe.py``) runs it in their benchmark.

Minimise F(θ) = (1/n̄)Σᵢ ℓ(θ; dᵢ) + (μ/2)‖θ‖² over C = {θ : ‖θ‖₁ ≤ r} (``radius``), whose vertices are
the 2d points ±r·e_j. From θ₀ = 0, for t = 0, …, T − 1:

1. the gradient g_t = ∇F(θ_t) (every row; the data term's sum over the rows divided by the public n̄);
2. a vertex s_t chosen by the exponential mechanism with utility u(s) = −⟨s, g_t⟩ over the 2d vertices
   (:func:`dpbench.privacy.mechanisms.exponential_mechanism`, ε₀-DP, charged PureDPEvent(ε₀)): a record
   moves g_t's j-th entry by at most G·B/n̄ (|ℓ′| ≤ G, entries clipped to |x_ij| ≤ B, ``feature_clip``),
   so every utility by at most Δ = rGB/n̄ under add/remove and 2rGB/n̄ under replace-one;
3. θ_{t+1} = (1 − μ_t)θ_t + μ_t s_t with μ_t = 2/(t + 2).

ε₀ is the largest per-step ε whose T selections the run's RDP ledger can pay for (pure ε-DP steps,
composed in RDP: :func:`~dpbench.privacy.calibrate.calibrate_noise` over ``ledger.eps_if``). Every iterate
is a function of the selections, so the whole path is released.

``fidelity=authors_code``: :data:`AUTHORS_CODE`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpbench.algorithms.base import Algorithm, AuditCoverage, FidelityMode, FitResult, Look
from dpbench.algorithms.palette import LIGHT_OLIVE
from dpbench.constraints import COUNT, POSITIVE, Constraint
from dpbench.privacy.calibrate import calibrate_noise
from dpbench.privacy.events import PureDPEvent
from dpbench.privacy.mechanisms import exponential_mechanism, report_noisy_max
from dpbench_practical.data_terms import data_gradient

AUTHORS_MINIBATCH = 1000
"""``minibatch_size = 1000`` rows a step, drawn with replacement."""

AUTHORS_CODE = FidelityMode(
    changes=(
        (
            "each step's gradient is the mean over 1000 rows drawn with replacement, while the noise is calibrated "
            "to the whole training set's n (noise_para = L*corner_size*sqrt(8*num_iters*log(1/delta))/(n*eps))"
        ),
        (
            "the vertex is report-noisy-min with Laplace noise of that scale, Lap(Δ/ε₀) with Δ = L·r/n and "
            "ε₀ = ε/√(8T ln(1/δ)): the monotone-query scale, for utilities that move both ways"
        ),
        "step μ_t = 1/(t + 1) (mu = step_size/(i+step_size) with learning_rate 1) instead of 2/(t + 2)",
        "the noise and the minibatches come from numpy seeded with one random byte (np.random.seed(ord(os.urandom(1))))",
        "the model's L2 term μ is left out of the gradient (lambda_param 0 in their grid)",
    ),
    breaks_guarantee=(
        "noise calibrated to n for a mean over 1000 rows, the monotone report-noisy-min scale, and 256 noise streams"
    ),
)
"""Private Frank–Wolfe as sunblaze-ucb/dpml-benchmark's ``private_frank_wolfe`` runs it."""


def vertex(index: int, dim: int, radius: float) -> tuple[int, float]:
    """The vertex of index ``index`` among the 2d vertices: (coordinate j, ±r); indices < d are +r·e_j."""
    return index % dim, radius if index < dim else -radius


@dataclass
class PrivateFrankWolfe(Algorithm):
    """Private Frank–Wolfe over the ℓ1 ball of radius ``radius`` for ``steps`` steps (module docstring);
    ``feature_clip`` is B, the bound every feature is clipped to (a public bound below it is used instead)."""

    radius: float = 10.0
    steps: int = 100
    feature_clip: float = 1.0
    fidelity: str = "correct"

    name: ClassVar[str] = "private_fw"
    label: ClassVar[str] = "Private FW"
    look: ClassVar[Look] = Look(LIGHT_OLIVE, "X")
    audit: ClassVar[AuditCoverage] = AuditCoverage(("exponential", "private_fw_step"))
    paper: ClassVar[str] = "talwar_fw"
    relations: ClassVar[dict[str, str]] = {"add_remove": "native", "replace_one": "native"}
    paper_relation: ClassVar[str] = "replace_one"
    fidelity_modes: ClassVar[dict[str, FidelityMode]] = {"authors_code": AUTHORS_CODE}
    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        "radius": [POSITIVE],
        "steps": [COUNT],
        "feature_clip": [POSITIVE],
    }
    tuning_grid: ClassVar[dict[str, list]] = {"radius": [1.0, 10.0, 100.0], "steps": [20, 100, 500]}

    def fit(self, problem, ledger, rng: np.random.Generator, tracer) -> FitResult:
        bound = min(self.feature_clip, problem.public_feature_bound or math.inf)  # B
        problem = problem.within(feature_bound=bound)
        if self.fidelity == "authors_code":
            return self._authors_fit(problem, ledger, rng, tracer, bound)
        n, d, T = problem.n_public, problem.dim, self.steps
        sensitivity = self.vertex_sensitivity(problem, bound, ledger.neighbouring)
        eps_step = 1.0 / calibrate_noise(lambda s: ledger.eps_if(PureDPEvent(1.0 / s), T), ledger.epsilon)
        tracer.plan(T, rows_per_iteration=n)
        theta = np.zeros(d)
        tracer.record(0, theta, step_size=0.0)
        for t in range(T):
            index = exponential_mechanism(
                self.utilities(problem, theta),
                sensitivity=sensitivity,
                epsilon=eps_step,
                rng=rng,
                ledger=ledger,
                label="private_fw.vertex",
            )
            theta = self._step(theta, index, 2.0 / (t + 2.0))
            tracer.record(t + 1, theta, step_size=2.0 / (t + 2.0), force=t + 1 == T)
        return FitResult(w=theta, n_iterations=T, info={"epsilon_per_step": eps_step})

    def vertex_sensitivity(self, problem, bound: float, neighbouring: str) -> float:
        """Δ of every utility −⟨s, g⟩: rGB/n̄ under add/remove, twice that under replace-one."""
        pairs = 2.0 if neighbouring == "replace_one" else 1.0
        return pairs * self.radius * problem.loss.lipschitz * bound / problem.n_public

    def utilities(self, problem, theta: np.ndarray) -> np.ndarray:
        """−⟨s, ∇F(θ)⟩ for the 2d vertices s (indices < d are +r·e_j)."""
        gradient = data_gradient(problem, theta) + problem.reg * theta  # ∇F(θ)
        return -self.radius * np.concatenate([gradient, -gradient])

    def _step(self, theta: np.ndarray, index: int, mu: float) -> np.ndarray:
        """(1 − μ)θ + μ·s for the vertex s of ``index``."""
        j, value = vertex(index, theta.size, self.radius)
        theta = (1.0 - mu) * theta
        theta[j] += mu * value
        return theta

    def _authors_fit(self, problem, ledger, rng, tracer, bound: float) -> FitResult:
        """``private_frank_wolfe`` of the authors' file on these rows: minibatches of 1000 rows drawn with
        replacement, report-noisy-min at their Laplace scale, μ_t = 1/(t + 1), all from one byte's stream. The
        ledger is charged the per-step ε₀ of their scale's claim, T times."""
        n, d, T = problem.n_public, problem.dim, self.steps
        stream = np.random.default_rng(int(rng.integers(256)))  # np.random.seed(ord(os.urandom(1)))
        eps_step = ledger.epsilon / math.sqrt(8.0 * T * math.log(1.0 / ledger.delta))
        sensitivity = bound * self.radius / n  # noise_para = L*corner_size*sqrt(8T log(1/δ))/(n ε) = this/ε₀
        tracer.plan(T, rows_per_iteration=AUTHORS_MINIBATCH)
        theta = np.zeros(d)
        tracer.record(0, theta, step_size=0.0)
        for t in range(T):
            rows = stream.choice(problem.n, AUTHORS_MINIBATCH, replace=True)
            gradient = problem.clipped_gradient_sum(theta, rows, math.inf) / AUTHORS_MINIBATCH
            scores = np.concatenate([gradient, -gradient]) * self.radius
            index = report_noisy_max(
                -scores,
                sensitivity=sensitivity,
                epsilon=eps_step,
                rng=stream,
                ledger=ledger,
                monotonic=True,  # Lap(Δ/ε₀): their scale
                label="private_fw.vertex",
            )
            theta = self._step(theta, index, 1.0 / (t + 1.0))
            tracer.record(t + 1, theta, step_size=1.0 / (t + 1.0), force=t + 1 == T)
        return FitResult(w=theta, n_iterations=T, info={"epsilon_per_step": eps_step})
