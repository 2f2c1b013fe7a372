"""Audit target for ``tuning=private`` (dpbench.tuning): Papernot & Steinke's repeat-and-select as
dpbench runs it, with every trial at the edge of its budget.

The sampler uses the run's own pieces: the plan (:func:`~dpbench.privacy.trial_budget.plan_trials`),
the trial-count law (:func:`~dpbench.privacy.repeat_select.sample_trials`), each trial's training
release charged to its :func:`~dpbench.privacy.trial_budget.training_ledger`, the score of
:func:`dpbench.tuning.noisy_accuracy`, the held-out coin, and the first-best selection. The trial's
training is a Gaussian release of a sensitivity-1 statistic that spends its whole ρ_train at α (the
most any trial may spend). Pair: D′ = D ∪ {x}. x's coin puts it in the held-out part with probability
p; otherwise it moves the model y by 1. The other held-out records score c·y, so selection follows y
and favours the trials that x pushed up. A held-out x scores 1 when y > 1/2. The output is the
released trial's (y, score).
"""

from __future__ import annotations

import math

import numpy as np

from dpbench.audit.core import Target
from dpbench.audit.targets import DELTA
from dpbench.privacy.accountant import Ledger
from dpbench.privacy.mechanisms import gaussian_mechanism
from dpbench.privacy.repeat_select import sample_trials
from dpbench.privacy.trial_budget import _SAFETY, plan_trials, training_ledger
from dpbench.tuning import noisy_accuracy

__all__ = ["repeat_and_select_target", "repeat_and_select_unnoised_score"]

HELD_OUT, PUBLIC_VALIDATION, SLOPE = 0.2, 20, 5.0


def _claim(budget) -> float:
    """The ε a tuned run's ledger records for the whole procedure."""
    return Ledger(budget.epsilon, budget.delta, budget.accountant()).charge(budget.event())


def _sampler(epsilon: float, delta: float, mean: float, shape: float, score_noise: bool):
    budget = plan_trials(epsilon, delta, mean, shape, 0.2)
    sigma_train = math.sqrt(budget.order / (2.0 * budget.train_rdp * _SAFETY)) * (1.0 + 1e-9)

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        trials = np.array([sample_trials(mean, shape, rng) for _ in range(n)])
        width = max(int(trials.max()), 1)
        held_out = side * (rng.random(n) < HELD_OUT)  # x's coin (D has no x)
        shift = np.broadcast_to((side * (1 - held_out))[:, None], (n, width)).astype(float)
        y = gaussian_mechanism(shift, sensitivity=1.0, noise_multiplier=sigma_train, rng=rng,
                               ledger=training_ledger(budget, "rdp", {}, "add_remove"))
        correct = SLOPE * y + held_out[:, None] * (y > 0.5)
        if score_noise:
            score = noisy_accuracy(correct, PUBLIC_VALIDATION, budget, "add_remove", rng)
        else:  # DELIBERATELY BROKEN (the control): the exact validation accuracy is compared and released
            score = correct / PUBLIC_VALIDATION
        score = np.where(np.arange(width)[None, :] < trials[:, None], score, -np.inf)
        best = np.argmax(score, axis=1)  # the first best, as fit_private keeps it
        rows = np.arange(n)
        return np.column_stack([y[rows, best], score[rows, best]])

    return budget, sample


def _residual(outputs: np.ndarray) -> np.ndarray:
    """score·m̄ − c·y: what the held-out x adds to the released score."""
    return outputs[:, 1] * PUBLIC_VALIDATION - SLOPE * outputs[:, 0]


def repeat_and_select_target(epsilon: float = 1.0, delta: float = DELTA, mean: float = 4.0, shape: float = 1.0) -> Target:
    """Private tuning with E[K] = ``mean`` trials (geometric law at shape 1), claim: the recorded total."""
    budget, sample = _sampler(epsilon, delta, mean, shape, score_noise=True)
    return Target(
        "tuning_repeat_and_select", _claim(budget), delta, sample, max_n=200_000,
        pair=f"D′ = D ∪ {{x}}: x held out w.p. {HELD_OUT} (scores 1 if y > 1/2), else moves each trial's y by 1; "
        f"α = {budget.order:g}, ρ_T = {budget.rdp:.4g}",
        proof="Papernot & Steinke 2022 Thm 2 at λ = λ̂ = α; each trial a Rényi filter at α (Feldman & Zrnic 2021)",
        note="max_n: K trials per run are drawn one run at a time",
    )


def repeat_and_select_unnoised_score(epsilon: float = 1.0, delta: float = DELTA) -> Target:
    """BROKEN: the same procedure releasing the best trial's exact validation accuracy (no noise on the
    score), still claiming the total; the held-out x shows in the score's residual."""
    budget, sample = _sampler(epsilon, delta, 4.0, 1.0, score_noise=False)
    return Target(
        "control_tuning_score_unnoised", _claim(budget), delta, sample, max_n=200_000, statistic=_residual,
        pair="as tuning_repeat_and_select, with the validation score released exactly",
        proof="(broken) repeat-and-select with an unpaid, unnoised score",
    )
