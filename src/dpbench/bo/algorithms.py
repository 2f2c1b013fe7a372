"""kusner_bo's private Bayesian optimisation as ``algorithm=`` choices (Algorithms 1–3).

Each method runs GP-UCB (eq. 3) for ``iterations`` = T steps over the finite candidate set Λ on the
validation gains of one sensitive validation set V, then releases:

- ``kusner_alg1`` (Sec. 3, noisy observations): λ̃ by the exponential mechanism on the posterior
  mean μ_T with Δ = 2√β_{T+1} + c (Thm 1, Cor. 1) and ṽ = max_t v_t + Lap(Δ_v/ε) with
  Δ_v = √(C₁β_Tγ_T/T) + c + q (Thm 3, Cor. 2).
- ``kusner_alg2`` (Sec. 4, noise-free observations): the same λ̃ (Theorems 1–2 hold with q = 0)
  and f̃ = max_{2≤t≤T} f(λ_t) + Lap(Δ_f/ε), Δ_f = A e^{−2τ/(log 2)^{d/4}} + c (Thm 5, Cor. 3).
- ``kusner_alg3`` (Sec. 5, Lipschitz and convex, no GP assumption): f̃_L = max_t f_V(w_{λ_t}) +
  Lap(Δ/ε), Δ of Theorem 7, for L2-regularised logistic regression validated by the ramp loss.

Budget. ``privacy.eps``/``privacy.delta`` are the run's total. Algorithms 1–2 make two releases of
(ε/2, δ/2) each — the paper's "(2ε, 2δ) for both" with ε, δ per release — charged as
ApproxDPEvent on the approx ledger; Algorithm 3 makes one ε-DP release (PureDPEvent).

Guarantees are conditional and the rows say so: Corollaries 1–3 hold under Assumption 1 (the gains
of every validation set are jointly a GP with kernel k₁(V, V′)·k₂(λ, λ′), ``k1`` given), which data
cannot confirm; Corollary 4 needs Assumption 2 (exact minimisers of eq. 10 with a 1-Lipschitz
convex loss, an L-Lipschitz validation loss), which our logreg target satisfies up to the solver's
tolerance.

Departures, all documented in docs/papers/kusner_bo.md: Alg. 2 runs GP-UCB with a numerical jitter in place of
de Freitas et al. (2012)'s branch-and-bound method; A and τ have no values in the paper (defaults 1);
γ_T is the computable upper bound greedy/(1 − 1/e) unless a number is given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from dpbench.algorithms.base import Algorithm, AuditCoverage, Look, Refusal, Request
from dpbench.algorithms.palette import BLUE, GREEN, ORANGE, PURPLE
from dpbench.bo.gp import (
    KERNELS,
    UCBRun,
    gp_ucb,
    kernel_matrix,
    max_information_gain_bound,
)
from dpbench.bo.sensitivity import (
    alg1_value_sensitivity,
    alg2_value_sensitivity,
    alg3_value_sensitivity,
    c_term,
    hyperparameter_sensitivity,
)
from dpbench.constraints import (
    COUNT,
    POSITIVE,
    PROBABILITY_OPEN,
    Boolean,
    Constraint,
    ListOf,
    Options,
    Real,
)
from dpbench.jobs import BO_LOSS
from dpbench.privacy.mechanisms import exponential_mechanism, laplace_mechanism
from dpbench.recent_answers import RecentAnswers

__all__ = ["BOAlgorithm", "BOProblem", "BORelease"]

GAINS = ("accuracy", "ramp")
RAMP_MAX = 1.0  # g* of Alg. 3 for the ramp loss min(1, max(0, 1 − y s))


@dataclass(frozen=True)
class BOProblem:
    """One repetition's tuning problem: the gains f_V(λ) of every candidate on the sensitive V
    (used only through GP-UCB's observations), the candidates' unit-cube points and values, |V|."""

    gains: np.ndarray
    points: np.ndarray
    hyperparameters: list[dict[str, float]]
    validation_size: int
    row_norm: float | None = None


@dataclass(frozen=True)
class BORelease:
    """What a run publishes (``index`` of λ̃ or None, ``value`` ṽ or None) and the public settings
    behind it; ``run`` is GP-UCB's (non-private) trajectory, kept for evaluation only."""

    index: int | None
    value: float | None
    run: UCBRun
    best_observed: float
    info: dict[str, float] = field(default_factory=dict)


class BOAlgorithm(Algorithm):
    """A kusner_bo method: tunes bo.target's hyper-parameters on a sensitive validation set.

    Neighbouring relation: ``add_remove_validation_row`` (privacy unit: one row of V). The paper
    defines neighbours by swapping one validation record (Sec. 2), but the k₁(V, V′) that Assumption
    1 — hence c in every Algorithm 1–2 sensitivity — is set from is measured on add/remove pairs
    (Fig. 1, :class:`KusnerMTGPLikelihood`), and nothing charged reads |V| except Algorithm 3's
    g*/m with m the public ``bo.validation_size``, which bounds a mean over V of gains in [0, g*]
    under adding or removing a row from a V of that size (the change is ≤ g*/max(|V|, |V′|)). The
    training set, Λ and m are public.
    """

    paper: ClassVar[str] = "kusner_bo"
    accountant: ClassVar[str] = "approx"
    relations: ClassVar[dict[str, str]] = {"add_remove": "native"}
    relation_reason: ClassVar[str] = (
        "its δ is the probability, over the draw of V, that a sensitivity bound fails (Thms 1, 3, 5), "
        "and group privacy for that notion is not established here"
    )
    privacy_unit: ClassVar[str] = "validation_row"
    reads_training_size: ClassVar[bool] = False
    problem_kind: ClassVar[str] = "bo"
    supported_losses: ClassVar[frozenset[str]] = frozenset({BO_LOSS})
    unsupported_reason: ClassVar[str] = "kusner_bo methods tune the model named by bo.target (model=bo)"
    targets: ClassVar[tuple[str, ...]] = ("svm_rbf", "logreg")
    guarantee: ClassVar[str] = "none (a study, no release)"

    def refusal(self, request: Request) -> Refusal | None:
        """The class's declarations, then a ``bo.target`` among :attr:`targets`."""
        refused = super().refusal(request)
        if refused is None and request.bo_target is not None and request.bo_target not in self.targets:
            return Refusal(
                "bo.target",
                f"algorithm {self.name} cannot tune bo.target={request.bo_target}; it supports "
                f"bo.target={', '.join(self.targets)}",
            )
        return refused

    def release(self, problem: BOProblem, *, epsilon: float, delta: float, rng, ledger) -> BORelease:
        raise NotImplementedError


@dataclass
class _GPUCBMethod(BOAlgorithm):
    """GP-UCB settings shared by Algorithms 1–3.

    iterations: T (the paper gives none; 30 of |Λ| = 100 is our default).
    kernel, length_scale: k₂ on the unit-cube candidates (SE or Matérn-5/2, fixed ℓ; ours 0.2).
    gain: the validation gain f_V — ``accuracy`` or ``ramp`` (−mean ramp loss, Assumption 2).
    """

    iterations: int = 30
    kernel: str = "squared_exponential"
    length_scale: float = 0.2
    gain: str = "accuracy"

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        "iterations": [COUNT],
        "kernel": [Options(*KERNELS)],
        "length_scale": [POSITIVE],
        "gain": [Options(*GAINS)],
    }

    def _ucb(self, problem: BOProblem, noise_variance: float, delta: float) -> tuple[UCBRun, np.ndarray]:
        """The GP-UCB run over the candidates and its kernel matrix: a deterministic function of the gains, the
        points and these settings (no randomness), so a release repeated on the same validation set (a job's
        repetitions, an audit's many runs) reuses the last few runs; their arrays are read-only."""
        key = (
            self.kernel,
            self.length_scale,
            self.iterations,
            noise_variance,
            delta,
            *((a.dtype.str, a.shape, a.tobytes()) for a in (np.asarray(problem.gains), np.asarray(problem.points))),
        )
        if key not in _UCB_RUNS:
            K = kernel_matrix(problem.points, problem.points, kernel=self.kernel, length_scale=self.length_scale)
            run = gp_ucb(problem.gains, K, iterations=self.iterations, delta=delta, noise_variance=noise_variance)
            for array in (K, run.indices, run.values, run.mean, run.variance, run.betas):
                array.setflags(write=False)
            _UCB_RUNS.remember(key, (run, K))
        return _UCB_RUNS[key]


