"""How one fold × rep chooses its hyper-parameters: the ``tuning`` group.

* ``fixed`` — the method's YAML values, trained on the training fold with the whole budget.
* ``private`` — Papernot & Steinke's repeat-and-select ("Hyperparameter tuning with Rényi
  differential privacy", ICLR 2022). Public coins hold out each training record for validation with
  probability ``validation_fraction``; K is drawn from the trial-count law; each trial draws a
  setting uniformly from the method's ``tuning_grid``, trains on the rest of the fold within a
  per-trial Rényi budget, and releases a Gaussian count of its correct validation predictions; the
  trial with the best noisy score is released. The per-trial budget is fixed from public values by
  :func:`~dpbench.privacy.trial_budget.plan_trials` so that the whole procedure, recorded in the
  run's ledger as one ``RepeatAndSelectEvent``, meets (ε, δ). Only the released trial's setting and
  score are written: the other trials, and K itself, are not covered by the theorem and stay inside.
* ``oracle`` — every grid point with the whole budget on the whole training fold, the best chosen by
  test-fold accuracy: *not private* (the choice reads the test fold), labelled ``guarantee_valid =
  False``; it measures what paying for tuning costs.

A method with an empty grid (or a non-private one) has nothing to tune: every mode trains it once.
Each record's coin is its own, so under add/remove or replace-one a neighbouring record lands in one
part only; training is private on its part and the count has sensitivity 1 given the model, so a
trial composes to ρ_train + ρ_score at the order α (module docstring of
:mod:`dpbench.privacy.trial_budget`).

The method registry and the accountants (scipy) are imported by the functions that use them, so that
importing the GLM job kind (:mod:`dpbench.jobs.glm`), which imports this module, stays cheap.
"""

from __future__ import annotations

import itertools
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from dpbench.algorithms.base import FitResult, Tracer
from dpbench.errors import PrivacyViolation
from dpbench.privacy.mechanisms import gaussian_mechanism
from dpbench.privacy.neighbouring import native_epsilon, resolve
from dpbench.privacy.noise_key import noise_seed
from dpbench.privacy.repeat_select import sample_trials

if TYPE_CHECKING:
    from dpbench.privacy.ledger import Ledger
    from dpbench.privacy.trial_budget import TrialBudget
    from dpbench.problems import GLMProblem
    from dpbench.settings import RunConfig

_TUNING_STREAM = 17  # private tuning's streams: (seed, fold, rep, 17) — public held-out coins, secret K and settings
_SCORE_MARGIN = 1.0 + 1e-9  # the score's σ is this much larger than ρ_score needs, so rounding cannot overspend


@dataclass
class FitContext:
    """What a fit needs from the engine: the configuration, the fold, its full training problem, and
    builders for a problem on other rows (with a public size), a run's ledger and accountant options."""

    cfg: RunConfig
    split: Any
    fold: int
    rep: int
    problem: GLMProblem
    make_problem: Callable[[Any, np.ndarray, int], GLMProblem]
    make_ledger: Callable[[Any], tuple[Ledger, Callable[[float], float]]]
    accountant_options: Callable[[Any], dict[str, Any]]

    def tracer(self, problem: GLMProblem, ledger: Ledger | None, reported=None) -> Tracer:
        cfg, split = self.cfg, self.split
        return Tracer(
            problem,
            ledger,
            every=cfg.trace_every,
            test=(split.X_test, split.y_test),
            nonprivate=cfg.trace_nonprivate,
            reported_eps=reported,
            max_share=cfg.trace_max_share,
        )

    def seed(self, *extra: int) -> np.random.SeedSequence:
        """The public stream of (seed, fold, rep, *extra): coins anyone may recompute from the seed."""
        return np.random.SeedSequence([self.cfg.seed, self.fold, self.rep, *extra])

    def noise_seed(self, *extra: int) -> np.random.SeedSequence:
        """The noise stream of (seed, fold, rep, *extra): from the sweep's secret key, or the public
        stream itself under ``privacy.noise_key=seed`` (:mod:`dpbench.privacy.noise_key`)."""
        return noise_seed(self.cfg.seed, self.fold, self.rep, *extra)


@dataclass
class Fitted:
    """A fit's released model and its bookkeeping: the problem it trained on (for the evaluation
    counts), its tracer, the run's ledger and its spend as reported, seconds in the method, the
    tuning columns of the results row and the public facts of the tuning for run.json."""

    result: FitResult
    problem: GLMProblem
    tracer: Tracer
    ledger: Ledger | None
    eps_spent: float
    wall: float
    columns: dict[str, Any]
    info: dict[str, Any] = field(default_factory=dict)


def fit(algorithm, context: FitContext) -> Fitted:
    """Fit one fold × rep under ``cfg.tuning.mode``."""
    tuning = context.cfg.tuning
    if tuning.mode == "fixed" or not tuning.grid:
        return fit_fixed(algorithm, context, tuning.mode)
    if tuning.mode == "oracle":
        return fit_oracle(context)
    if not algorithm.private:
        return fit_fixed(algorithm, context, tuning.mode)
    return fit_private(algorithm, context)


