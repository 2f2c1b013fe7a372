"""Run one job: folds × reps of one algorithm on one dataset under one privacy budget.

Seeds derive from (``seed``, fold, rep) only (``numpy.random.SeedSequence``), so every
algorithm sees the same folds and a rerun is bit-identical. Fold assignment derives from
``seed`` alone (han_pwa jobs: see :mod:`dpbench.pwa.job`). Each private run gets a fresh :class:`~dpbench.privacy.accountant.Ledger`
whose spend is checked against the target before anything is written: spending more than
the budget is a bug, never a result. Output: ``results.parquet``, ``trace.parquet`` and
``run.json`` in the job directory, written atomically; a finished job is skipped unless forced.

The algorithms, the accountants, pandas, scipy and scikit-learn are imported by the functions that
use them: importing the engine loads numpy and little else (tests/test_import_cost.py).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import platform
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dpbench import __version__
from dpbench.data import load_dataset
from dpbench.errors import ConfigError, DpbenchError, PrivacyViolation
from dpbench.locking import job_lock
from dpbench.privacy.neighbouring import (
    group_privacy_epsilon,
    native_epsilon,
    resolve,
    run_budget,
)
from dpbench.privacy.samplers import use_sampler
from dpbench.results import (
    RESULTS_FILE,
    RUN_FILE,
    TRACE_COLUMNS,
    clear_error_marker,
    param_columns,
    read_finished,
    record_failure,
    trace_identity,
    write_json,
    write_parquet,
)
from dpbench.resume import RunStore
from dpbench.schema import column_classes
from dpbench.tuning import FitContext, fit, trial_budget

if TYPE_CHECKING:
    import pandas as pd

    from dpbench.algorithms.base import FitResult
    from dpbench.config import RunConfig
    from dpbench.data import Dataset
    from dpbench.privacy.accountant import Accountant, Ledger
    from dpbench.problems import GLMProblem

log = logging.getLogger("dpbench")


@dataclass
class Split:
    """One fold: training and test data."""

    X_train: Any
    y_train: np.ndarray
    X_test: Any
    y_test: np.ndarray

    @property
    def public_n(self) -> int:
        """n̄, the fold's training size as a public constant. A dataset's record count and label
        counts are published with it (UCI lists both for Adult and Bank) and the stratified splits'
        fold sizes follow from them and the public seed alone (sklearn allocates each class's rows to
        folds by count, whatever the shuffle), so n̄ is fixed before the private rows are read; the
        methods use it, not the size of the data they are given (docs/privacy.md)."""
        return int(self.y_train.shape[0])


def marks_failures(func):
    """Decorate ``func(cfg, out_dir, ...)`` so that an exception it raises is recorded in
    ``out_dir/error.json`` (:func:`dpbench.results.record_failure`) before it propagates."""

    @functools.wraps(func)
    def wrapper(cfg, out_dir, *args, **kwargs):
        try:
            return func(cfg, out_dir, *args, **kwargs)
        except Exception as exc:
            record_failure(Path(out_dir), exc)
            raise

    return wrapper


@marks_failures
def run_job(cfg: RunConfig, out_dir: Path, resolved_config: dict[str, Any] | None = None) -> pd.DataFrame:
    """Run (or skip, when already finished) the job described by ``cfg`` into ``out_dir``.

    GLM jobs run fold × rep one by one; han_pwa jobs (``problem_kind == "pwa"``) run all reps of
    their configuration as arrays (:func:`dpbench.pwa.job.run_pwa`); kusner_bo jobs (``"bo"``) tune
    hyper-parameters on cached validation scores (:func:`dpbench.bo.job.run_bo`). All write the same files.
    An exception leaves ``error.json`` in ``out_dir``; skipping or starting the job again removes it.
    The job holds ``out_dir``'s lock (:mod:`dpbench.locking`) while it runs, and a GLM job resumes
    from the runs an interrupted attempt finished (:mod:`dpbench.resume`)."""
    with job_lock(out_dir):  # a second process running the same job waits, then skips it
        return _run_locked(cfg, Path(out_dir), resolved_config)


def _run_locked(cfg: RunConfig, out_dir: Path, resolved_config: dict[str, Any] | None) -> pd.DataFrame:
    """:func:`run_job`'s work, under the job's lock."""
    from dpbench.algorithms.registry import algorithm_class

    results_path = out_dir / RESULTS_FILE
    finished = None if cfg.force else read_finished(results_path)
    if finished is not None:
        stored = set(finished["config_hash"])
        if stored != {cfg.config_hash}:
            raise ConfigError(
                f"{results_path} holds results of another configuration (config_hash {', '.join(sorted(stored))}, "
                f"this one is {cfg.config_hash}); pass force=true to replace them or use another output dir"
            )
        log.info("skipping %s: finished results already in %s (force=true reruns)", cfg.algorithm, results_path)
        clear_error_marker(out_dir)
        return finished
    if results_path.exists() and not cfg.force:
        log.warning("%s is unreadable or incomplete; rerunning the job", results_path)
    clear_error_marker(out_dir)  # this attempt supersedes an earlier failure
    store = RunStore(out_dir, cfg.config_hash)
    if cfg.force:
        store.clear()

    kind = algorithm_class(cfg.algorithm).problem_kind
    with use_sampler(cfg.privacy.sampler):
        if kind == "pwa":
            from dpbench.pwa.job import run_pwa

            results, trace, dataset_info, ledgers = run_pwa(cfg)
        elif kind == "bo":
            from dpbench.bo.job import run_bo

            results, trace, dataset_info, ledgers = run_bo(cfg)
        else:
            results, trace, dataset_info, ledgers = _run_glm(cfg, store)
    column_classes("results", results.columns)  # an unclassified column stops the job before any file is written
    write_parquet(trace, out_dir / "trace.parquet", table="trace")
    write_json(_run_metadata(cfg, dataset_info, resolved_config, ledgers), out_dir / RUN_FILE)
    write_parquet(results, results_path, table="results")  # last: its presence marks the job finished
    store.clear()
    return results


def _run_glm(cfg: RunConfig, store: RunStore) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any], list[dict[str, Any]]]:
    """Every fold × rep of a GLM job: (results, trace, dataset info, ledger summaries). Runs found
    finished in ``store`` (an interrupted earlier attempt) are taken from it; every other run is stored
    as soon as it ends (:mod:`dpbench.resume`)."""
    import pandas as pd
    from tqdm.auto import tqdm

    from dpbench.algorithms.registry import make_algorithm

    algorithm = make_algorithm(cfg.algorithm, cfg.algorithm_params)
    dataset = load_dataset(
        cfg.dataset, cfg.dataset_options, data_dir=cfg.data_dir, allow_download=cfg.allow_download, scaling=cfg.scaling,
        dtype=cfg.dtype,
    )
    _check_finite(dataset)
    splits = make_splits(dataset, cfg)
    identity = identity_columns(cfg)  # the same in every row

    rows: list[dict[str, Any]] = []
    traces: list[pd.DataFrame] = []
    ledgers: list[dict[str, Any]] = []
    n_resumed = 0
    progress = tqdm(total=len(splits) * cfg.reps, desc=f"{cfg.algorithm} on {cfg.dataset}", disable=not cfg.progress)
    with progress as bar:  # closed, its last line drawn, before an error or Ctrl-C is reported
        for fold, split in enumerate(splits):
            fstar = optimum(split, cfg, dataset.checksum, fold)
            for rep in range(cfg.reps):
                (row, trace, ledger_summary), resumed = store.run(
                    fold, rep, functools.partial(_run_one, algorithm, split, cfg, dataset, fold, rep, fstar, identity)
                )
                n_resumed += resumed
                rows.append(row)
                traces.append(trace)
                ledgers.append({"fold": fold, "rep": rep, **ledger_summary})
                bar.update()
                bar.set_postfix(acc=f"{row['test_accuracy']:.3f}", eps=f"{row['eps_spent']:.3g}")
    if n_resumed:
        log.info("resumed: %d of %d runs were already finished in %s", n_resumed, len(rows), store.dir)

    trace = pd.concat(traces, ignore_index=True) if traces else pd.DataFrame(columns=TRACE_COLUMNS)
    dataset_info = {"name": dataset.name, "checksum": dataset.checksum, **dataset.info}
    return pd.DataFrame(rows), trace, dataset_info, ledgers


def _run_one(algorithm, split: Split, cfg: RunConfig, dataset: Dataset, fold: int, rep: int, fstar: float, identity: dict):
    import pandas as pd

    row_norm = public_row_norm(dataset, cfg)
    problem = _problem(split.X_train, split.y_train, cfg, dataset, row_norm, split.public_n)
    context = FitContext(
        cfg=cfg, split=split, fold=fold, rep=rep, problem=problem,
        make_problem=lambda X, y, public_n: _problem(X, y, cfg, dataset, row_norm, public_n),
        make_ledger=lambda method: run_ledger(method, cfg),
        accountant_options=lambda method: accountant_options(method, cfg),
    )
    fitted = fit(algorithm, context)
    result, ledger, eps_spent, tracer = fitted.result, fitted.ledger, fitted.eps_spent, fitted.tracer
    if ledger is not None and not eps_spent <= cfg.privacy.eps:
        raise PrivacyViolation(f"{cfg.algorithm} spent ε = {eps_spent!r} > budget {cfg.privacy.eps!r} (fold {fold}, rep {rep})")
    if result.w is not None and not np.all(np.isfinite(result.w)):
        raise DpbenchError(f"{cfg.algorithm} returned non-finite weights (fold {fold}, rep {rep}); lower its step size")

    train_obj, test_obj = _objectives(result, problem, split)
    row = {
        **identity,
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
        **provenance_columns(cfg, dataset.checksum, dataset.info["scaling"]),
        **fitted.columns,
    }
    trace = pd.DataFrame(tracer.rows) if tracer.rows else pd.DataFrame(columns=TRACE_COLUMNS[2:], dtype=float)
    trace.insert(0, "rep", rep)
    trace.insert(0, "fold", fold)
    trace = trace.assign(**trace_identity(cfg))
    summary = ledger.summary() if ledger is not None else {"accountant": "none", "eps_spent": math.inf}
    if fitted.info:
        summary["tuning"] = fitted.info
    return row, trace, summary


def run_ledger(algorithm, cfg: RunConfig) -> tuple[Ledger, Callable[[float], float]]:
    """The ledger of one private run and the map from its spend to the reported ε: the requested
    (ε, δ) under the method's relation, or — when it meets ``privacy.neighbouring=replace_one`` by
    group privacy — the add/remove budget (ε/2, δ/(1 + e^{ε/2})), whose spend ε′ is reported as 2ε′
    (:mod:`dpbench.privacy.neighbouring`)."""
    from dpbench.privacy.accountant import Ledger

    eps, delta, relation, mode = run_budget(algorithm, cfg.privacy.eps, cfg.privacy.delta, cfg.privacy.neighbouring)
    ledger = Ledger(eps, delta, run_accountant(algorithm, cfg, eps, delta), neighbouring=relation)
    return ledger, (group_privacy_epsilon if mode == "group_privacy" else native_epsilon)


def run_accountant(algorithm, cfg: RunConfig, eps: float | None = None, delta: float | None = None) -> Accountant:
    """The accountant of one private run at the ledger's (ε, δ) (default: ``cfg.privacy``'s). RDP
    ledgers convert by ``privacy.conversion`` when the releases are fixed in advance; for methods that
    stop adaptively (``adaptive_stopping``) a post-hoc minimum over orders is not a proven guarantee,
    so — whatever ``privacy.conversion`` says — they get a Rényi filter
    (:func:`~dpbench.privacy.filter.filter_accountant`)."""
    from dpbench.privacy.accountant import make_accountant
    from dpbench.privacy.filter import filter_accountant

    eps = cfg.privacy.eps if eps is None else eps
    delta = cfg.privacy.delta if delta is None else delta
    options = accountant_options(algorithm, cfg)
    if algorithm.accountant != "rdp":
        return make_accountant(algorithm.accountant, **options)
    if algorithm.adaptive_stopping:
        return filter_accountant(algorithm.planned_step(eps), eps, delta, **options)
    return make_accountant("rdp", conversion=cfg.privacy.conversion, **options)


def accountant_options(algorithm, cfg: RunConfig) -> dict[str, Any]:
    """The method's accountant options, with the subsampled Gaussian priced by chen_lee Lemma 4 under
    the secure sampler (the exact bound of Mironov, Talwar & Zhang 2019 is proven for continuous
    noise; Lemma 4 holds for any mechanism with the discrete Gaussian's smaller RDP curve)."""
    options = algorithm.accountant_options()
    if algorithm.accountant == "rdp" and cfg.privacy.sampler == "secure":
        options["gaussian_amplification"] = "lemma4"
    return options


def identity_columns(cfg: RunConfig) -> dict[str, Any]:
    """The results columns that say what ran: paper, algorithm, dataset, model, loss, budget, the
    neighbouring relation and privacy unit the (ε, δ) is for and how the method meets that relation,
    the DP notion its ledger composes in, accountant, the RDP conversion its ledger used and the rule
    that makes its ε a guarantee (:func:`run_accountant`)."""
    from dpbench.algorithms.registry import algorithm_class, make_algorithm
    from dpbench.privacy.filter import stopping_rule

    cls = algorithm_class(cfg.algorithm)
    algorithm = make_algorithm(cfg.algorithm, cfg.algorithm_params)
    accountant = algorithm.accountant  # some methods choose it by a hyper-parameter
    relation, mode = resolve(algorithm, cfg.privacy.neighbouring)
    run_rules, rule = None, "none"
    if cls.private:
        eps, delta, _, _ = run_budget(algorithm, cfg.privacy.eps, cfg.privacy.delta, cfg.privacy.neighbouring)
        run_rules = run_accountant(algorithm, cfg, eps, delta)
        rule = stopping_rule(run_rules, algorithm.adaptive_stopping)
        if cfg.tuning.mode == "private" and cfg.tuning.grid:  # the run's ledger prices one repeat-and-select
            run_rules = trial_budget(algorithm, cfg).accountant()
            accountant, rule = "rdp", f"repeat_and_select(alpha={run_rules.orders[0]:g})"
    return {
        "paper": cls.paper,
        "algorithm": cfg.algorithm,
        "dataset": cfg.dataset,
        "model": cfg.model.name,
        "loss": cfg.model.loss,
        "eps": cfg.privacy.eps,
        "delta": cfg.privacy.delta,
        "private": cls.private,
        "neighbouring": relation,
        "privacy_unit": cls.privacy_unit if cls.private else "none",
        "relation_conversion": mode,
        "dp_notion": accountant if cls.private else "none",
        "accountant": accountant if cls.private else "none",
        "conversion": getattr(run_rules, "conversion", cfg.privacy.conversion),
        "sampler": cfg.privacy.sampler if cls.private else "none",
        "stopping_rule": rule,
    }


def provenance_columns(cfg: RunConfig, dataset_checksum: str, scaling: str = "none") -> dict[str, Any]:
    """The results columns that say where a row comes from: preset, hyper-parameters (as JSON in
    ``params`` and one ``p_<name>`` column each), data (and how its features were scaled), config,
    version. ``guarantee_valid`` is False when the data were prepared with something the privacy
    guarantee does not cover (``data.scaling=whole_file``)."""
    return {
        "experiment": cfg.experiment,
        "variant": cfg.variant,
        "params": json.dumps(cfg.algorithm_params, sort_keys=True),
        **param_columns(cfg.algorithm_params),
        "scaling": scaling,
        "guarantee_valid": scaling != "whole_file" and cfg.tuning.mode != "oracle",
        "dataset_checksum": dataset_checksum,
        "config_hash": cfg.config_hash,
        "dpbench_version": __version__,
    }


def _accuracy(result: FitResult, X, y) -> float:
    return float(np.mean(result.predict(X) == y)) if y.shape[0] else math.nan  # NaN: no test set


def _objectives(result: FitResult, problem: GLMProblem, split: Split) -> tuple[float, float]:
    if result.w is None:  # a constant predictor has no linear-model objective
        return math.nan, math.nan
    test = problem.evaluate_objective(result.w, split.X_test, split.y_test) if split.y_test.shape[0] else math.nan
    return problem.evaluate_objective(result.w), test


def _problem(
    X, y, cfg: RunConfig, dataset: Dataset | None = None, row_norm_bound: float | None = None, public_n: int | None = None
) -> GLMProblem:
    """The training problem; the public bounds are the dataset's declared ones (``info["row_norm_bound"]``,
    ``info["feature_bound"]``, ``info["row_l1_bound"]``) and ``data.row_norm``, never read off the data;
    ``public_n`` is the fold's public size n̄ (:attr:`Split.public_n`)."""
    from dpbench.problems import make_problem

    info = dataset.info if dataset is not None else {}
    return make_problem(
        X, y, loss=cfg.model.loss, reg=cfg.model.reg, l1_reg=cfg.model.l1_reg, public_row_norm=row_norm_bound,
        public_feature_bound=info.get("feature_bound"), public_row_l1_norm=info.get("row_l1_bound"),
        public_n=public_n, **cfg.model.loss_params,
    )


def public_row_norm(dataset: Dataset, cfg: RunConfig) -> float | None:
    """A bound on the training rows' L2 norms that is public: the one the dataset's encoding
    guarantees (``info["row_norm_bound"]``, e.g. 1 for unit-normalised rows) or the ``data.row_norm``
    every row was clipped to, whichever is smaller; None when there is neither."""
    bounds = [b for b in (dataset.info.get("row_norm_bound"), cfg.row_norm) if b is not None]
    return float(min(bounds)) if bounds else None


def _check_finite(dataset: Dataset) -> None:
    """Refuse a dataset without rows, or with NaN or infinite features, before anything runs."""
    from dpbench.problems.products import all_finite

    if dataset.X.shape[0] == 0 or dataset.y.shape[0] != dataset.X.shape[0]:
        raise DpbenchError(
            f"dataset {dataset.name}: no usable rows ({dataset.X.shape[0]} feature rows, {dataset.y.shape[0]} labels)"
        )
    for label, X in (("features", dataset.X), ("test features", dataset.X_test)):
        if X is None:
            continue
        if not all_finite(X):
            raise DpbenchError(f"dataset {dataset.name}: {label} contain NaN or infinite values")


# -------------------------------------------------------------------------------- folds
def make_splits(dataset: Dataset, cfg: RunConfig) -> list[Split]:
    """The folds for ``cfg.seed``: stratified k-fold on train+test when ``cv.folds > 1``; the
    dataset's own test split when it has one and ``cv.folds == 1``; otherwise a stratified
    hold-out of ``cv.test_fraction``. Rows are clipped to ``data.row_norm`` when it is set."""
    import scipy.sparse as sp
    from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit

    from dpbench.data import clip_rows

    X, y = dataset.X, dataset.y
    if cfg.row_norm is not None:
        X = clip_rows(X, cfg.row_norm)
    X_test = dataset.X_test
    if X_test is not None and cfg.row_norm is not None:
        X_test = clip_rows(X_test, cfg.row_norm)
    split_seed = int(np.random.SeedSequence(cfg.seed).generate_state(1)[0])

    if cfg.folds == 1 and X_test is not None:
        splits = [Split(X, y, X_test, dataset.y_test)]
        _check_two_classes(dataset.name, splits)
        return splits
    if cfg.folds == 1 and cfg.test_fraction == 0.0:  # optimisation studies: train on every row, no test set
        splits = [Split(X, y, X[:0], y[:0])]
        _check_two_classes(dataset.name, splits)
        return splits
    if X_test is not None:
        X = sp.vstack([X, X_test], format="csr") if sp.issparse(X) else np.vstack([X, X_test])
        y = np.concatenate([y, dataset.y_test])
    smallest_class = int(np.min(np.unique(y, return_counts=True)[1]))
    if smallest_class < max(cfg.folds, 2):
        raise ConfigError(
            f"dataset {dataset.name}: its smallest class has {smallest_class} example(s), too few for "
            f"{'cv.folds=' + str(cfg.folds) if cfg.folds > 1 else 'a stratified hold-out'}"
        )
    if cfg.folds == 1:
        splitter = StratifiedShuffleSplit(n_splits=1, test_size=cfg.test_fraction, random_state=split_seed)
    else:
        splitter = StratifiedKFold(n_splits=cfg.folds, shuffle=True, random_state=split_seed)
    splits = [Split(X[tr], y[tr], X[te], y[te]) for tr, te in splitter.split(np.zeros(len(y)), y)]
    _check_two_classes(dataset.name, splits)
    return splits


def _check_two_classes(name: str, splits: list[Split]) -> None:
    for fold, split in enumerate(splits):
        if np.unique(split.y_train).size < 2:
            raise ConfigError(f"dataset {name}: the training data of fold {fold} has a single class; nothing to learn")


# -------------------------------------------------------------------------------- F*
_FSTAR_MEMO: dict[str, float] = {}


def optimum(split: Split, cfg: RunConfig, dataset_checksum: str, fold: int) -> float:
    """F* = min F on the training fold (non-private solver), cached per dataset/model/fold on
    disk under the cache directory so sweep jobs in other processes reuse it. When the solver
    certifies its distance to the minimum (the smoothed hinge solver for large dense data), the
    cache file records that gap and the solver's name with the value."""
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
            log.info("F* = %.10g (%s, within %.2g of the minimum)", value, result.info["solver"], result.info["certified_gap"])
        try:
            write_json({"fstar": value, **result.info, **key_fields}, path)
        except OSError as exc:  # a read-only cache only costs time
            log.debug("cannot cache F* in %s: %s", path, exc)
    _FSTAR_MEMO[key] = value
    return value


# -------------------------------------------------------------------------------- metadata
def _run_metadata(cfg: RunConfig, dataset_info: dict[str, Any], resolved: dict[str, Any] | None, ledgers: list) -> dict[str, Any]:
    packages = ("numpy", "scipy", "scikit-learn", "pandas", "pyarrow", "hydra-core", "omegaconf", "matplotlib")
    return {
        "dpbench_version": __version__,
        "python": platform.python_version(),
        "packages": {name: _version(name) for name in packages},
        "config_hash": cfg.config_hash,
        "config": resolved if resolved is not None else cfg.semantic_dict(),
        "dataset": dataset_info,
        "ledgers": ledgers,
    }


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