_UCB_RUNS = RecentAnswers(8)  # _GPUCBMethod._ucb's last runs, by everything they depend on


@dataclass
class _Assumption1Method(_GPUCBMethod):
    """Algorithms 1–2, whose guarantees rest on Assumption 1.

    k1: k₁(V, V′) of Assumption 1 for neighbouring validation sets; 0.95 is Fig. 1's most likely value.
    """

    k1: float = 0.95

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        **_GPUCBMethod.parameter_constraints,
        "k1": [Real(0, 1, closed="left")],
    }

    def _release_hyperparameter(
        self, run: UCBRun, n: int, epsilon: float, delta: float, rng, ledger
    ) -> tuple[int, float]:
        """λ̃ ∝ exp(εμ_T(λ)/(2Δ)), Δ = 2√β_{T+1} + c (Alg. 1; Cor. 1: (ε, δ)-DP under Assumption 1)."""
        sensitivity = hyperparameter_sensitivity(self.iterations, n, delta, self.k1)
        index = exponential_mechanism(
            run.mean,
            sensitivity=sensitivity,
            epsilon=epsilon,
            rng=rng,
            ledger=ledger,
            failure_probability=delta,
            label="lambda_tilde",
        )
        return index, sensitivity


@dataclass
class KusnerAlg1(_Assumption1Method):
    """Algorithm 1 (noisy observations): λ̃ and ṽ, each (ε/2, δ/2)-DP under Assumption 1.

    noise_variance: σ² of the observation model v_t = f(λ_t) + α_t (the GP's noise and the σ of
        C₁ and q); the validation gains are observed as computed (ours 0.0025, σ = 0.05, about the
        sampling error of an accuracy on 100 records).
    gamma_t: γ_T, the maximum information gain — ``greedy_bound`` (greedy/(1 − 1/e) on Λ, an upper
        bound by submodularity) or a number.
    """

    name: ClassVar[str] = "kusner_alg1"
    label: ClassVar[str] = "Alg. 1"
    look: ClassVar[Look] = Look(BLUE, "s")
    audit: ClassVar[AuditCoverage] = AuditCoverage(("bo_lambda_tilde", "bo_v_tilde"))
    conditional_on: ClassVar[str] = (
        "kusner_bo Assumption 1 (the validation gains are jointly a GP with the configured k1)"
    )
    guarantee: ClassVar[str] = (
        "(eps, delta)-DP if Assumption 1 holds (gains jointly GP with the configured k1; not checkable on data)"
    )
    noise_variance: float = 0.0025
    gamma_t: Any = "greedy_bound"

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        **_Assumption1Method.parameter_constraints,
        "noise_variance": [POSITIVE],
        "gamma_t": [Options("greedy_bound"), POSITIVE],
    }

    def release(self, problem, *, epsilon, delta, rng, ledger):
        eps, dlt = epsilon / 2.0, delta / 2.0
        run, K = self._ucb(problem, self.noise_variance, dlt)
        n = problem.gains.shape[0]
        gamma = (
            max_information_gain_bound(K, self.iterations, self.noise_variance)
            if self.gamma_t == "greedy_bound"
            else float(self.gamma_t)
        )
        index, lam_sens = self._release_hyperparameter(run, n, eps, dlt, rng, ledger)
        best = float(np.max(run.values))
        value_sens = alg1_value_sensitivity(self.iterations, n, dlt, self.k1, self.noise_variance, gamma)
        value = laplace_mechanism(
            best,
            sensitivity=value_sens,
            epsilon=eps,
            rng=rng,
            ledger=ledger,
            failure_probability=dlt,
            label="v_tilde",
        )
        info = {
            "eps_release": eps,
            "delta_release": dlt,
            "lambda_sensitivity": lam_sens,
            "value_sensitivity": value_sens,
            "laplace_scale": value_sens / eps,
            "gamma_t": gamma,
            "c": c_term(self.k1, n, dlt),
        }
        return BORelease(index, float(value), run, best, info)


