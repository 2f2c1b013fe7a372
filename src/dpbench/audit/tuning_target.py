"""Audit target for ``tuning=private`` (dpbench.tuning): Papernot & Steinke's repeat-and-select as
dpbench runs it, with every trial at the edge of its budget.

The sampler uses the run's own pieces: the plan (:func:`~dpbench.privacy.trial_budget.plan_trials`),
the trial-count law (:func:`~dpbench.privacy.repeat_select.sample_trials`), each trial's training
release charged to its :func:`~dpbench.privacy.trial_budget.training_ledger`, the score of
:func:`dpbench.tuning.noisy_accuracy`, the held-out coin, a setting drawn uniformly from the grid per
trial, and the first-best selection. The trial's training is a Gaussian release of a sensitivity-1
statistic that spends its whole ρ_train at α (the most any trial may spend). Pair
(:class:`TuningPair`): D′ = D ∪ {x}. x's coin puts it in the held-out part with probability p;
otherwise it moves the model y by ``shift``. The other held-out records score c·y, so selection
follows y and favours the trials that x pushed up. A held-out x scores 1 when y > 1/2.

The output is what a results row publishes of the tuning: the released trial's model y, its noisy
score and its setting. K is not published (``n_trials`` is a measurement): Thm 2 averages over K, and
the control that appends K (:func:`repeat_and_select_target` with ``publish_trials``) is caught.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr

from dpbench.audit.core import Target
from dpbench.audit.targets import DELTA
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.mechanisms import gaussian_mechanism
from dpbench.privacy.repeat_select import sample_trials
from dpbench.privacy.trial_budget import (
    _SAFETY,
    TrialBudget,
    plan_trials,
    training_ledger,
)
from dpbench.tuning import noisy_accuracy

__all__ = ["TuningPair", "repeat_and_select_target", "repeat_and_select_unnoised_score"]

PUBLIC_VALIDATION, GRID_SIZE = 20, 2
BLOCK_ENTRIES = 1 << 22
"""Trials are drawn in blocks of runs with similar K, each at most this many (run, trial) entries."""


@dataclass(frozen=True)
class TuningPair:
    """D′ = D ∪ {x}: x is held out with probability ``held_out`` (``tuning.validation_fraction``), else it
    moves every trial's model by ``shift`` (the training statistic's sensitivity is 1); the other held-out
    records score ``slope``·y, so the larger the slope the more closely selection follows y."""

    held_out: float = 0.2
    shift: float = 1.0
    slope: float = 5.0


def _claim(budget: TrialBudget) -> float:
    """The ε a tuned run's ledger records for the whole procedure."""
    return Ledger(budget.epsilon, budget.delta, budget.accountant()).charge(budget.event())


