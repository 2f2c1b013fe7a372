"""DP-Adam: Adam (Kingma & Ba, ICLR 2015, Algorithm 1) on DP-SGD's privatised gradients.

Each step releases what a DP-SGD step releases (Abadi et al., CCS 2016, Algorithm 1): the sum of the
per-example gradients of a Poisson-subsampled lot (rate q = L/n̄), each clipped to norm C, plus
N(0, σ²C²I), through :class:`~dpbench.privacy.mechanisms.GaussianRelease`, which pays the step into the
run's ledger before it adds the noise. Adam's moments are then computed from the released gradient
ĝ_t = noisy sum/(qn̄) + μw_t alone:

    m_t = β₁m_{t−1} + (1 − β₁)ĝ_t,   v_t = β₂v_{t−1} + (1 − β₂)ĝ_t²,
    w_{t+1} = w_t − η·m̂_t/(√v̂_t + ε_Adam),   m̂_t = m_t/(1 − β₁ᵗ), v̂_t = v_t/(1 − β₂ᵗ),

post-processing of the releases, so the privacy cost is DP-SGD's exactly: ⌈epochs/q⌉ Poisson-subsampled
Gaussian steps, σ the smallest the ledger accepts for them (the DP-Adam of TensorFlow Privacy's
``DPKerasAdamOptimizer`` and of Opacus with ``torch.optim.Adam``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpbench.algorithms.base import Algorithm, AuditCoverage, FitResult, Look, Tracer
from dpbench.algorithms.dp_sgd import calibrated_noise_multiplier, lot_sampling_rate
from dpbench.algorithms.palette import LIGHT_GREEN
from dpbench.algorithms.sampling import poisson_subsample
from dpbench.constraints import COUNT, POSITIVE, Constraint, Real
from dpbench.privacy.mechanisms import GaussianRelease


@dataclass
class DPAdam(Algorithm):
    """DP-Adam: Adam's update on DP-SGD's noisy clipped lot gradients (module docstring).

    Parameters
    ----------
    epochs : passes over the data (⌈epochs/q⌉ steps); σ is calibrated to the budget for them
    learning_rate : Adam's step size η
    clip : per-example gradient clipping norm C
    batch_size : expected lot size L (q = L/n̄); None means ⌊√n̄ + 10⌋, as DP-SGD
    beta1, beta2 : Adam's moment decay rates β₁, β₂ ∈ [0, 1)
    adam_eps : Adam's ε_Adam > 0 in the denominator (not a privacy parameter)

    Neighbouring relations: ``add_remove`` natively, ``replace_one`` by group privacy, as DP-SGD: q and
    the normaliser qn̄ use the public n̄ (``problem.n_public``), so adding or removing a record moves the
    clipped lot sum by ≤ C and changes no other record's inclusion probability.
    """

    epochs: float = 1.0
    learning_rate: float = 0.01
    clip: float = 4.0
    batch_size: int | None = None
    beta1: float = 0.9
    beta2: float = 0.999
    adam_eps: float = 1e-8

    name: ClassVar[str] = "dp_adam"
    label: ClassVar[str] = "DP-Adam"
    look: ClassVar[Look] = Look(LIGHT_GREEN, "v")
    audit: ClassVar[AuditCoverage] = AuditCoverage(("dp_sgd_step",))  # its only release: a DP-SGD step
    paper: ClassVar[str] = "baseline"
    accountant: ClassVar[str] = "rdp"
    tuning_grid: ClassVar[dict[str, list]] = {"epochs": [1.0, 3.0], "learning_rate": [0.001, 0.01, 0.1]}  # ours
    parameter_constraints: ClassVar[dict[str, list[Constraint | None]]] = {
        "epochs": [POSITIVE],
        "learning_rate": [POSITIVE],
        "clip": [POSITIVE],
        "batch_size": [COUNT, None],
        "beta1": [Real(0, 1, closed="left")],
        "beta2": [Real(0, 1, closed="left")],
        "adam_eps": [POSITIVE],
    }

    def fit(self, problem, ledger, rng: np.random.Generator, tracer: Tracer) -> FitResult:
        n_public = problem.n_public
        q = lot_sampling_rate(n_public, self.batch_size)
        steps = math.ceil(self.epochs / q)
        sigma = calibrated_noise_multiplier(ledger, q, steps)
        tracer.plan(steps, rows_per_iteration=q * n_public)
        release = GaussianRelease(
            sensitivity=self.clip,
            noise_multiplier=sigma,
            rng=rng,
            ledger=ledger,
            sampling_rate=q,
            label="dp_adam.gradient",
        )
        w = np.zeros(problem.dim)
        first, second = np.zeros(problem.dim), np.zeros(problem.dim)
        tracer.record(0, w, step_size=0.0)
        for t in range(1, steps + 1):
            noisy = release(problem.clipped_gradient_sum(w, poisson_subsample(problem.n, q, rng), self.clip))
            gradient = noisy / (q * n_public) + problem.regulariser_gradient(w)
            first = self.beta1 * first + (1.0 - self.beta1) * gradient
            second = self.beta2 * second + (1.0 - self.beta2) * gradient**2
            corrected_first = first / (1.0 - self.beta1**t)
            corrected_second = second / (1.0 - self.beta2**t)
            w = w - self.learning_rate * corrected_first / (np.sqrt(corrected_second) + self.adam_eps)
            tracer.record(t, w, step_size=self.learning_rate, force=t == steps)
        return FitResult(
            w=w,
            n_iterations=steps,
            info={"sampling_rate": q, "expected_batch_size": q * n_public, "noise_multiplier": sigma},
        )