@dataclass
class KusnerAlg2(_Assumption1Method):
    """Algorithm 2 (noise-free observations): λ̃ (as Alg. 1, q = 0) and f̃, each (ε/2, δ/2)-DP under
    Assumption 1 and de Freitas et al. (2012)'s assumptions.

    a, tau: A and τ of de Freitas et al.'s regret bound (no values in the paper; ours 1, 1).
    jitter: added to the GP's diagonal for numerical stability only (observations are exact).
    """

    name: ClassVar[str] = "kusner_alg2"
    label: ClassVar[str] = "Alg. 2"
    look: ClassVar[Look] = Look(ORANGE, "*")
    audit: ClassVar[AuditCoverage] = AuditCoverage(("bo_lambda_tilde", "bo_f_tilde"))
    conditional_on: ClassVar[str] = (
        "kusner_bo Assumption 1 (the validation gains are jointly a GP with the configured k1) "
        "and de Freitas et al. (2012)'s assumptions"
    )
    guarantee: ClassVar[str] = (
        "(eps, delta)-DP if Assumption 1 and de Freitas et al. (2012)'s assumptions hold (not checkable)"
    )
    a: float = 1.0
    tau: float = 1.0
    jitter: float = 1e-6

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        **_Assumption1Method.parameter_constraints,
        "a": [POSITIVE],
        "tau": [POSITIVE],
        "jitter": [POSITIVE],
    }

    def release(self, problem, *, epsilon, delta, rng, ledger):
        eps, dlt = epsilon / 2.0, delta / 2.0
        run, _ = self._ucb(problem, self.jitter, dlt)
        n, dim = problem.points.shape
        index, lam_sens = self._release_hyperparameter(run, n, eps, dlt, rng, ledger)
        best = float(np.max(run.values[1:])) if self.iterations > 1 else float(run.values[0])  # max over 2 ≤ t ≤ T
        value_sens = alg2_value_sensitivity(self.a, self.tau, dim, n, dlt, self.k1)
        value = laplace_mechanism(
            best,
            sensitivity=value_sens,
            epsilon=eps,
            rng=rng,
            ledger=ledger,
            failure_probability=dlt,
            label="f_tilde",
        )
        info = {
            "eps_release": eps,
            "delta_release": dlt,
            "lambda_sensitivity": lam_sens,
            "value_sensitivity": value_sens,
            "laplace_scale": value_sens / eps,
            "c": c_term(self.k1, n, dlt, union=2),
        }
        return BORelease(index, float(value), run, best, info)


