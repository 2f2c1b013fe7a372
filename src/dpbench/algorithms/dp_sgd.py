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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpbench.algorithms.base import Algorithm, FitResult, Tracer
from dpbench.algorithms.sampling import poisson_subsample
from dpbench.privacy.calibrate import calibrate_noise
from dpbench.privacy.events import GaussianEvent, PoissonSampledEvent
from dpbench.privacy.mechanisms import GaussianRelease


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

    name: ClassVar[str] = "dp_sgd"
    paper: ClassVar[str] = "chen_lee"
    accountant: ClassVar[str] = "rdp"

    def __post_init__(self) -> None:
        self._require_choice("noise", ("calibrated", "fixed"))
        self._require_positive("epochs", "noise_multiplier", "learning_rate", "clip")
        if self.batch_size is not None and self.batch_size < 1:
            raise ValueError(f"dp_sgd: batch_size must be ≥ 1 or null, got {self.batch_size}")
        if self.max_iterations is not None and self.max_iterations < 1:
            raise ValueError(f"dp_sgd: max_iterations must be ≥ 1 or null, got {self.max_iterations}")

    def fit(self, problem, ledger, rng: np.random.Generator, tracer: Tracer) -> FitResult:
        n, n_public = problem.n, problem.n_public
        lot = self.batch_size if self.batch_size is not None else int(math.sqrt(n_public) + 10)
        q = min(1.0, lot / n_public)
        sigma, n_steps = self._noise_and_steps(ledger, q)
        tracer.plan(n_steps, rows_per_iteration=q * n)

        w = np.zeros(problem.dim)
        tracer.record(0, w, step_size=0.0)
        release = GaussianRelease(
            sensitivity=self.clip, noise_multiplier=sigma, rng=rng, ledger=ledger, sampling_rate=q, label="dp_sgd.gradient"
        )
        for t in range(1, n_steps + 1):
            step = release(problem.clipped_gradient_sum(w, poisson_subsample(n, q, rng), self.clip))
            step /= q * n_public  # in place, in the order of w − η(noisy sum/(qn̄) + μw): the same floats
            step += problem.regulariser_gradient(w)
            step *= self.learning_rate
            w -= step
            tracer.record(t, w, step_size=self.learning_rate, force=t == n_steps)
        return FitResult(
            w=w, n_iterations=n_steps, info={"sampling_rate": q, "expected_batch_size": q * n_public, "noise_multiplier": sigma}
        )

    def _noise_and_steps(self, ledger, q: float) -> tuple[float, int]:
        """(σ, number of steps): the calibrated σ for ⌈epochs/q⌉ steps (capped by ``max_iterations``),
        or the fixed σ with as many steps as the ledger can pay for."""
        limit = self.max_iterations if self.max_iterations is not None else 10**7
        if self.noise == "fixed":
            return self.noise_multiplier, ledger.max_affordable(PoissonSampledEvent(q, GaussianEvent(self.noise_multiplier)), limit)
        steps = min(limit, math.ceil(self.epochs / q))
        sigma = calibrate_noise(lambda s: ledger.eps_if(PoissonSampledEvent(q, GaussianEvent(s)), steps), ledger.epsilon)
        return sigma, steps
