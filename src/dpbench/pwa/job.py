"""One han_pwa job: ``reps`` runs of one mechanism on one instance, computed as arrays.

han_pwa Sec. 5.1 averages 1000 runs per point. The runs are processed in blocks of
:data:`RUNS_PER_BLOCK`: each block is ONE call of the mechanism with ``runs`` = block size
(R Metropolis chains, R subgradient paths, R noise vectors and block-diagonal LPs advance
together), so a figure takes minutes. Block j draws its noise from the path (seed, j) under the
sweep's secret key (``SeedSequence([seed, j])`` under ``privacy.noise_key=seed``,
:mod:`dpbench.privacy.noise_key`); the block size is fixed, so results depend only on (key, seed,
reps) and a rerun is bit-identical.

Privacy. Each run is a separate repetition on the same data, with its own budget (ε, δ): a block
is charged on a fresh per-run :class:`~dpbench.privacy.ledger.Ledger` that stands for every
run of the block (see :mod:`dpbench.pwa.mechanisms`, "Accounting for vectorised runs"); its spend
is checked against the budget before anything is written and recorded in every row (``eps_spent``,
``delta_spent``). Publishing all R outputs together would cost R·ε: the R runs estimate an
expectation, as in the paper.

Rows carry the usual results columns (no test set: accuracy and test objective are NaN;
``train_objective`` is f(x) on the instance, ``fstar`` the exact LP optimum) plus ``pwa_m``,
``pwa_d``, ``pwa_c``, ``pwa_b_max``, ``exact_sampler`` (False for MCMC) and ``guarantee``.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from dpbench.errors import DpbenchError, PrivacyViolation
from dpbench.jobs.kind import JobOutput
from dpbench.jobs.plan import RunPlan
from dpbench.privacy.events import ApproxDPEvent
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.noise_key import noise_seed
from dpbench.pwa.dataset import load_pwa_problem, problem_checksum
from dpbench.pwa.mechanisms import Release
from dpbench.pwa.problem import PWAProblem
from dpbench.resume import RunStore
from dpbench.settings import RunConfig

__all__ = ["PWA_JOB", "RUNS_PER_BLOCK", "PWAJob"]

RUNS_PER_BLOCK = 100


class PWAJob:
    """:class:`~dpbench.jobs.JobKind` of han_pwa's mechanisms (``problem_kind = "pwa"``). A job is
    computed in blocks of runs, so it does not resume run by run (``store`` is not used)."""

    def run(self, plan: RunPlan, store: RunStore) -> JobOutput:
        return run_pwa(plan)


PWA_JOB = PWAJob()


def run_pwa(plan: RunPlan) -> JobOutput:
    """All ``reps`` runs of a han_pwa job (no trace: the mechanisms release one point each)."""
    cfg, algorithm = plan.run, plan.method
    if cfg.folds != 1:
        raise DpbenchError(f"han_pwa jobs have no folds (one instance, no test set); got cv.folds={cfg.folds}")
    problem = load_pwa_problem(cfg.dataset, cfg.dataset_options)
    checksum = problem_checksum(problem)
    _, fstar = problem.solve()
    fixed = (dict(plan.identity), plan.provenance(checksum))  # the same in every row

    rows: list[dict[str, Any]] = []
    ledgers: list[dict[str, Any]] = []
    release_info: dict[str, Any] = {}
    bar = tqdm(total=cfg.reps, desc=f"{cfg.algorithm} on {cfg.dataset}", disable=not cfg.progress)
    for block, first in enumerate(range(0, cfg.reps, RUNS_PER_BLOCK)):
        runs = min(RUNS_PER_BLOCK, cfg.reps - first)
        ledger = plan.ledger()[0] if algorithm.private else None  # native relation only: the spend is ε
        rng = np.random.default_rng(noise_seed(cfg.seed, block))  # the instance is public; every draw here is noise
        start = time.perf_counter()
        release = algorithm.release(problem, epsilon=cfg.privacy.eps, runs=runs, rng=rng, ledger=ledger)
        wall = (time.perf_counter() - start) / runs
        eps_spent, delta_spent = _check_spend(cfg, ledger, release, block)
        if not np.all(np.isfinite(release.x)):
            raise DpbenchError(f"{cfg.algorithm} returned non-finite points (runs {first}..{first + runs - 1})")
        values = problem.objective(release.x)
        inside = np.all(np.abs(release.x) <= problem.c, axis=1)
        for i in range(runs):
            rows.append(
                _row(
                    cfg,
                    fixed,
                    problem,
                    fstar,
                    first + i,
                    float(values[i]),
                    bool(inside[i]),
                    release,
                    eps_spent,
                    delta_spent,
                    wall,
                )
            )
        ledgers.append({"block": block, "runs": runs, **(ledger.summary() if ledger else {"accountant": "none"})})
        release_info = _public_info(release)
        bar.update(runs)
        bar.set_postfix(f=f"{np.mean(values):.3g}", eps=f"{eps_spent:.3g}")
    bar.close()

    info = {
        "name": cfg.dataset,
        "checksum": checksum,
        "m": problem.m,
        "d": problem.d,
        "c": problem.c,
        "b_max": problem.b_max,
        "fstar": fstar,
        "release": release_info,
    }
    return JobOutput(pd.DataFrame(rows), plan.empty_trace(), info, ledgers)


def _check_spend(cfg: RunConfig, ledger: Ledger | None, release: Release, block: int) -> tuple[float, float]:
    """(ε, δ) each run of the block spent; a spend above the budget is a bug, never a result."""
    if ledger is None:
        return math.inf, math.nan
    eps_spent = ledger.eps_spent
    delta_spent = release.event.delta * release.count if isinstance(release.event, ApproxDPEvent) else 0.0
    if not (eps_spent <= cfg.privacy.eps and delta_spent <= cfg.privacy.delta):
        raise PrivacyViolation(
            f"{cfg.algorithm} spent (ε, δ) = ({eps_spent!r}, {delta_spent!r}) > budget "
            f"({cfg.privacy.eps!r}, {cfg.privacy.delta!r}) (block {block})"
        )
    return eps_spent, delta_spent


def _guarantee(release: Release, private: bool) -> str:
    if not private:
        return "none (non-private reference)"
    if isinstance(release.event, ApproxDPEvent):
        return "(eps, delta)-DP assuming the MCMC chain has mixed to the exponential mechanism (not certified)"
    if not release.exact:
        return "eps-DP of the exact mechanism; the MCMC sample only approximates it (not certified)"
    return "eps-DP"


def _public_info(release: Release) -> dict[str, Any]:
    """The release's scalar public settings for run.json (no arrays, no data-dependent diagnostics)."""
    info = {
        k: v
        for k, v in release.info.items()
        if not k.startswith("diagnostic_") and isinstance(v, (bool, int, float, str))
    }
    return {"exact": release.exact, "event": repr(release.event), "count": release.count, **info}


def _row(
    cfg: RunConfig,
    fixed: tuple[dict, dict],
    problem: PWAProblem,
    fstar: float,
    rep: int,
    value: float,
    inside: bool,
    release: Release,
    eps_spent: float,
    delta_spent: float,
    wall: float,
) -> dict[str, Any]:
    identity, provenance = fixed
    return {
        **identity,
        "eps_spent": float(eps_spent),
        "delta_spent": float(delta_spent),
        "guarantee": _guarantee(release, identity["private"]),
        "exact_sampler": bool(release.exact),
        "fold": 0,
        "rep": rep,
        "seed": cfg.seed,
        "folds": 1,
        "test_accuracy": math.nan,
        "train_objective": value,
        "test_objective": math.nan,
        "suboptimality": value - fstar,
        "fstar": fstar,
        "inside_box": inside,
        "n_iterations": int(release.info.get("iterations", release.info.get("n_steps", 1))),
        "grad_evals": 0,
        "obj_evals": 0,
        "wall_time_s": wall,
        "n_train": problem.m,
        "n_test": 0,
        "dim": problem.d,
        "pwa_m": problem.m,
        "pwa_d": problem.d,
        "pwa_c": problem.c,
        "pwa_b_max": problem.b_max,
        **provenance,
    }
