"""The columns every job writes, whatever its kind: what ran (identity), where a row comes from
(provenance), the per-run core, and the identity of every trace row. One definition for every kind
of job (:mod:`dpbench.jobs`); docs/schema.md describes each column.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from dpbench import __version__, code_identity
from dpbench.jobs.ledgers import reads_private_size, run_accountant
from dpbench.privacy.neighbouring import resolve, run_budget
from dpbench.results import TRACE_COLUMNS, param_columns

if TYPE_CHECKING:
    import pandas as pd

    from dpbench.algorithms.base import Algorithm
    from dpbench.settings import RunConfig

IDENTITY_COLUMNS = (
    "paper",
    "algorithm",
    "dataset",
    "model",
    "loss",
    "eps",
    "delta",
    "private",
    "neighbouring",
    "privacy_unit",
    "relation_conversion",
    "dp_notion",
    "accountant",
    "conversion",
    "sampler",
    "noise_key",
    "stopping_rule",
)
RUN_COLUMNS = (
    "eps_spent",
    "fold",
    "rep",
    "seed",
    "folds",
    "test_accuracy",
    "train_objective",
    "test_objective",
    "suboptimality",
    "n_iterations",
    "grad_evals",
    "obj_evals",
    "wall_time_s",
    "n_train",
    "n_test",
    "dim",
)
PROVENANCE_COLUMNS = (
    "experiment",
    "variant",
    "params",
    "scaling",
    "fidelity",
    "guarantee_kind",
    "guarantee_valid",
    "guarantee_note",
    "dataset_checksum",
    "config_hash",
    "dpbench_version",
    "code_identity",
)
#: Every results row of every kind of job carries these (a kind adds its own after them).
CORE_COLUMNS = IDENTITY_COLUMNS + RUN_COLUMNS + PROVENANCE_COLUMNS
TRACE_IDENTITY_COLUMNS = ("algorithm", "dataset", "eps", "seed", "config_hash")


def identity_columns(cfg: RunConfig, algorithm: Algorithm, method_cfg: RunConfig) -> dict[str, Any]:
    """The results columns that say what ran: paper, algorithm, dataset, model, loss, budget, the
    neighbouring relation and privacy unit the (ε, δ) is for and how the method meets that relation,
    the DP notion its ledger composes in, accountant, the RDP conversion its ledger used, where its
    noise's randomness came from (``noise_key``: secret or seed) and the rule
    that makes its ε a guarantee (:func:`~dpbench.jobs.ledgers.run_accountant`, built on the method's part
    of ε, ``method_cfg``, when a noisy training size is paid first: :func:`~dpbench.jobs.ledgers.count_budget`).
    ``algorithm`` is the instance built from ``cfg``'s hyper-parameters."""
    from dpbench.privacy.filter import stopping_rule
    from dpbench.tuning import trial_budget

    cls = type(algorithm)
    accountant = algorithm.accountant  # some methods choose it by a hyper-parameter
    relation, mode = resolve(algorithm, cfg.privacy.neighbouring)
    run_rules, rule = None, "none"
    if cls.private:
        eps, delta, _, _ = run_budget(algorithm, method_cfg.privacy.eps, cfg.privacy.delta, cfg.privacy.neighbouring)
        run_rules = run_accountant(algorithm, method_cfg, eps, delta)
        rule = stopping_rule(run_rules, algorithm.adaptive_stopping)
        if cfg.tuning.mode == "private" and cfg.tuning.grid:  # the run's ledger prices one repeat-and-select
            run_rules = trial_budget(algorithm, method_cfg).accountant()
            accountant, rule = "rdp", f"repeat_and_select(alpha={run_rules.orders[0]:g})"
    return {
        "paper": cls.paper,
        "algorithm": cfg.algorithm,
        "dataset": dataset_label(cfg),
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
        "noise_key": cfg.privacy.noise_key if cls.private else "none",
        "stopping_rule": rule,
    }


def provenance_columns(
    cfg: RunConfig,
    algorithm: Algorithm,
    dataset_checksum: str,
    scaling: str = "none",
    data_breaches: Sequence[str] = (),
) -> dict[str, Any]:
    """The results columns that say where a row comes from: preset, hyper-parameters (as JSON in
    ``params`` and one ``p_<name>`` column each), data (and how its features were scaled), config,
    version and the code that computed it (:mod:`dpbench.code_identity`). ``guarantee_kind`` says
    what the (ε, δ) is (:func:`guarantee_status`); ``guarantee_valid`` is True only for a proven one
    (and for the non-private references, which claim none), and ``guarantee_note`` says why not:
    something the guarantee does not cover prepared the data, chose the hyper-parameters or ran the
    method (:func:`guarantee_breaches`), or it rests on an assumption no run can check;
    ``data_breaches`` are the loader's reasons (``Dataset.info["guarantee_breaches"]``)."""
    kind, reasons = guarantee_status(cfg, algorithm, scaling, data_breaches)
    return {
        "experiment": cfg.experiment,
        "variant": cfg.variant,
        "params": json.dumps(cfg.algorithm_params, sort_keys=True),
        **param_columns(cfg.algorithm_params),
        "scaling": scaling,
        "fidelity": cfg.algorithm_params.get("fidelity", "correct"),
        "guarantee_kind": kind,
        "guarantee_valid": not reasons,
        "guarantee_note": "; ".join(reasons),
        "dataset_checksum": dataset_checksum,
        "config_hash": cfg.config_hash,
        "dpbench_version": __version__,
        "code_identity": code_identity.identity_of(type(algorithm)),
    }


