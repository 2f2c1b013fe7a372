"""DP-SGD (Abadi et al., CCS 2016), the gradient-perturbation baseline of chen_lee Sec 5.3.

Each iteration draws a Poisson minibatch at rate q = L/n, clips every per-example gradient to
norm C, adds N(0, σ²C²I) to the sum and divides by the expected lot size L, then takes a
fixed-rate step (the data-independent regulariser gradient μw is added after the noise).
It runs until the RDP ledger cannot pay for another step at the target (ε, δ); each step is
charged as a Poisson-subsampled Gaussian (exact integer-order RDP, Mironov et al. 2019).
Defaults follow the DP-SGD baseline of the public DP-AGD code that chen_lee compares
against: σ = 4, learning rate 0.05, C = 4, expected lot size √n + 10, w₀ = 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpbench.algorithms.base import Algorithm, FitResult, Tracer
from dpbench.algorithms.sampling import poisson_subsample
from dpbench.privacy.events import GaussianEvent, PoissonSampledEvent
from dpbench.privacy.mechanisms import gaussian_mechanism


@dataclass
class DPSGD(Algorithm):
    """Differentially private SGD with per-example clipping and Gaussian noise.

    Parameters
    ----------
    noise_multiplier : σ, noise std in units of the clipping norm
    learning_rate : fixed step size η
    clip : per-example gradient clipping norm C (chen_lee eq. (6))
    batch_size : expected lot size L (q = L/n); None means ⌊√n + 10⌋
    max_iterations : optional cap on the number of steps (None: until the budget is spent)

    Neighbouring relation: ``zero_out``. The clipped sum has sensitivity C under add/remove, but the
    run reads the training-set size n as public: the rate q = L/n (L = ⌊√n + 10⌋ by default) sets the
    Poisson sampling and the step divides the noisy sum by qn. Under true add/remove q moves with n,
    so every other record's inclusion probability changes and the Poisson-subsampled Gaussian the
    accountant prices is not the mechanism run on D′; qn moves too when q = 1 (n ≤ 13 by default)
    or L jumps, and then the normalised input Σ_B clip(∇ℓ_i)/(qn) can move by 2C/(qn), twice the
    charge. With n fixed and the record replaced by a null record (zero clipped gradient, sampled
    like any record) Δ = C holds and the Poisson amplification applies as charged.
    """

    noise_multiplier: float = 4.0
    learning_rate: float = 0.05
    clip: float = 4.0
    batch_size: int | None = None
    max_iterations: int | None = None

    name: ClassVar[str] = "dp_sgd"
    paper: ClassVar[str] = "chen_lee"
    accountant: ClassVar[str] = "rdp"
    neighbouring: ClassVar[str] = "zero_out"

    def __post_init__(self) -> None:
        self._require_positive("noise_multiplier", "learning_rate", "clip")
        if self.batch_size is not None and self.batch_size < 1:
            raise ValueError(f"dp_sgd: batch_size must be ≥ 1 or null, got {self.batch_size}")
        if self.max_iterations is not None and self.max_iterations < 1:
            raise ValueError(f"dp_sgd: max_iterations must be ≥ 1 or null, got {self.max_iterations}")

    def fit(self, problem, ledger, rng: np.random.Generator, tracer: Tracer) -> FitResult:
        n = problem.n
        lot = self.batch_size if self.batch_size is not None else int(math.sqrt(n) + 10)
        q = min(1.0, lot / n)
        step_event = PoissonSampledEvent(q, GaussianEvent(self.noise_multiplier))
        limit = self.max_iterations if self.max_iterations is not None else 10**7
        n_steps = ledger.max_affordable(step_event, limit=limit)
        tracer.plan(n_steps)

        w = np.zeros(problem.dim)
        tracer.record(0, w, step_size=0.0)
        for t in range(1, n_steps + 1):
            batch = poisson_subsample(n, q, rng)
            clipped_sum = problem.clipped_gradient_sum(w, batch, self.clip)
            noisy_sum = gaussian_mechanism(
                clipped_sum,
                sensitivity=self.clip,
                noise_multiplier=self.noise_multiplier,
                rng=rng,
                ledger=ledger,
                sampling_rate=q,
                label="dp_sgd.gradient",
            )
            w = w - self.learning_rate * (noisy_sum / (q * n) + problem.regulariser_gradient(w))
            tracer.record(t, w, step_size=self.learning_rate, force=t == n_steps)
        return FitResult(w=w, n_iterations=n_steps, info={"sampling_rate": q, "expected_batch_size": q * n})