def _columns(
    mode: str, eps_train: float, eps_tuning: float, n_trials: int, setting: dict, score: float
) -> dict[str, Any]:
    return {
        "tuning": mode,
        "eps_train": float(eps_train),
        "eps_tuning": float(eps_tuning),
        "n_trials": int(n_trials),
        "tuned_params": json.dumps(setting, sort_keys=True),
        "tuning_score": float(score),
    }


def _train(algorithm, context: FitContext, problem: GLMProblem, seed: np.random.SeedSequence):
    """One training run with the whole budget: (result, tracer, ledger, reported ε, seconds)."""
    ledger, reported = context.make_ledger(algorithm) if algorithm.private else (None, native_epsilon)
    tracer = context.tracer(problem, ledger, reported)
    start = time.perf_counter()
    result = algorithm.fit(problem, ledger, np.random.default_rng(seed), tracer)
    return result, tracer, ledger, reported, time.perf_counter() - start


def _whole_budget_trial(algorithm, context: FitContext, problem: GLMProblem, params: dict[str, Any]):
    """:func:`_train` with the whole budget from the run's noise stream, the trial of ``params`` that a fixed
    job and an oracle job both train: taken from :mod:`dpbench.trials` when either trained it already
    (its counts restored on ``problem``, its seconds as measured then), else trained and kept there."""
    from dpbench import trials

    seed = context.noise_seed()
    key = trials.trial_key(context.cfg, params, context.fold, context.rep, seed)
    kept = trials.load(key)
    if kept is None:
        result, tracer, ledger, reported, seconds = _train(algorithm, context, problem, seed)
        counts = problem.counts
        trials.save(key, trials.KeptTrial(result, tracer.rows, ledger, counts.grad_evals, counts.obj_evals, seconds))
        return result, tracer, ledger, reported, seconds
    ledger, reported = context.make_ledger(algorithm) if algorithm.private else (None, native_epsilon)
    ledger = kept.ledger
    tracer = context.tracer(problem, ledger, reported)
    tracer.rows = kept.trace_rows
    problem.counts.grad_evals, problem.counts.obj_evals = kept.grad_evals, kept.obj_evals
    return kept.result, tracer, ledger, reported, kept.seconds


def fit_fixed(algorithm, context: FitContext, mode: str = "fixed") -> Fitted:
    """The method as configured, once, with the whole budget (also every mode's fit of a method with nothing to tune)."""
    result, tracer, ledger, reported, wall = _whole_budget_trial(
        algorithm, context, context.problem, context.cfg.algorithm_params
    )
    eps = reported(ledger.eps_spent) if ledger is not None else math.inf
    return Fitted(result, context.problem, tracer, ledger, eps, wall, _columns(mode, eps, 0.0, 1, {}, math.nan))