def _blocks(trials: np.ndarray) -> Iterator[np.ndarray]:
    """The runs in blocks of K within a factor 2 of each other, each padded block ≤ BLOCK_ENTRIES entries."""
    order = np.argsort(trials, kind="stable")
    counts = np.maximum(trials[order], 1)
    start = 0
    while start < order.size:
        cap = 2 * int(counts[start])
        stop = min(int(np.searchsorted(counts, cap)), start + max(1, BLOCK_ENTRIES // cap))
        yield order[start:stop]
        start = stop


def _release(
    side: int,
    held: np.ndarray,
    trials: np.ndarray,
    budget: TrialBudget,
    sigma_train: float,
    pair: TuningPair,
    score_noise: bool,
    rng: np.random.Generator,
) -> np.ndarray:
    """The released trial's (y, score, setting) of runs with K = ``trials`` and x's coins ``held``."""
    width = max(int(trials.max()), 1)
    shift = np.broadcast_to((pair.shift * side * (1 - held))[:, None], (trials.size, width)).astype(float)
    y = gaussian_mechanism(
        shift,
        sensitivity=1.0,
        noise_multiplier=sigma_train,
        rng=rng,
        ledger=training_ledger(budget, "rdp", {}, "add_remove"),
    )
    correct = pair.slope * y + held[:, None] * (y > 0.5)
    if score_noise:
        score = noisy_accuracy(correct, PUBLIC_VALIDATION, budget, "add_remove", rng)
    else:  # DELIBERATELY BROKEN (a control): the exact validation accuracy is compared and released
        score = correct / PUBLIC_VALIDATION
    setting = rng.integers(GRID_SIZE, size=y.shape)  # as fit_private draws each trial's setting
    score = np.where(np.arange(width)[None, :] < trials[:, None], score, -np.inf)
    best = np.argmax(score, axis=1)  # the first best, as fit_private keeps it
    rows = np.arange(trials.size)
    return np.column_stack([y[rows, best], score[rows, best], setting[rows, best]])


def _sampler(budget: TrialBudget, pair: TuningPair, *, score_noise: bool, publish_trials: bool):
    sigma_train = math.sqrt(budget.order / (2.0 * budget.train_rdp * _SAFETY)) * (1.0 + 1e-9)

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        trials = np.array([sample_trials(budget.mean, budget.shape, rng) for _ in range(n)])
        held = side * (rng.random(n) < pair.held_out)  # x's coin (D has no x)
        out = np.empty((n, 3))
        for runs in _blocks(trials):
            out[runs] = _release(side, held[runs], trials[runs], budget, sigma_train, pair, score_noise, rng)
        return np.column_stack([out, trials]) if publish_trials else out

    return sample, sigma_train


def _residual(outputs: np.ndarray) -> np.ndarray:
    """score·m̄ − c·y: what the held-out x adds to the released score (the default slope c)."""
    return outputs[:, 1] * PUBLIC_VALIDATION - TuningPair().slope * outputs[:, 0]


def _trials_statistic(sigma_train: float, shift: float):
    """T(y, K) = ln f₁(y | K) − ln f₀(y | K), f_μ(· | K) the density K·φ(z − μ)Φ(z − μ)^{K−1} of the largest of K
    draws of N(μ, 1) at z = y/σ_train, μ = shift/σ_train on D′ and 0 on D: the likelihood ratio of (y, K) when
    x is trained on and selection follows y."""
    m = shift / sigma_train

    def statistic(outputs: np.ndarray) -> np.ndarray:
        z, k = outputs[:, 0] / sigma_train, outputs[:, -1]
        return m * z - 0.5 * m * m + (k - 1) * (log_ndtr(z - m) - log_ndtr(z))

    return statistic


def repeat_and_select_target(
    epsilon: float = 1.0,
    delta: float = DELTA,
    mean: float = 4.0,
    shape: float = 1.0,
    *,
    score_share: float = 0.2,
    pair: TuningPair = TuningPair(),
    publish_trials: bool = False,
    name: str = "tuning_repeat_and_select",
) -> Target:
    """Private tuning with E[K] = ``mean`` trials of law shape ``shape`` (geometric at 1), claim: the recorded
    total. ``publish_trials`` appends K to the output — not covered by the claim (a control); its events
    are then on the likelihood ratio of (y, K) of :func:`_trials_statistic`."""
    budget = plan_trials(epsilon, delta, mean, shape, score_share)
    sample, sigma_train = _sampler(budget, pair, score_noise=True, publish_trials=publish_trials)
    return Target(
        name,
        _claim(budget),
        delta,
        sample,
        max_n=200_000,
        pair=f"D′ = D ∪ {{x}}: x held out w.p. {pair.held_out:g} (scores 1 if y > 1/2), else moves each trial's y by "
        f"{pair.shift:+g}; others score {pair.slope:g}·y; α = {budget.order:g}, ρ_T = {budget.rdp:.4g}, E[K] = {mean:g}, "
        f"η = {shape:g}" + ("; output (y, score, setting, K)" if publish_trials else ""),
        proof="Papernot & Steinke 2022 Thm 2 at λ = λ̂ = α; each trial a Rényi filter at α (Feldman & Zrnic 2021)",
        note="max_n: K trials per run are drawn one run at a time",
        statistic=_trials_statistic(sigma_train, pair.shift) if publish_trials else None,
    )


def repeat_and_select_unnoised_score(epsilon: float = 1.0, delta: float = DELTA) -> Target:
    """BROKEN: the same procedure releasing the best trial's exact validation accuracy (no noise on the
    score), still claiming the total; the held-out x shows in the score's residual."""
    budget = plan_trials(epsilon, delta, 4.0, 1.0, 0.2)
    sample, _ = _sampler(budget, TuningPair(), score_noise=False, publish_trials=False)
    return Target(
        "control_tuning_score_unnoised",
        _claim(budget),
        delta,
        sample,
        max_n=200_000,
        statistic=_residual,
        pair="as tuning_repeat_and_select, with the validation score released exactly",
        proof="(broken) repeat-and-select with an unpaid, unnoised score",
    )
