"""The GLM job kind: a linear model trained run by run, fold × rep, each run on its own fold and
random stream (``SeedSequence`` of (seed, fold, rep)) and its own privacy ledger, whose spend is
checked against the budget before the row is kept. Under add/remove a run first releases a noisy
training size ñ, paid from its ε, and the method runs with n̄ = ñ on the rest
(:mod:`dpbench.privacy.counts`). F* comes from a non-private solve of the same
fold, cached on disk (:func:`optimum`). An interrupted job resumes from the runs it finished
(:mod:`dpbench.resume`)."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from dpbench import __version__
from dpbench.data import load_dataset
from dpbench.errors import DpbenchError, PrivacyViolation
from dpbench.jobs.kind import JobOutput
from dpbench.jobs.splits import (
    Split,
    check_finite,
    fit_split,
    make_splits,
    public_row_norm,
)
from dpbench.privacy.counts import COUNT_STREAM, release_count
from dpbench.privacy.noise_key import noise_seed
from dpbench.results import TRACE_COLUMNS, write_json
from dpbench.tuning import FitContext, fit

if TYPE_CHECKING:
    from dpbench.algorithms.base import FidelityMode, FitResult
    from dpbench.data import Dataset
    from dpbench.jobs.plan import RunPlan
    from dpbench.problems import GLMProblem
    from dpbench.resume import RunStore
    from dpbench.settings import RunConfig

log = logging.getLogger("dpbench")


class GLMJob:
    """:class:`~dpbench.jobs.JobKind` of every algorithm with ``problem_kind = "glm"``."""

    def run(self, plan: RunPlan, store: RunStore) -> JobOutput:
        """Every fold × rep of a GLM job. Runs found finished in ``store`` (an interrupted earlier
        attempt) are taken from it; every other run is stored as soon as it ends (:mod:`dpbench.resume`)."""
        import pandas as pd
        from tqdm.auto import tqdm

        cfg, algorithm = plan.run, plan.method
        dataset = load_dataset(
            cfg.dataset,
            cfg.dataset_options,
            data_dir=cfg.data_dir,
            allow_download=cfg.allow_download,
            scaling=cfg.scaling,
            dtype=cfg.dtype,
        )
        check_finite(dataset)
        splits = make_splits(dataset, cfg, algorithm.fidelity_mode)

        rows: list[dict[str, Any]] = []
        traces: list[pd.DataFrame] = []
        ledgers: list[dict[str, Any]] = []
        n_resumed = 0
        progress = tqdm(
            total=len(splits) * cfg.reps, desc=f"{cfg.algorithm} on {cfg.dataset}", disable=not cfg.progress
        )
        with progress as bar:  # closed, its last line drawn, before an error or Ctrl-C is reported
            for fold, split in enumerate(splits):
                fstar = optimum(split, cfg, dataset.checksum, fold, algorithm.fidelity_mode)
                for rep in range(cfg.reps):
                    (row, trace, ledger_summary), resumed = store.run(
                        fold,
                        rep,
                        functools.partial(_run_one, plan, split, dataset, fold, rep, fstar),
                    )
                    n_resumed += resumed
                    rows.append(row)
                    traces.append(trace)
                    ledgers.append({"fold": fold, "rep": rep, **ledger_summary})
                    bar.update()
                    bar.set_postfix(acc=f"{row['test_accuracy']:.3f}", eps=f"{row['eps_spent']:.3g}")
        if n_resumed:
            log.info("resumed: %d of %d runs were already finished in %s", n_resumed, len(rows), store.dir)

        trace = pd.concat(traces, ignore_index=True) if traces else plan.empty_trace()
        dataset_info = {"name": dataset.name, "checksum": dataset.checksum, **dataset.info}
        return JobOutput(pd.DataFrame(rows), trace, dataset_info, ledgers)


GLM_JOB = GLMJob()


def _run_one(plan: RunPlan, split: Split, dataset: Dataset, fold: int, rep: int, fstar: float):
    """One fold × rep: its results row, its trace and its ledger's summary."""
    import pandas as pd

    cfg, algorithm, budget = plan.run, plan.method, plan.count
    row_norm = public_row_norm(dataset, cfg)
    problem = _problem(split.X_train, split.y_train, cfg, dataset, row_norm, split.public_n)  # the fold's: objectives
    trained = fit_split(
        split, algorithm.fidelity_mode
    )  # the rows the method trains on (the fold's, but for some modes)
    count = None
    if budget.paid:  # n̄ = ñ, a Laplace count of the rows trained on, from the run's secret noise stream
        n_released, count = release_count(
            trained.public_n,
            budget.count_eps,
            cfg.privacy.delta,
            np.random.default_rng(noise_seed(cfg.seed, fold, rep, COUNT_STREAM)),
        )
        trained = dataclasses.replace(trained, released_n=n_released)
    context = FitContext(
        cfg=plan.method_run,  # the method's part of ε
        split=trained,
        fold=fold,
        rep=rep,
        problem=problem
        if trained is split
        else _problem(trained.X_train, trained.y_train, cfg, dataset, row_norm, trained.public_n),
        make_problem=lambda X, y, public_n: _problem(X, y, cfg, dataset, row_norm, public_n),
        make_ledger=plan.ledger,
        accountant_options=plan.accountant_options,
    )
    fitted = fit(algorithm, context)
    result, ledger, tracer = fitted.result, fitted.ledger, fitted.tracer
    eps_count = count["eps_spent"] if count is not None else 0.0
    eps_spent = fitted.eps_spent + eps_count  # basic composition: the count, then the method
    if ledger is not None and not eps_spent <= cfg.privacy.eps:
        raise PrivacyViolation(
            f"{cfg.algorithm} spent ε = {eps_spent!r} > budget {cfg.privacy.eps!r} (fold {fold}, rep {rep})"
        )
    if result.w is not None and not np.all(np.isfinite(result.w)):
        raise DpbenchError(f"{cfg.algorithm} returned non-finite weights (fold {fold}, rep {rep}); lower its step size")

    train_obj, test_obj = _objectives(result, problem, split)
    row = {
        **plan.identity,
        **_chosen_rule(plan, fitted.columns),
        "eps_spent": float(eps_spent),
        "fold": fold,
        "rep": rep,
        "seed": cfg.seed,
        "folds": cfg.folds,
        "test_accuracy": _accuracy(result, split.X_test, split.y_test),
        "train_objective": train_obj,
        "test_objective": test_obj,
        "suboptimality": train_obj - fstar,
        "fstar": fstar,
        "n_iterations": int(result.n_iterations),
        "grad_evals": fitted.problem.counts.grad_evals,
        "obj_evals": fitted.problem.counts.obj_evals,
        "wall_time_s": fitted.wall,
        "n_train": fitted.problem.n,
        "n_test": int(split.y_test.shape[0]),
        "dim": problem.dim,
        "eps_count": float(eps_count),
        "n_public": trained.public_n,
        **plan.provenance(dataset.checksum, dataset.info["scaling"], dataset.info["guarantee_breaches"]),
        **fitted.columns,
    }
    trace = pd.DataFrame(tracer.rows) if tracer.rows else pd.DataFrame(columns=TRACE_COLUMNS[2:], dtype=float)
    trace.insert(0, "rep", rep)
    trace.insert(0, "fold", fold)
    trace = trace.assign(**plan.trace_identity())
    if eps_count:  # the count was paid before the method's first release
        trace["eps_spent"] = trace["eps_spent"] + eps_count
    summary = ledger.summary() if ledger is not None else {"accountant": "none", "eps_spent": math.inf}
    if count is not None:
        summary["count"] = count
    if fitted.info:
        summary["tuning"] = fitted.info
    return row, trace, summary