#: The values of ``guarantee_kind``.
GUARANTEE_KINDS = {
    "proven": "the (ε, δ) follows from the method's proof for this configuration",
    "conditional": "the (ε, δ) holds if an assumption holds that no run can check (the method's conditional_on)",
    "not_covered": "something the guarantee does not cover prepared the data, chose the hyper-parameters or ran the method",
    "none": "a non-private reference: it claims no guarantee",
}


def guarantee_status(
    cfg: RunConfig, algorithm: Algorithm, scaling: str, data_breaches: Sequence[str] = ()
) -> tuple[str, list[str]]:
    """(``guarantee_kind``, why ``guarantee_valid`` is False — empty when it is True): ``not_covered`` with
    :func:`guarantee_breaches`' reasons, else ``conditional`` with the assumption the method's guarantee rests
    on (``Algorithm.conditional_on``: kusner_bo Alg. 1–2's Assumption 1, han_pwa's unmixed Metropolis chain),
    else ``proven`` (``none`` for a non-private reference, which has nothing to break)."""
    breaches = guarantee_breaches(cfg, algorithm, scaling, data_breaches)
    if breaches:
        return "not_covered", breaches
    if not algorithm.private:
        return "none", []
    if algorithm.conditional_on:
        return "conditional", [f"conditional: {algorithm.conditional_on}"]
    return "proven", []


def guarantee_breaches(
    cfg: RunConfig, algorithm: Algorithm, scaling: str, data_breaches: Sequence[str] = ()
) -> list[str]:
    """Why a row's (ε, δ) is not a guarantee, one reason each: the features were scaled with the
    whole file (``data.scaling=whole_file``), the loader prepared the data in a way the guarantee
    does not cover (``data_breaches``, e.g. declared ranges without a public source), the
    hyper-parameters were chosen on the test fold (``tuning=oracle``), the training size was read
    unpaid under add/remove (``privacy.count_share=0``), or the method ran in a fidelity
    mode that breaks its guarantee or trains on the test fold
    (:class:`~dpbench.algorithms.base.FidelityMode`). Empty when it is one."""
    reasons = []
    if scaling == "whole_file":
        reasons.append("data.scaling=whole_file: min–max ranges fitted on every row, test fold included")
    reasons.extend(data_breaches)
    if cfg.tuning.mode == "oracle":
        reasons.append("tuning=oracle: hyper-parameters chosen on the test fold")
    if cfg.privacy.count_share == 0.0 and reads_private_size(algorithm, cfg):
        reasons.append(
            "privacy.count_share=0: the method used the realised training size as n̄, so its (ε, δ) holds for "
            "zero-out neighbours, not add/remove"
        )
    mode = algorithm.fidelity_mode
    if mode is not None and mode.breaks_guarantee:
        reasons.append(f"fidelity={cfg.algorithm_params['fidelity']}: {mode.breaks_guarantee}")
    if mode is not None and mode.trains_on_test_fold:
        reasons.append(
            f"fidelity={cfg.algorithm_params['fidelity']} trains on the test fold too: the test accuracy is not held out"
        )
    return reasons


def dataset_label(cfg: RunConfig) -> str:
    """The ``dataset`` column: the dataset's name, and for a dataset with a ``title`` option
    (``dataset=file``) that title, else ``file:<the file's stem>``, so that two files are never
    one dataset to a figure or the leaderboard."""
    options = cfg.dataset_options
    if "title" not in options:
        return cfg.dataset
    return str(options["title"]) if options["title"] else f"{cfg.dataset}:{PurePosixPath(str(options['path'])).stem}"


def trace_identity(cfg: RunConfig) -> dict[str, Any]:
    """The columns every trace row carries besides fold, rep and iteration: what ran (algorithm,
    dataset, ε) and which job (seed, config hash), so that no two jobs' trace rows coincide."""
    return {
        "algorithm": cfg.algorithm,
        "dataset": dataset_label(cfg),
        "eps": cfg.privacy.eps,
        "seed": cfg.seed,
        "config_hash": cfg.config_hash,
    }


def empty_trace(cfg: RunConfig) -> pd.DataFrame:
    """The trace of a job that records none: no rows, the usual columns."""
    import pandas as pd

    return pd.DataFrame(columns=[*TRACE_COLUMNS, *trace_identity(cfg)])
