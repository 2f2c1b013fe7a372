"""The han_pwa mechanisms as ``algorithm=`` choices: hyper-parameters, validation, accountant.

Each class wraps one function of :mod:`dpbench.pwa.mechanisms`; :meth:`PWAAlgorithm.release`
runs it for R runs at once (the engine's ``reps``) and returns a
:class:`~dpbench.pwa.mechanisms.Release`. They solve the piecewise-affine problem of
``dataset=synthetic_pwa`` with ``model=pwa`` (``problem_kind = "pwa"``), never a GLM.

Defaults follow han_pwa Sec. 5.1 where it gives them (k = 100 iterations, η = 0.1, 5000 MCMC
steps, no projection of the perturbed solution); the rest are our choices, documented per field.

Fidelity (``algorithm.fidelity``, docs/deviations.md). Two mechanisms are printed differently from what their
privacy analysis needs: Sec. 4.2 draws the solution's noise with scale √d·Δ/ε where Thm 9 needs Δ/ε
(:data:`LAPLACE_SOLUTION_PAPER`), and Alg. 1 prints exp(−ε·u_sub/(2b_max)), which favours the lowest
piece where the subgradient is the active one (:data:`SUBGRADIENT_PAPER`). ``correct`` (the default)
uses Δ/ε and the + sign; ``paper`` follows the print. Both printed variants are still ε-DP — they
only add noise (the √d scale is (ε/√d)-DP by Thm 9; −u_sub has the same sensitivity b_max as u_sub,
so Thm 10 applies to it) — so their rows keep ``guarantee_valid = True``: a utility change, not a
broken guarantee. The han_fig presets run them as printed (``pwa_laplace_solution_paper``,
``pwa_subgradient_paper``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpbench.algorithms.base import Algorithm, AuditCoverage, FidelityMode, Look
from dpbench.algorithms.palette import BLACK, BLUE, GREEN, GREY, ORANGE
from dpbench.constraints import COUNT, POSITIVE, Boolean, Constraint, Options
from dpbench.jobs import PWA_LOSS
from dpbench.pwa.mechanisms import (
    ACCOUNTINGS,
    DEFAULT_ETA,
    DEFAULT_ITERATIONS,
    DEFAULT_MCMC_STEPS,
    OUTPUTS,
    PRIVATE_OUTPUTS,
    PROPOSALS,
    STARTS,
    STEP_RULES,
    Release,
    exponential_mcmc,
    laplace_data,
    laplace_solution,
    private_subgradient,
    subgradient,
)
from dpbench.pwa.problem import PWAProblem

__all__ = ["LAPLACE_SOLUTION_PAPER", "SUBGRADIENT_PAPER", "PWAAlgorithm"]

LAPLACE_SOLUTION_PAPER = FidelityMode(
    changes=(
        (
            "noise w_S ∝ exp(−ε‖w_S‖₂/(√d·Δ)), scale √d·Δ/ε (Sec. 4.2, the scale Thm 17's bound G·d^{3/2}·Δ/ε is "
            "computed with), where Thm 9 needs only Δ/ε for the L2 sensitivity Δ: √d times the noise, "
            "(ε/√d)-DP, charged ε"
        ),
    ),
)
"""han_pwa Sec. 4.2 as printed: over-noised, still ε-DP."""

SUBGRADIENT_PAPER = FidelityMode(
    changes=(
        (
            "Alg. 1 step 2 as printed, P(i* = i) ∝ exp(−ε_k·u_sub(i; x)/(2b_max)): favours the lowest piece, where "
            "the subgradient is the active (largest) one (eq. 12) and γ and bound (13) are measured from the maximum; "
            "ε_k-DP all the same (−u_sub has sensitivity b_max, Thm 10)"
        ),
    ),
)
"""han_pwa Alg. 1 with its printed minus sign: a different selection law, still ε-DP."""


class PWAAlgorithm(Algorithm):
    """A han_pwa mechanism: R runs per call, one per-run ledger shared by them (mechanisms module).

    Neighbouring relation: ``offsets_within_b_max`` (privacy unit: the whole offset vector b). The
    database is b (han_pwa Sec. 2.2) and adjacent databases satisfy max_i |b_i − b_i′| ≤ b_max
    (eq. 4), every offset moving at once, with A, the box P and b_max public. Each mechanism charges
    this relation's sensitivity: √m·b_max for b (Thm 16), diam(P) for x_opt (Thm 17), b_max for
    the scores f and u_sub (Lemma 18, Thm 19, Alg. 1).
    """

    paper: ClassVar[str] = "han_pwa"
    accountant: ClassVar[str] = "pure"
    relations: ClassVar[dict[str, str]] = {"replace_one": "native"}
    paper_relation: ClassVar[str] = "replace_one"
    relation_reason: ClassVar[str] = "it protects the whole offset vector b, replaced by one within b_max (eq. 4)"
    privacy_unit: ClassVar[str] = "offset_vector"
    reads_training_size: ClassVar[bool] = False
    secure_sampler: ClassVar[bool] = False  # vector Laplace, Metropolis chains and Gumbel-max drawn in dpbench.pwa
    problem_kind: ClassVar[str] = "pwa"
    supported_losses: ClassVar[frozenset[str]] = frozenset({PWA_LOSS})
    unsupported_reason: ClassVar[str] = "han_pwa mechanisms minimise the piecewise-affine f of model=pwa"

    def release(self, problem: PWAProblem, *, epsilon: float, runs: int, rng: np.random.Generator, ledger) -> Release:
        raise NotImplementedError


@dataclass
class PWALaplaceData(PWAAlgorithm):
    """Laplace mechanism on the data b, then the exact LP (han_pwa Sec. 4.1, Thm 16)."""

    name: ClassVar[str] = "pwa_laplace_data"
    label: ClassVar[str] = "Laplace on data"
    look: ClassVar[Look] = Look(BLUE, "o")
    audit: ClassVar[AuditCoverage] = AuditCoverage(("pwa_laplace_data",))

    def release(self, problem, *, epsilon, runs, rng, ledger):
        return laplace_data(problem, epsilon=epsilon, runs=runs, rng=rng, ledger=ledger)


@dataclass
class PWALaplaceSolution(PWAAlgorithm):
    """Laplace mechanism on the solution x_opt (han_pwa Sec. 4.2, Thm 17).

    project: clip the release onto P (post-processing; off in the paper).
    fidelity: correct — noise scale Δ/ε, all that Thm 9 needs; paper — √d·Δ/ε as printed in Sec. 4.2
    (:data:`LAPLACE_SOLUTION_PAPER`).
    """

    name: ClassVar[str] = "pwa_laplace_solution"
    label: ClassVar[str] = "Laplace on solution"
    look: ClassVar[Look] = Look(ORANGE, "D")
    audit: ClassVar[AuditCoverage] = AuditCoverage(("pwa_vector_laplace",))
    fidelity_modes: ClassVar[dict[str, FidelityMode]] = {"paper": LAPLACE_SOLUTION_PAPER}
    project: bool = False
    fidelity: str = "correct"

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {"project": [Boolean()]}

    def release(self, problem, *, epsilon, runs, rng, ledger):
        return laplace_solution(
            problem,
            epsilon=epsilon,
            runs=runs,
            rng=rng,
            ledger=ledger,
            project=self.project,
            paper_scale=self.fidelity == "paper",
        )


@dataclass
class PWAExponential(PWAAlgorithm):
    """Exponential mechanism ∝ exp(−εf/(2b_max)) on P, sampled by Metropolis (han_pwa Thm 19, Sec. 5.1).

    The chain only approximates the mechanism, so by default the run is charged (ε, δ) with
    δ = privacy.delta (an assumption that the chain has mixed; see
    :func:`~dpbench.pwa.mechanisms.exponential_mcmc`): the accountant is ``approx``.
    """

    name: ClassVar[str] = "pwa_exponential"
    label: ClassVar[str] = "exponential"
    look: ClassVar[Look] = Look(GREEN, "^")
    audit: ClassVar[AuditCoverage] = AuditCoverage(("pwa_exponential_mcmc",))
    conditional_on: ClassVar[str] = "han_pwa's Metropolis chain has mixed to the exponential mechanism (not certified)"
    accountant: ClassVar[str] = "approx"
    eta: float = DEFAULT_ETA
    n_steps: int = DEFAULT_MCMC_STEPS
    proposal: str = "variance"
    start: str = "center"
    accounting: str = "approx"

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        "eta": [POSITIVE],
        "n_steps": [COUNT],
        "proposal": [Options(*PROPOSALS)],
        "start": [Options(*STARTS)],
        "accounting": [Options(*ACCOUNTINGS)],
    }

    def release(self, problem, *, epsilon, runs, rng, ledger):
        return exponential_mcmc(
            problem,
            epsilon=epsilon,
            runs=runs,
            rng=rng,
            ledger=ledger,
            eta=self.eta,
            n_steps=self.n_steps,
            proposal=self.proposal,
            start=self.start,
            accounting=self.accounting,
        )


@dataclass
class _SubgradientMethod(PWAAlgorithm):
    """What the private and the regular subgradient methods share: k, the step sizes α_i of
    :func:`~dpbench.pwa.mechanisms.step_sizes` (the paper gives none; default: the constant step
    R/(G√k) that minimises Thm 24's first term), the output and the projection onto P."""

    iterations: int = DEFAULT_ITERATIONS
    step_rule: str = "constant"
    step_scale: float = 1.0
    output: str = "last"
    project: bool = True

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        "iterations": [COUNT],
        "step_rule": [Options(*STEP_RULES)],
        "step_scale": [POSITIVE],
        "output": [Options(*OUTPUTS)],
        "project": [Boolean()],
    }