def _chosen_rule(plan: RunPlan, columns: dict[str, Any]) -> dict[str, Any]:
    """``tuning=oracle``: the stopping rule of the grid point it chose (each point's filter is fixed from
    its own setting), in place of the configured point's; nothing for the other modes."""
    setting = json.loads(columns.get("tuned_params", "{}"))
    if plan.run.tuning.mode != "oracle" or not setting:
        return {}
    return {"stopping_rule": plan.with_params(setting).identity["stopping_rule"]}


def _accuracy(result: FitResult, X, y) -> float:
    return float(np.mean(result.predict(X) == y)) if y.shape[0] else math.nan  # NaN: no test set


def _objectives(result: FitResult, problem: GLMProblem, split: Split) -> tuple[float, float]:
    if result.w is None:  # a constant predictor has no linear-model objective
        return math.nan, math.nan
    test = problem.evaluate_objective(result.w, split.X_test, split.y_test) if split.y_test.shape[0] else math.nan
    return problem.evaluate_objective(result.w), test


def _problem(
    X,
    y,
    cfg: RunConfig,
    dataset: Dataset | None = None,
    row_norm_bound: float | None = None,
    public_n: int | None = None,
) -> GLMProblem:
    """The training problem; the public bounds are the dataset's declared ones (``info["row_norm_bound"]``,
    ``info["feature_bound"]``, ``info["row_l1_bound"]``) and ``data.row_norm``, never read off the data;
    ``public_n`` is the fold's public size n̄ (:attr:`Split.public_n`)."""
    from dpbench.problems import make_problem

    info = dataset.info if dataset is not None else {}
    return make_problem(
        X,
        y,
        loss=cfg.model.loss,
        reg=cfg.model.reg,
        l1_reg=cfg.model.l1_reg,
        public_row_norm=row_norm_bound,
        public_feature_bound=info.get("feature_bound"),
        public_row_l1_norm=info.get("row_l1_bound"),
        public_n=public_n,
        **cfg.model.loss_params,
    )


