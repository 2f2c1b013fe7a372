"""One kusner_bo job: ``reps`` private tuning runs (Algorithms 1–3) or one Fig. 1 likelihood study.

Set-up (public, shared by every repetition): the dataset's rows are split by ``bo.split_seed``
into training, test and pool rows (:func:`dpbench.bo.targets.make_splits`); Λ is a scrambled Sobol
set; every candidate model is trained once and its per-row correctness and ramp loss on the pool
and test rows are cached (:func:`dpbench.bo.targets.score_matrix`), so a repetition only averages
columns.

Repetition r draws its sensitive validation set V (``bo.validation_size`` pool rows without
replacement) from ``SeedSequence([seed, r])`` (public: the study's data) and its noise from the path
(seed, r) under the sweep's secret key (:mod:`dpbench.privacy.noise_key`; that same stream continued
under ``privacy.noise_key=seed``), runs the method on a fresh ledger
whose spend is checked (ε and δ) before anything is written, and yields one row: what was released
(λ̃'s index and values, ṽ), the non-private reference (λ̂ = argmax_t v_t, v* = max_t v_t, the best
candidate on V), their gains on V and their test accuracies. The trace holds GP-UCB's path, which
runs on the raw validation gains, only with ``trace.nonprivate=true``.

The Fig. 1 study (``algorithm=kusner_mtgp_likelihood``) draws ``n_sets`` validation sets per
repetition, a neighbour of each by adding or removing one random pool row (a fair coin), and
writes one row per k₁ with the multi-task GP log likelihood summed over the sets (eq. 14).
"""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from dpbench.bo.algorithms import BOProblem, BORelease, KusnerMTGPLikelihood
from dpbench.bo.gp import kernel_matrix, multitask_log_likelihood
from dpbench.bo.targets import (
    ScoreMatrix,
    TargetSpec,
    candidate_points,
    make_splits,
    row_count,
    score_matrix,
)
from dpbench.conf_files import default_cache_dir
from dpbench.data import load_dataset
from dpbench.errors import DpbenchError, PrivacyViolation
from dpbench.jobs.kind import JobOutput
from dpbench.jobs.plan import RunPlan
from dpbench.privacy.events import ApproxDPEvent
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.noise_key import noise_rng
from dpbench.resume import RunStore
from dpbench.settings import RunConfig

__all__ = ["BO_JOB", "BOJob"]


class BOJob:
    """:class:`~dpbench.jobs.JobKind` of kusner_bo's methods (``problem_kind = "bo"``). A repetition
    costs a few column averages of the cached score matrix, so a job does not resume run by run
    (``store`` is not used)."""

    def run(self, plan: RunPlan, store: RunStore) -> JobOutput:
        return run_bo(plan)


BO_JOB = BOJob()


def run_bo(plan: RunPlan) -> JobOutput:
    """All repetitions of a kusner_bo job (the trace holds GP-UCB's path with ``trace.nonprivate=true``)."""
    cfg, algorithm = plan.run, plan.method
    if cfg.folds != 1:
        raise DpbenchError(
            f"kusner_bo jobs split the data by bo.split_seed and have no folds; got cv.folds={cfg.folds}"
        )
    bo = cfg.bo
    dataset = load_dataset(
        cfg.dataset, cfg.dataset_options, data_dir=cfg.data_dir, allow_download=cfg.allow_download, scaling=cfg.scaling
    )
    spec = TargetSpec.from_options(bo.target, bo.target_options)
    points = candidate_points(bo.n_candidates, spec.dim, seed=bo.candidate_seed)
    splits = make_splits(
        row_count(dataset), train_size=bo.train_size, test_size=bo.test_size, pool_size=bo.pool_size, seed=bo.split_seed
    )
    if splits.pool.shape[0] <= bo.validation_size:
        raise DpbenchError(
            f"dataset {cfg.dataset}: the pool has {splits.pool.shape[0]} rows, not more than bo.validation_size = "
            f"{bo.validation_size}; lower bo.validation_size, bo.train_size or bo.test_size"
        )
    start = time.perf_counter()
    scores = score_matrix(dataset, spec, points, splits, cache_dir=default_cache_dir(), progress=cfg.progress)
    setup_seconds = time.perf_counter() - start
    info = {
        "name": dataset.name,
        "checksum": dataset.checksum,
        "target": bo.target,
        "hyperparameters": scores.hyperparameters,
        "n_pool": scores.n_pool,
        "n_test": int(scores.correct.shape[1] - scores.n_pool),
        "score_matrix_key": scores.key,
        "train_seconds": scores.train_seconds,
        "setup_seconds": setup_seconds,
        "scaling": dataset.info["scaling"],
        "guarantee_breaches": dataset.info["guarantee_breaches"],
    }
    provenance = plan.provenance(dataset.checksum, dataset.info["scaling"], dataset.info["guarantee_breaches"])
    fixed = (dict(plan.identity), provenance)
    if isinstance(algorithm, KusnerMTGPLikelihood):
        return JobOutput(_likelihood(cfg, algorithm, scores, fixed), plan.empty_trace(), info, [])
    results, trace, ledgers = _tuning(plan, scores, fixed)
    return JobOutput(results, trace, info, ledgers)


