"""DP-SGD (Abadi et al., CCS 2016), the gradient-perturbation baseline of chen_lee Sec 5.3.

Each iteration draws a Poisson minibatch at rate q = L/n, clips every per-example gradient to
norm C, adds N(0, σ²C²I) to the sum and divides by the expected lot size L, then takes a
fixed-rate step (the data-independent regulariser gradient μw is added after the noise).
Each step is charged as a Poisson-subsampled Gaussian (exact integer-order RDP, Mironov et al. 2019).

Two ways to set the noise (``noise``):

* ``calibrated`` (default) — the practitioner's setting, the role of Opacus'
  ``make_private_with_epsilon``: the run takes ⌈epochs/q⌉ steps and σ is the smallest noise
  multiplier with which the ledger accepts all of them at the target (ε, δ)
  (:func:`~dpbench.privacy.calibrate.calibrate_noise`, relative precision 1e-6, never above budget).
  Every budget then buys a full run, however small.
* ``fixed`` — chen_lee's baseline: σ = ``noise_multiplier`` and the run goes on until the ledger
  cannot pay for another step. At σ = 4 and ε = 0.05 not even one step fits and the output is w₀.

The other defaults follow the DP-SGD baseline of the public DP-AGD code that chen_lee compares
against: learning rate 0.05, C = 4, expected lot size √n + 10, w₀ = 0; the chen_lee figure
presets use ``algorithm=dp_sgd_sigma4`` (``noise: fixed``, σ = 4).

``fidelity=authors_code`` (with ``noise: fixed``) runs the public code's ``dpsgd_ma`` (ppmlguy/DP-AGD,
``algo/sgd.py`` as ``run_sgdma_logistic.py`` calls it) where it differs (:data:`AUTHORS_CODE`): each
step draws exactly b = ⌊√n̄ + 10⌋ rows without replacement and divides the noisy sum by b; the
step has no regulariser term (``dpsgd_ma``'s ``reg_coeff`` defaults to 0 and the script passes none);
and the run takes the T steps whose ε by the code's moments accountant — which reads the log moment
of λ = 32 alone (:func:`~dpbench.privacy.published.moments_accountant_epsilon`) — is within the
budget. Each step is charged as a Poisson-subsampled Gaussian at q = b/n̄, as the code's accountant
prices it (:func:`~dpbench.privacy.published.gaussian_fixed_batch_priced_as_poisson`): that price
does not cover a fixed-size batch, so its rows are labelled ``guarantee_valid = False``. The single
order is only loose (no step fits below ε ≈ 0.58 at δ = 1e-8, where the order grid fits thousands).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpbench.algorithms.base import Algorithm, AuditCoverage, FidelityMode, FitResult, Look, Tracer
from dpbench.algorithms.palette import GREEN
from dpbench.algorithms.sampling import poisson_subsample
from dpbench.constraints import COUNT, POSITIVE, Constraint, Options
from dpbench.privacy.calibrate import calibrate_noise
from dpbench.privacy.events import GaussianEvent, PoissonSampledEvent
from dpbench.privacy.mechanisms import GaussianRelease
from dpbench.privacy.published import (
    gaussian_fixed_batch_priced_as_poisson,
    moments_accountant_epsilon,
    moments_accountant_steps,
)

AUTHORS_CODE = FidelityMode(
    changes=(
        "each batch is b = int(sqrt(n) + 10) rows drawn without replacement, the noisy sum divided by b (algo/sgd.py)",
        "no regulariser in the step (dpsgd_ma's reg_coeff defaults to 0; run_sgdma_logistic.py passes none)",
        "T = the most steps whose moments-accountant ε at λ = 32 alone fits (gaussian_moments.py _compute_eps)",
    ),
    breaks_guarantee="batches of fixed size drawn without replacement are charged as Poisson-subsampled Gaussians",
)
"""DP-SGD as the public DP-AGD code (ppmlguy/DP-AGD, algo/sgd.py ``dpsgd_ma``) runs it."""


def lot_sampling_rate(n_public: int, batch_size: int | None) -> float:
    """q = L/n̄ for the expected lot size L (None: ⌊√n̄ + 10⌋, chen_lee Sec 5.3's DP-SGD), at most 1: the
    public n̄ (``problem.n_public``), so that adding or removing a record moves no other record's
    inclusion probability (Abadi et al. 2016's lots, Poisson-sampled)."""
    lot = batch_size if batch_size is not None else int(math.sqrt(n_public) + 10)
    return min(1.0, lot / n_public)


def calibrated_noise_multiplier(ledger, q: float, steps: int) -> float:
    """The smallest σ whose ``steps`` Poisson-subsampled Gaussian steps at rate q the ledger can pay for."""
    return calibrate_noise(lambda s: ledger.eps_if(PoissonSampledEvent(q, GaussianEvent(s)), steps), ledger.epsilon)


@dataclass
class DPSGD(Algorithm):
    """Differentially private SGD with per-example clipping and Gaussian noise.

    Parameters
    ----------
    noise : ``calibrated`` (σ from the budget and ``epochs``) or ``fixed`` (σ = ``noise_multiplier``,
        steps until the budget is spent); module docstring
    epochs : passes over the data a calibrated run makes (⌈epochs/q⌉ steps, or ``max_iterations``
        if that is fewer); ignored under ``fixed``
    noise_multiplier : σ under ``noise: fixed``, the noise std in units of the clipping norm
    learning_rate : fixed step size η
    clip : per-example gradient clipping norm C (chen_lee eq. (6))
    batch_size : expected lot size L (q = L/n); None means ⌊√n + 10⌋
    max_iterations : optional cap on the number of steps (None: until the budget is spent)
    fidelity : ``correct`` or ``authors_code`` (needs ``noise: fixed``; module docstring)

    Neighbouring relations: ``add_remove`` natively, ``replace_one`` by group privacy (Poisson
    subsampling is an add/remove bound). The rate q = L/n̄ (L = ⌊√n̄ + 10⌋ by default) and the
    normaliser qn̄ use the public n̄ (``problem.n_public``), so adding or removing a record changes
    no other record's inclusion probability and moves the clipped sum by ≤ C: the Poisson-subsampled
    Gaussian the accountant prices is the mechanism run on D and on D′. (Were q = L/n of the data
    given, q would move with n and Σ_B clip(∇ℓ_i)/(qn) could move by 2C/(qn), twice the charge.)
    """

    noise: str = "calibrated"
    epochs: float = 1.0
    noise_multiplier: float = 4.0
    learning_rate: float = 0.05
    clip: float = 4.0
    batch_size: int | None = None
    max_iterations: int | None = None
    fidelity: str = "correct"

    name: ClassVar[str] = "dp_sgd"
    tuning_grid: ClassVar[dict[str, list]] = {"epochs": [1.0, 3.0], "learning_rate": [0.05, 0.2, 1.0]}  # ours
    label: ClassVar[str] = "DP-SGD"
    look: ClassVar[Look] = Look(GREEN, "v")
    audit: ClassVar[AuditCoverage] = AuditCoverage(("dp_sgd_step",))
    paper: ClassVar[str] = "chen_lee"
    accountant: ClassVar[str] = "rdp"
    fidelity_modes: ClassVar[dict[str, FidelityMode]] = {"authors_code": AUTHORS_CODE}

    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        "noise": [Options("calibrated", "fixed")],
        "epochs": [POSITIVE],
        "noise_multiplier": [POSITIVE],
        "learning_rate": [POSITIVE],
        "clip": [POSITIVE],
        "batch_size": [COUNT, None],
        "max_iterations": [COUNT, None],
    }

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.fidelity == "authors_code" and self.noise != "fixed":
            raise ValueError(
                f"dp_sgd: fidelity=authors_code runs the public code's fixed sigma, so noise must be fixed, got "
                f"{self.noise!r} (use algorithm=dp_sgd_sigma4)"
            )

    def fit(self, problem, ledger, rng: np.random.Generator, tracer: Tracer) -> FitResult:
        if self.fidelity == "authors_code":
            return self._fit_authors_code(problem, ledger, rng, tracer)
        n, n_public = problem.n, problem.n_public
        q = lot_sampling_rate(n_public, self.batch_size)
        sigma, n_steps = self._noise_and_steps(ledger, q)
        tracer.plan(n_steps, rows_per_iteration=q * n_public)

        w = np.zeros(problem.dim)
        tracer.record(0, w, step_size=0.0)
        release = GaussianRelease(
            sensitivity=self.clip,
            noise_multiplier=sigma,
            rng=rng,
            ledger=ledger,
            sampling_rate=q,
            label="dp_sgd.gradient",
        )
        for t in range(1, n_steps + 1):
            step = release(problem.clipped_gradient_sum(w, poisson_subsample(n, q, rng), self.clip))
            step /= q * n_public  # in place, in the order of w − η(noisy sum/(qn̄) + μw): the same floats
            step += problem.regulariser_gradient(w)
            step *= self.learning_rate
            w -= step
            tracer.record(t, w, step_size=self.learning_rate, force=t == n_steps)
        return FitResult(
            w=w,
            n_iterations=n_steps,
            info={"sampling_rate": q, "expected_batch_size": q * n_public, "noise_multiplier": sigma},
        )

    def _fit_authors_code(self, problem, ledger, rng: np.random.Generator, tracer: Tracer) -> FitResult:
        """``dpsgd_ma`` of ppmlguy/DP-AGD (algo/sgd.py) at the budget: T steps of w ← w − η·(Σ_B
        clip(∇ℓ_i) + N(0, σ²C²I))/b on batches B of exactly b rows drawn without replacement, no
        regulariser; T from :func:`~dpbench.privacy.published.moments_accountant_steps` (and the
        ledger, which prices each step as a Poisson-subsampled Gaussian at q = b/n̄, can always pay
        for it: its grid of orders includes λ + 1 = 33 and converts at least as tightly)."""
        n_public = problem.n_public
        batch = min(self.batch_size if self.batch_size is not None else int(math.sqrt(n_public) + 10), n_public)
        q = batch / n_public
        n_steps = moments_accountant_steps(q, self.noise_multiplier, ledger.epsilon, ledger.delta)
        if self.max_iterations is not None:
            n_steps = min(n_steps, self.max_iterations)
        tracer.plan(n_steps, rows_per_iteration=batch)
        w = np.zeros(problem.dim)
        tracer.record(0, w, step_size=0.0)
        for t in range(1, n_steps + 1):
            rows = np.sort(rng.choice(problem.n, size=batch, replace=False))
            noisy = gaussian_fixed_batch_priced_as_poisson(
                problem.clipped_gradient_sum(w, rows, self.clip),
                sensitivity=self.clip,
                noise_multiplier=self.noise_multiplier,
                batch_size=batch,
                population=n_public,
                rng=rng,
                ledger=ledger,
                label="dp_sgd.gradient",
            )
            w -= self.learning_rate * (noisy / batch)
            tracer.record(t, w, step_size=self.learning_rate, force=t == n_steps)
        claimed = moments_accountant_epsilon(q, self.noise_multiplier, n_steps, ledger.delta) if n_steps else 0.0
        return FitResult(
            w=w,
            n_iterations=n_steps,
            info={
                "sampling_rate": q,
                "batch_size": batch,
                "noise_multiplier": self.noise_multiplier,
                "moments_accountant_eps": claimed,
            },
        )

    def _noise_and_steps(self, ledger, q: float) -> tuple[float, int]:
        """(σ, number of steps): the calibrated σ for ⌈epochs/q⌉ steps (capped by ``max_iterations``),
        or the fixed σ with as many steps as the ledger can pay for."""
        limit = self.max_iterations if self.max_iterations is not None else 10**7
        if self.noise == "fixed":
            return self.noise_multiplier, ledger.max_affordable(
                PoissonSampledEvent(q, GaussianEvent(self.noise_multiplier)), limit
            )
        steps = min(limit, math.ceil(self.epochs / q))
        return calibrated_noise_multiplier(ledger, q, steps), steps