def grid_points(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """Every setting of the grid (its product), in a fixed order."""
    keys = sorted(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def fit_oracle(context: FitContext) -> Fitted:
    """Every grid point with the whole budget; the best test-fold accuracy wins. Not private."""
    from dpbench.algorithms.registry import make_algorithm

    cfg, split = context.cfg, context.split
    best, best_accuracy, wall, points = None, -math.inf, 0.0, grid_points(cfg.tuning.grid)
    for setting in points:
        params = {**cfg.algorithm_params, **setting}
        algorithm = make_algorithm(cfg.algorithm, params)
        problem = context.make_problem(split.X_train, split.y_train, split.public_n)
        result, tracer, ledger, reported, seconds = _whole_budget_trial(algorithm, context, problem, params)
        wall += seconds
        accuracy = float(np.mean(result.predict(split.X_test) == split.y_test)) if split.y_test.shape[0] else math.nan
        if best is None or accuracy > best_accuracy:
            best, best_accuracy = (setting, result, problem, tracer, ledger, reported), accuracy
    setting, result, problem, tracer, ledger, reported = best
    eps = reported(ledger.eps_spent) if ledger is not None else math.inf
    columns = _columns("oracle", eps, math.inf, len(points), setting, math.nan)
    return Fitted(result, problem, tracer, ledger, eps, wall, columns, {"oracle_grid_points": len(points)})


def trial_budget(algorithm, cfg: RunConfig) -> TrialBudget:
    """The per-trial budget of private tuning for this method and configuration (public values only)."""
    from dpbench.privacy.trial_budget import plan_trials

    tuning = cfg.tuning
    return plan_trials(
        cfg.privacy.eps,
        cfg.privacy.delta,
        tuning.trials_mean,
        tuning.trials_shape,
        tuning.score_share,
        algorithm.accountant,
    )


def fit_private(algorithm, context: FitContext) -> Fitted:
    """Repeat-and-select over the grid (module docstring); the run's ledger holds one RepeatAndSelectEvent."""
    from dpbench.algorithms.registry import make_algorithm
    from dpbench.privacy.ledger import Ledger
    from dpbench.privacy.trial_budget import training_ledger, training_rdp

    cfg, split = context.cfg, context.split
    tuning = cfg.tuning
    relation, _ = resolve(algorithm, cfg.privacy.neighbouring)
    budget = trial_budget(algorithm, cfg)
    coins = np.random.default_rng(context.seed(_TUNING_STREAM).spawn(3)[0])  # public: which records validate
    count, choices = (
        np.random.default_rng(s) for s in context.noise_seed(_TUNING_STREAM).spawn(3)[1:]
    )  # secret: K, settings
    held_out = coins.random(split.y_train.shape[0]) < tuning.validation_fraction
    public_validation = max(1, round(tuning.validation_fraction * split.public_n))
    public_train = split.public_n - public_validation
    X_train, y_train = split.X_train[~held_out], split.y_train[~held_out]
    X_valid, y_valid = split.X_train[held_out], split.y_train[held_out]
    n_trials = sample_trials(tuning.trials_mean, tuning.trials_shape, count)

    best, wall = None, 0.0
    for trial in range(n_trials):
        setting = {key: values[int(choices.integers(len(values)))] for key, values in sorted(tuning.grid.items())}
        method = make_algorithm(cfg.algorithm, {**cfg.algorithm_params, **setting})
        ledger = training_ledger(budget, method.accountant, context.accountant_options(method), relation)
        problem = context.make_problem(X_train, y_train, public_train)
        tracer = context.tracer(problem, ledger)
        rng = np.random.default_rng(context.noise_seed(_TUNING_STREAM, trial))
        start = time.perf_counter()
        result = method.fit(problem, ledger, rng, tracer)
        score = _noisy_score(result, X_valid, y_valid, public_validation, budget, relation, rng)
        wall += time.perf_counter() - start
        spent = training_rdp(ledger, budget.order)
        if not spent <= budget.train_rdp:
            raise PrivacyViolation(
                f"{cfg.algorithm}: a tuning trial spent RDP {spent!r} at order {budget.order:g}, over its {budget.train_rdp!r} "
                f"(fold {context.fold}, rep {context.rep})"
            )
        if best is None or score > best[0]:
            best = (score, setting, result, problem, tracer, ledger.eps_spent)

    run_ledger = Ledger(cfg.privacy.eps, cfg.privacy.delta, budget.accountant(), neighbouring=relation)
    eps = run_ledger.charge(budget.event(), label="repeat_and_select", neighbouring=relation)
    info = {
        "order": budget.order,
        "trial_rdp": budget.rdp,
        "score_rdp": budget.score_rdp,
        "score_noise_multiplier": budget.score_noise_multiplier * _SCORE_MARGIN,
        "trials_mean": budget.mean,
        "trials_shape": budget.shape,
        "validation_fraction": tuning.validation_fraction,
        "public_validation_n": public_validation,
    }
    if best is None:  # Poisson K = 0: nothing is released but the public default w = 0
        problem = context.make_problem(X_train, y_train, public_train)
        result = FitResult(w=np.zeros(problem.dim), n_iterations=0)
        columns = _columns("private", 0.0, eps, 0, {}, math.nan)
        return Fitted(result, problem, context.tracer(problem, None), run_ledger, eps, wall, columns, info)
    score, setting, result, problem, tracer, eps_train = best
    columns = _columns("private", eps_train, eps - eps_train, n_trials, setting, score)
    return Fitted(result, problem, tracer, run_ledger, eps, wall, columns, info)


def _noisy_score(
    result: FitResult, X, y: np.ndarray, public_n: int, budget: TrialBudget, relation: str, rng: np.random.Generator
) -> float:
    """The trial's validation accuracy, released by :func:`noisy_accuracy`."""
    correct = float(np.sum(result.predict(X) == y)) if y.shape[0] else 0.0
    return float(noisy_accuracy(correct, public_n, budget, relation, rng))


def noisy_accuracy(correct, public_n: int, budget: TrialBudget, relation: str, rng: np.random.Generator):
    """(correct count + N(0, σ²)) / m̄, m̄ the public held-out size: the count has sensitivity 1 given
    the model, and σ gives RDP ρ_score at the order α (charged to a ledger of exactly that budget).
    ``correct`` may be an array of counts (the audit's vectorised runs; one charge stands for each)."""
    from dpbench.privacy.accountants import RDPAccountant
    from dpbench.privacy.ledger import Ledger

    accountant = RDPAccountant(orders=np.array([budget.order]), conversion="tight")
    ledger = Ledger(
        accountant.epsilon(np.array([budget.score_rdp]), budget.delta), budget.delta, accountant, neighbouring=relation
    )
    noisy = gaussian_mechanism(
        correct,
        sensitivity=1.0,
        noise_multiplier=budget.score_noise_multiplier * _SCORE_MARGIN,
        rng=rng,
        ledger=ledger,
        label="validation_score",
        neighbouring=relation,
    )
    return noisy / public_n