def _tuning(plan: RunPlan, scores: ScoreMatrix, fixed) -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
    cfg, algorithm, bo = plan.run, plan.method, plan.run.bo
    pool, test = scores.pool_columns(), scores.test_columns()
    test_accuracy = scores.accuracy(test) if test.size else np.full(scores.correct.shape[0], math.nan)
    rows, traces, ledgers = [], [], []
    bar = tqdm(total=cfg.reps, desc=f"{cfg.algorithm} on {cfg.dataset}", disable=not cfg.progress)
    for rep in range(cfg.reps):
        public = np.random.default_rng(np.random.SeedSequence([cfg.seed, rep]))
        validation = pool[public.choice(pool.size, size=bo.validation_size, replace=False)]  # the study's data: public
        rng = noise_rng(public, cfg.seed, rep)
        gains = scores.ramp_score(validation) if algorithm.gain == "ramp" else scores.accuracy(validation)
        problem = BOProblem(gains, scores.points, scores.hyperparameters, bo.validation_size, scores.row_norm)
        ledger, _ = plan.ledger()  # native relation only: the spend is ε
        start = time.perf_counter()
        release = algorithm.release(problem, epsilon=cfg.privacy.eps, delta=cfg.privacy.delta, rng=rng, ledger=ledger)
        wall = time.perf_counter() - start
        eps_spent, delta_spent = _check_spend(cfg, ledger, rep)
        rows.append(_row(cfg, fixed, rep, problem, release, algorithm, test_accuracy, eps_spent, delta_spent, wall))
        if cfg.trace_nonprivate:  # GP-UCB's path runs on the raw validation gains: never released
            traces.append(_trace(plan, rep, release))
        ledgers.append({"rep": rep, **ledger.summary()})
        bar.update()
        bar.set_postfix(v=f"{release.value:.3g}", eps=f"{eps_spent:.3g}")
    bar.close()
    return pd.DataFrame(rows), pd.concat(traces, ignore_index=True) if traces else plan.empty_trace(), ledgers


def _check_spend(cfg: RunConfig, ledger: Ledger, rep: int) -> tuple[float, float]:
    """(ε, δ) the run spent; a spend above the budget is a bug, never a result."""
    eps_spent = ledger.eps_spent
    delta_spent = sum(e.event.delta * e.count for e in ledger.entries if isinstance(e.event, ApproxDPEvent))
    if not (eps_spent <= cfg.privacy.eps and delta_spent <= cfg.privacy.delta):
        raise PrivacyViolation(
            f"{cfg.algorithm} spent (ε, δ) = ({eps_spent!r}, {delta_spent!r}) > budget "
            f"({cfg.privacy.eps!r}, {cfg.privacy.delta!r}) (rep {rep})"
        )
    return float(eps_spent), float(delta_spent)


def _row(
    cfg, fixed, rep, problem: BOProblem, release: BORelease, algorithm, test_accuracy, eps_spent, delta_spent, wall
):
    identity, provenance = fixed
    gains, run = problem.gains, release.run
    observed_best = int(run.indices[int(np.argmax(run.values))])  # λ̂: the best observed (non-private)
    overall_best = int(np.argmax(gains))
    index = release.index
    return {
        **identity,
        "eps_spent": eps_spent,
        "delta_spent": delta_spent,
        "guarantee": algorithm.guarantee,
        "fold": 0,
        "rep": rep,
        "seed": cfg.seed,
        "folds": 1,
        "target": cfg.bo.target,
        "gain": algorithm.gain,
        "n_candidates": int(gains.shape[0]),
        "iterations": int(run.indices.shape[0]),
        "validation_size": problem.validation_size,
        "released_index": -1 if index is None else int(index),
        "released_hyperparameters": None if index is None else json.dumps(problem.hyperparameters[index]),
        "value_released": release.value,
        "value_best_observed": release.best_observed,
        "value_error": abs(release.value - release.best_observed),
        "gain_released": math.nan if index is None else float(gains[index]),
        "gain_best_observed": float(gains[observed_best]),
        "gain_best": float(gains[overall_best]),
        "test_accuracy": math.nan if index is None else float(test_accuracy[index]),
        "train_objective": math.nan,
        "test_objective": math.nan,
        "suboptimality": math.nan if index is None else float(gains[overall_best] - gains[index]),
        "n_iterations": int(run.indices.shape[0]),
        "grad_evals": 0,
        "obj_evals": int(run.indices.shape[0]),  # validation-gain evaluations
        "test_accuracy_best_observed": float(test_accuracy[observed_best]),
        "test_accuracy_best": float(test_accuracy[overall_best]),
        **{key: float(value) for key, value in release.info.items()},
        "wall_time_s": wall,
        "n_train": cfg.bo.train_size,
        "n_test": cfg.bo.test_size,
        "dim": int(problem.points.shape[1]),
        **provenance,
    }