@dataclass
class PWASubgradient(_SubgradientMethod):
    """The ε-DP subgradient method (han_pwa Alg. 2 with Alg. 1, Thm 24).

    iterations: k (100, Sec. 5.1); output: x(k+1) ("last", Alg. 2) or the α-weighted average;
    project: keep iterates in P (post-processing with the public P); fidelity: correct — Alg. 1 with
    exp(+ε_k·u_sub/(2b_max)), favouring the active piece; paper — Alg. 1's printed minus sign
    (:data:`SUBGRADIENT_PAPER`).
    """

    name: ClassVar[str] = "pwa_subgradient"
    label: ClassVar[str] = "private subgradient"
    look: ClassVar[Look] = Look(BLACK, "D")
    audit: ClassVar[AuditCoverage] = AuditCoverage(("pwa_subgradient_printed", "pwa_subgradient_active"))
    fidelity_modes: ClassVar[dict[str, FidelityMode]] = {"paper": SUBGRADIENT_PAPER}
    fidelity: str = "correct"

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        **_SubgradientMethod.parameter_constraints,
        "output": [Options(*PRIVATE_OUTPUTS)],  # "best" compares f(x) on the private b: non-private only
    }

    def release(self, problem, *, epsilon, runs, rng, ledger):
        return private_subgradient(
            problem,
            epsilon=epsilon,
            runs=runs,
            rng=rng,
            ledger=ledger,
            iterations=self.iterations,
            step_rule=self.step_rule,
            step_scale=self.step_scale,
            project=self.project,
            output=self.output,
            selection="printed" if self.fidelity == "paper" else "active",
        )


@dataclass
class PWASubgradientNonPrivate(_SubgradientMethod):
    """The regular projected subgradient method with exact subgradients (han_pwa Sec. 4.4, Fig. 1):
    a non-private reference; it spends nothing and records ε = ∞. ``output`` may also be "best".
    Neighbouring relation: ``none``."""

    name: ClassVar[str] = "pwa_subgradient_nonprivate"
    label: ClassVar[str] = "subgradient, non-private"
    look: ClassVar[Look] = Look(GREY, "x")
    private: ClassVar[bool] = False

    def release(self, problem, *, epsilon, runs, rng, ledger):
        return subgradient(
            problem,
            iterations=self.iterations,
            step_rule=self.step_rule,
            step_scale=self.step_scale,
            project=self.project,
            output=self.output,
            runs=runs,
        )