@dataclass
class KusnerAlg3(_GPUCBMethod):
    """Algorithm 3 (Lipschitz and convex): f̃_L, ε-DP under Assumption 2 (Cor. 4); bo.target=logreg.

    GP-UCB picks the λ_t (any acquisition keeps the guarantee); the gain is −mean ramp loss
    (g* = 1, L = the rows' norm bound); λ_min, λ_max are the extremes of the candidate λs.
    noise_variance: the GP's noise (a modelling choice here; no privacy role).
    """

    name: ClassVar[str] = "kusner_alg3"
    label: ClassVar[str] = "Alg. 3"
    look: ClassVar[Look] = Look(GREEN, "s")
    audit: ClassVar[AuditCoverage] = AuditCoverage(("bo_f_tilde_l",))
    guarantee: ClassVar[str] = "eps-DP under Assumption 2 (exact eq. 10 minimisers up to solver tolerance)"
    targets: ClassVar[tuple[str, ...]] = ("logreg",)
    gain: str = "ramp"
    noise_variance: float = 0.0025

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        **_GPUCBMethod.parameter_constraints,
        "noise_variance": [POSITIVE],
    }

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.gain != "ramp":
            raise ValueError(
                f"{self.name}: gain must be ramp (Assumption 2 needs a Lipschitz validation loss), got {self.gain!r}"
            )

    def release(self, problem, *, epsilon, delta, rng, ledger):
        if problem.row_norm is None or problem.row_norm > 1.0:
            raise ValueError(
                f"{self.name}: Theorem 7 needs a 1-Lipschitz training loss: rows of norm ≤ 1, got {problem.row_norm}"
            )
        run, _ = self._ucb(problem, self.noise_variance, delta)
        lambdas = np.array([h["lambda"] for h in problem.hyperparameters])
        best = float(np.max(run.values))
        sens = alg3_value_sensitivity(
            problem.row_norm, problem.validation_size, float(lambdas.min()), float(lambdas.max()), RAMP_MAX
        )
        value = laplace_mechanism(best, sensitivity=sens, epsilon=epsilon, rng=rng, ledger=ledger, label="f_tilde_L")
        info = {
            "eps_release": epsilon,
            "delta_release": 0.0,
            "value_sensitivity": sens,
            "laplace_scale": sens / epsilon,
            "lambda_min": float(lambdas.min()),
            "lambda_max": float(lambdas.max()),
        }
        return BORelease(None, float(value), run, best, info)


@dataclass
class KusnerMTGPLikelihood(BOAlgorithm):
    """kusner_bo Fig. 1: the multi-task GP log marginal likelihood (eq. 14) of the gains on validation
    sets and their add/remove-one neighbours as k₁(V, V′) varies (a study, no release).

    n_sets: i.i.d. validation sets per size (paper: 100). k1_values: the grid (paper: 0.05 … 0.95).
    kernel, length_scale: k₂. noise_variance, signal_variance: the GP's noise and k₂'s amplitude
    (not in the paper; ours 1e-4 and 1). center: subtract each pair's mean gain (ours; see gp.py).
    """

    name: ClassVar[str] = "kusner_mtgp_likelihood"
    label: ClassVar[str] = "MTGP likelihood"
    look: ClassVar[Look] = Look(PURPLE, "o")
    private: ClassVar[bool] = False
    n_sets: int = 100
    gain: str = "accuracy"
    k1_values: list = field(default_factory=lambda: [round(0.05 * i, 2) for i in range(1, 20)])
    kernel: str = "squared_exponential"
    length_scale: float = 0.2
    noise_variance: float = 1e-4
    signal_variance: float = 1.0
    center: bool = True

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        "n_sets": [COUNT],
        "gain": [Options(*GAINS)],
        "k1_values": [ListOf(PROBABILITY_OPEN)],
        "kernel": [Options(*KERNELS)],
        "length_scale": [POSITIVE],
        "noise_variance": [POSITIVE],
        "signal_variance": [POSITIVE],
        "center": [Boolean()],
    }

    def __post_init__(self) -> None:
        super().__post_init__()
        self.k1_values = [float(v) for v in self.k1_values]
