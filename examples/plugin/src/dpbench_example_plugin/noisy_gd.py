"""Noisy full-batch gradient descent: T steps of w ← w − η (Σ_i clip_C(∇ℓ_i(w)) + N(0, σ²C²I)) / n̄ − η μ w.

Each step releases one clipped gradient sum, whose L2 sensitivity under add/remove is C (one row's
clipped gradient), through dpbench's Gaussian mechanism, which pays the step into the run's ledger
before it adds the noise; σ is the smallest noise multiplier whose T steps the ledger can pay for
(Abadi et al. 2016 without subsampling; the RDP of the Gaussian mechanism, Mironov 2017). The
training-set size enters only as the public n̄ (``problem.n_public``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpbench.algorithms.base import Algorithm, AuditCoverage, FitResult, Look
from dpbench.algorithms.palette import LIGHT_CYAN
from dpbench.constraints import COUNT, POSITIVE, Constraint
from dpbench.privacy.calibrate import calibrate_noise
from dpbench.privacy.events import GaussianEvent
from dpbench.privacy.mechanisms import GaussianRelease


@dataclass
class NoisyGD(Algorithm):
    """Noisy full-batch gradient descent with a calibrated σ (module docstring)."""

    steps: int = 50  # T
    learning_rate: float = 1.0  # η
    clip: float = 1.0  # C, the per-example gradient clipping norm

    name: ClassVar[str] = "noisy_gd"
    label: ClassVar[str] = "Noisy GD"
    look: ClassVar[Look] = Look(LIGHT_CYAN, "p")
    audit: ClassVar[AuditCoverage] = AuditCoverage(("gaussian",))  # its only release: the Gaussian mechanism
    paper: ClassVar[str] = "example_plugin"
    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        "steps": [COUNT],
        "learning_rate": [POSITIVE],
        "clip": [POSITIVE],
    }
    tuning_grid: ClassVar[dict[str, list]] = {"steps": [20, 50], "learning_rate": [0.5, 1.0, 2.0]}

    def fit(self, problem, ledger, rng: np.random.Generator, tracer) -> FitResult:
        sigma = calibrate_noise(lambda s: ledger.eps_if(GaussianEvent(s), self.steps), ledger.epsilon)
        release = GaussianRelease(
            sensitivity=self.clip, noise_multiplier=sigma, rng=rng, ledger=ledger, label="noisy_gd.gradient"
        )
        tracer.plan(self.steps, rows_per_iteration=problem.n_public)
        w = np.zeros(problem.dim)
        tracer.record(0, w, step_size=0.0)
        everyone = np.arange(problem.n)
        for t in range(1, self.steps + 1):
            noisy = release(problem.clipped_gradient_sum(w, everyone, self.clip))
            w -= self.learning_rate * (noisy / problem.n_public + problem.regulariser_gradient(w))
            tracer.record(t, w, step_size=self.learning_rate, force=t == self.steps)
        return FitResult(w=w, n_iterations=self.steps, info={"noise_multiplier": sigma})