_FSTAR_MEMO: dict[str, float] = {}


def optimum(split: Split, cfg: RunConfig, dataset_checksum: str, fold: int, mode: FidelityMode | None = None) -> float:
    """F* = min F on the training fold (non-private solver), cached per dataset/model/fold on
    disk under the cache directory so sweep jobs in other processes reuse it. When the solver
    certifies its distance to the minimum (the smoothed hinge solver for large dense data), the
    cache file records that gap and the solver's name with the value. A fidelity ``mode`` whose
    ``row_map`` changed the fold's rows keys the cache by the map's name too."""
    from dpbench.algorithms.base import Tracer
    from dpbench.algorithms.baselines import NonPrivate
    from dpbench.conf_files import default_cache_dir

    key_fields = {
        "dataset": dataset_checksum,
        "loss": cfg.model.loss,
        "loss_params": cfg.model.loss_params,
        "reg": cfg.model.reg,
        "l1_reg": cfg.model.l1_reg,
        "folds": cfg.folds,
        "test_fraction": cfg.test_fraction,
        "row_norm": cfg.row_norm,
        "seed": cfg.seed,
        "fold": fold,
        "version": __version__,
    }
    if mode is not None and mode.row_map is not None:
        key_fields["row_map"] = mode.row_map.__name__
    key = hashlib.sha256(json.dumps(key_fields, sort_keys=True).encode()).hexdigest()[:24]
    if key in _FSTAR_MEMO:
        return _FSTAR_MEMO[key]
    path = default_cache_dir() / "fstar" / f"{key}.json"
    try:
        value = float(json.loads(path.read_text())["fstar"])
    except (OSError, ValueError, KeyError):
        problem = _problem(split.X_train, split.y_train, cfg)
        result = NonPrivate().fit(problem, None, np.random.default_rng(0), Tracer(problem, None))
        value = problem.evaluate_objective(result.w)
        if result.info:  # the smoothed hinge solver: F* to a certified duality gap
            log.info(
                "F* = %.10g (%s, within %.2g of the minimum)",
                value,
                result.info["solver"],
                result.info["certified_gap"],
            )
        try:
            write_json({"fstar": value, **result.info, **key_fields}, path)
        except OSError as exc:  # a read-only cache only costs time
            log.debug("cannot cache F* in %s: %s", path, exc)
    _FSTAR_MEMO[key] = value
    return value