def _trace(plan: RunPlan, rep: int, release: BORelease) -> pd.DataFrame:
    run = release.run
    return pd.DataFrame(
        {
            "fold": 0,
            "rep": rep,
            "iteration": np.arange(1, run.indices.shape[0] + 1),
            "candidate": run.indices.astype(int),
            "value": run.values,
            "best_so_far": np.maximum.accumulate(run.values),
            **plan.trace_identity(),
        }
    )


def _likelihood(cfg: RunConfig, study: KusnerMTGPLikelihood, scores: ScoreMatrix, fixed) -> pd.DataFrame:
    """Fig. 1: Σ_i log N([F_Vi; F_Vi′]) per k₁, for ``reps`` independent draws of ``n_sets`` sets."""
    identity, provenance = fixed
    m = cfg.bo.validation_size
    pool = scores.pool_columns()
    K2 = kernel_matrix(scores.points, scores.points, kernel=study.kernel, length_scale=study.length_scale)
    gain = scores.ramp_score if study.gain == "ramp" else scores.accuracy
    rows = []
    for rep in tqdm(range(cfg.reps), desc=f"{cfg.algorithm} m={m}", disable=not cfg.progress):
        rng = np.random.default_rng(np.random.SeedSequence([cfg.seed, rep]))
        start = time.perf_counter()
        F, F_prime, added = _gain_pairs(rng, pool, m, study.n_sets, gain)
        loglik = multitask_log_likelihood(
            F,
            F_prime,
            K2,
            study.k1_values,
            noise_variance=study.noise_variance,
            signal_variance=study.signal_variance,
            center=study.center,
        )
        wall = time.perf_counter() - start
        diff = np.abs(F - F_prime)
        for k1, value in zip(study.k1_values, loglik):
            rows.append(
                {
                    **identity,
                    "eps_spent": math.inf,
                    "fold": 0,
                    "rep": rep,
                    "seed": cfg.seed,
                    "folds": 1,
                    "test_accuracy": math.nan,
                    "train_objective": math.nan,
                    "test_objective": math.nan,
                    "suboptimality": math.nan,
                    "n_iterations": 0,
                    "grad_evals": 0,
                    "obj_evals": 0,
                    "target": cfg.bo.target,
                    "gain": study.gain,
                    "n_candidates": int(F.shape[1]),
                    "validation_size": m,
                    "n_sets": study.n_sets,
                    "k1": k1,
                    "log_likelihood": float(value),
                    "n_added": int(added),
                    "max_abs_gain_change": float(diff.max()),
                    "mean_abs_gain_change": float(diff.mean()),
                    "gain_std_across_candidates": float(F.std(axis=1).mean()),
                    "wall_time_s": wall,
                    "n_train": cfg.bo.train_size,
                    "n_test": cfg.bo.test_size,
                    "dim": int(scores.points.shape[1]),
                    **provenance,
                }
            )
    return pd.DataFrame(rows)


def _gain_pairs(
    rng: np.random.Generator, pool: np.ndarray, m: int, n_sets: int, gain
) -> tuple[np.ndarray, np.ndarray, int]:
    """F (n_sets × |Λ|) on i.i.d. validation sets of m pool rows, F′ on each set with one random
    pool row added or one of its rows removed (a fair coin); also how many were additions."""
    F, F_prime, added = [], [], 0
    for _ in range(n_sets):
        chosen = rng.choice(pool.size, size=m + 1, replace=False)  # the last one is the candidate addition
        validation = pool[chosen[:m]]
        if rng.random() < 0.5:
            neighbour = pool[chosen]
            added += 1
        else:
            neighbour = np.delete(validation, rng.integers(m))
        F.append(gain(validation))
        F_prime.append(gain(neighbour))
    return np.asarray(F), np.asarray(F_prime), added
