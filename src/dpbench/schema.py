"""What every column of ``results.parquet`` and ``trace.parquet`` is, privacy-wise.

A run writes private releases next to non-private measurements taken for the figures. Each column
is classified, the class is stored in the parquet schema (field metadata ``dpbench.class``) and
listed on docs/schema.md (generated: ``python -m dpbench.schema > docs/schema.md``):

* ``public`` — fixed before any private data is read: configuration, identity, provenance and the
  mechanisms' public parameters (computed from public values only);
* ``release`` — a differentially private output of the run, or a function of its private transcript
  (every noisy release and what the method decided from them) and public values: covered by the
  run's (ε, δ), safe to publish;
* ``measurement`` — computed from private data outside the privacy analysis (objective values,
  test-fold accuracy, non-private optima, timings): for evaluating the benchmark only, never to be
  published as a private output.

Writing a column that is not classified here is an error (:func:`column_classes`), so a new column
cannot slip into the files unclassified. A name ending in ``*`` classifies every column with that prefix
(``p_*``: one column per hyper-parameter of the method).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping

PUBLIC, RELEASE, MEASUREMENT = "public", "release", "measurement"
CLASSES = (PUBLIC, RELEASE, MEASUREMENT)

_ID = "identity of the run (configuration)"

RESULTS: Mapping[str, tuple[str, str]] = {
    # identity and configuration
    "paper": (PUBLIC, "paper key of the method"),
    "algorithm": (PUBLIC, "method name (algorithm=…)"),
    "dataset": (PUBLIC, "dataset name"),
    "model": (PUBLIC, "model config name"),
    "loss": (PUBLIC, "loss function"),
    "eps": (PUBLIC, "privacy budget ε"),
    "delta": (PUBLIC, "privacy budget δ"),
    "private": (PUBLIC, "False for the non-private references (nonprivate, majority, …)"),
    "accountant": (PUBLIC, "accountant pricing the releases: rdp, zcdp, pure, approx, none"),
    "conversion": (PUBLIC, "RDP → (ε, δ) conversion the ledger used"),
    "sampler": (PUBLIC, "noise sampler: numpy or secure (privacy.sampler)"),
    "noise_key": (
        PUBLIC,
        (
            "where the noise's randomness came from: secret (the sweep's secret key, never published) or "
            "seed (replayable from the public seed: not publishable; privacy.noise_key); none for non-private methods"
        ),
    ),
    "stopping_rule": (
        PUBLIC,
        "what makes eps_spent a guarantee: fixed_composition or a filter (dpbench.privacy.filter)",
    ),
    "neighbouring": (
        PUBLIC,
        "the neighbouring relation the (ε, δ) holds for: add_remove, replace_one or none (privacy.neighbouring)",
    ),
    "privacy_unit": (PUBLIC, "what one neighbouring step changes (record, node_sample, validation_row, offset_vector)"),
    "relation_conversion": (
        PUBLIC,
        "how the method meets the relation: native, or group_privacy (run at ε/2 under add/remove)",
    ),
    "dp_notion": (PUBLIC, "what the ledger composes in before converting to (ε, δ): pure, approx, rdp, zcdp"),
    "fold": (PUBLIC, _ID),
    "rep": (PUBLIC, _ID),
    "seed": (PUBLIC, _ID),
    "folds": (PUBLIC, _ID),
    "experiment": (PUBLIC, "preset name"),
    "variant": (PUBLIC, "preset variant"),
    "params": (PUBLIC, "the method's hyper-parameters (JSON)"),
    "p_*": (PUBLIC, "one hyper-parameter of the method: p_<name> = params[name] (lists and dicts as JSON)"),
    "scaling": (PUBLIC, "feature scaling: public (declared ranges), whole_file (outside the guarantee) or none"),
    "fidelity": (
        PUBLIC,
        "how faithfully the method follows what was published: correct (dpbench's, the default), paper (as printed) or authors_code (the authors' public code); algorithm.fidelity",
    ),
    "guarantee_note": (PUBLIC, "why guarantee_valid is False, one reason per cause ('' when it is True)"),
    "guarantee_kind": (
        PUBLIC,
        "what the (ε, δ) is: proven (the method's proof covers the run), conditional (it rests on an assumption no run can check: kusner_bo Alg. 1–2's Assumption 1, han_pwa's unmixed Metropolis chain), not_covered (see guarantee_note) or none (non-private reference)",
    ),
    "guarantee_valid": (
        PUBLIC,
        "True for a proven guarantee (and the non-private references). False when something the guarantee does not cover prepared the data (whole_file scaling, or declared ranges without a public source: ipums_br), chose the hyper-parameters (tuning=oracle), ran the method (a fidelity mode that breaks its guarantee) or read the training size unpaid under add/remove (privacy.count_share=0), or when the guarantee is conditional",
    ),
    "tuning": (
        PUBLIC,
        "how the hyper-parameters were chosen: fixed, private (repeat-and-select, paid) or oracle (test fold, not private)",
    ),
    "dataset_checksum": (PUBLIC, "sha256 over the dataset's published source files and options"),
    "config_hash": (PUBLIC, _ID),
    "dpbench_version": (PUBLIC, _ID),
    "code_identity": (
        PUBLIC,
        (
            "the code that computed the row: version + hash of dpbench's source, and of a plugin method's package (dpbench.code_identity); "
            "another identity than the installed one makes the job stale (resume=strict reruns it)"
        ),
    ),
    "dim": (PUBLIC, "model dimension (the encoding's, with bias)"),
    # the private output
    "eps_spent": (
        RELEASE,
        "ε the run spent: the method's ledger (depends on the noisy path for adaptive methods) plus eps_count",
    ),
    "eps_count": (
        RELEASE,
        "ε paid for the noisy training size n_public (privacy.count_share·ε under add/remove; 0 when nothing is paid)",
    ),
    "n_public": (
        RELEASE,
        (
            "n̄ the method used: a Laplace count ñ paid by eps_count under add/remove, else the fold's training "
            "size (public under replace-one; outside the guarantee under add/remove with privacy.count_share=0)"
        ),
    ),
    "delta_spent": (RELEASE, "δ the ledger spent"),
    "eps_train": (RELEASE, "ε the released model's training spent (tuning=private: one trial's, at the run's δ)"),
    "eps_tuning": (
        RELEASE,
        "eps_spent − eps_count − eps_train: what choosing the hyper-parameters cost (inf: tuning=oracle, not private)",
    ),
    "tuned_params": (RELEASE, "the hyper-parameters of the released trial (JSON; {} when nothing was tuned)"),
    "tuning_score": (RELEASE, "the released trial's noisy validation accuracy (tuning=private)"),
    "n_iterations": (RELEASE, "iterations run (decided from noisy releases for adaptive methods)"),
    "grad_evals": (
        MEASUREMENT,
        (
            "gradient evaluations: per-record work, Σ|B_t| over DP-SGD's secret Poisson batches and "
            "T·n for full batches (a count of the data under add/remove; never paid for)"
        ),
    ),
    "obj_evals": (
        MEASUREMENT,
        "objective evaluations, per record (as grad_evals: follows the batches and n, never paid for)",
    ),
    # measurements for evaluation
    "test_accuracy": (MEASUREMENT, "accuracy of the released model on the test fold"),
    "train_objective": (MEASUREMENT, "exact training objective of the released model"),
    "test_objective": (MEASUREMENT, "objective of the released model on the test fold"),
    "suboptimality": (MEASUREMENT, "train_objective − fstar"),
    "fstar": (MEASUREMENT, "non-private optimum of the training objective"),
    "wall_time_s": (MEASUREMENT, "seconds in the method (a timing side channel)"),
    "n_train": (
        MEASUREMENT,
        "training rows (public under replace-one; a count of the data under add/remove, released only as n_public)",
    ),
    "n_test": (MEASUREMENT, "test rows"),
    "n_trials": (
        MEASUREMENT,
        "trials run (tuning=private: K, which repeat-and-select keeps hidden; oracle: the grid's size)",
    ),
    # han_pwa
    "pwa_m": (PUBLIC, "han_pwa pieces m"),
    "pwa_d": (PUBLIC, "han_pwa dimension d"),
    "pwa_c": (PUBLIC, "han_pwa box size c"),
    "pwa_b_max": (PUBLIC, "han_pwa offset bound b_max"),
    "exact_sampler": (PUBLIC, "whether the exponential mechanism is sampled exactly or by MCMC"),
    "inside_box": (RELEASE, "whether the released point lies in the box"),
    # kusner_bo
    "target": (PUBLIC, "tuned model (bo.target)"),
    "n_candidates": (PUBLIC, "|Λ|"),
    "iterations": (PUBLIC, "GP-UCB rounds T"),
    "validation_size": (PUBLIC, "|V|"),
    "guarantee": (PUBLIC, "the assumption the (ε, δ) rests on"),
    "eps_release": (PUBLIC, "ε of each release"),
    "delta_release": (PUBLIC, "δ of each release"),
    "lambda_sensitivity": (PUBLIC, "sensitivity of λ̃'s utility (from public values)"),
    "value_sensitivity": (PUBLIC, "sensitivity of ṽ (from public values)"),
    "laplace_scale": (PUBLIC, "Laplace scale of ṽ"),
    "gamma_t": (PUBLIC, "information-gain bound γ_T over Λ"),
    "c": (PUBLIC, "the c of Thm 1"),
    "lambda_min": (PUBLIC, "smallest λ of Λ"),
    "lambda_max": (PUBLIC, "largest λ of Λ"),
    "released_index": (RELEASE, "index of λ̃ in Λ"),
    "released_hyperparameters": (RELEASE, "λ̃"),
    "value_released": (RELEASE, "ṽ, the noisy best validation value"),
    "value_best_observed": (MEASUREMENT, "v*, the non-private best validation value"),
    "value_error": (MEASUREMENT, "|ṽ − v*|"),
    "gain": (MEASUREMENT, "validation gain used by the study"),
    "gain_released": (MEASUREMENT, "non-private gain of λ̃ on V"),
    "gain_best_observed": (MEASUREMENT, "non-private gain of λ̂ on V"),
    "gain_best": (MEASUREMENT, "best gain on V over Λ"),
    "test_accuracy_best_observed": (MEASUREMENT, "test accuracy of λ̂"),
    "test_accuracy_best": (MEASUREMENT, "best test accuracy over Λ"),
    "n_sets": (PUBLIC, "validation sets per repetition (Fig. 1 study)"),
    "k1": (PUBLIC, "k₁ value studied"),
    "n_added": (MEASUREMENT, "neighbours made by adding a row"),
    "log_likelihood": (MEASUREMENT, "multi-task GP log likelihood (non-private study)"),
    "max_abs_gain_change": (MEASUREMENT, "largest gain change between neighbours (non-private study)"),
    "mean_abs_gain_change": (MEASUREMENT, "mean gain change between neighbours (non-private study)"),
    "gain_std_across_candidates": (MEASUREMENT, "spread of gains over Λ (non-private study)"),
}

TRACE: Mapping[str, tuple[str, str]] = {
    "fold": (PUBLIC, _ID),
    "rep": (PUBLIC, _ID),
    "algorithm": (PUBLIC, _ID),
    "dataset": (PUBLIC, _ID),
    "eps": (PUBLIC, _ID),
    "seed": (PUBLIC, _ID),
    "config_hash": (PUBLIC, _ID),
    "iteration": (RELEASE, "iteration index on the released path"),
    "train_objective": (MEASUREMENT, "exact training objective of the iterate"),
    "test_accuracy": (MEASUREMENT, "test-fold accuracy of the iterate"),
    "step_size": (RELEASE, "step taken (chosen by a noisy line search, or a public schedule)"),
    "eps_spent": (RELEASE, "ε spent so far"),
    "eps_hat": (RELEASE, "liu_dda: ε spent so far (Remark 3.1)"),
    "grad_evals": (MEASUREMENT, "gradient evaluations so far (per record: follows the secret batches and n)"),
    "obj_evals": (MEASUREMENT, "objective evaluations so far (per record: follows the secret batches and n)"),
    "rho_grad": (RELEASE, "current gradient budget ρ (adapted from noisy outputs)"),
    "bt_budget": (RELEASE, "current line-search budget (adapted from noisy outputs)"),
    "candidates": (RELEASE, "line-search candidates examined (AboveThreshold's stop)"),
    "line_searches": (RELEASE, "line searches this iteration"),
    "rho_raises": (RELEASE, "CHEB budget raises"),
    "clip_grad": (RELEASE, "current gradient clip (adapted from noisy outputs)"),
    "clip_obj": (RELEASE, "current objective clip (adapted from noisy outputs)"),
    "theta_bar": (RELEASE, "CHEB's running angle between noisy gradients"),
    "max_step": (RELEASE, "DP-AGD's step-size grid bound"),
    "epoch": (PUBLIC, "liu_dda epochs"),
    "iota": (PUBLIC, "liu_dda node-sampling rate ι"),
    "sigma": (PUBLIC, "liu_dda noise σ"),
    "delta0": (PUBLIC, "liu_dda per-step δ₀"),
    "noise_scale": (PUBLIC, "kuru noise scale schedule"),
    "stage": (PUBLIC, "kuru stage"),
    "sensitivity": (PUBLIC, "PrivGene's per-round sensitivity"),
    "eps_selection": (PUBLIC, "PrivGene's per-round ε"),
    "candidate": (MEASUREMENT, "kusner_bo: GP-UCB's (non-private) choice"),
    "value": (MEASUREMENT, "kusner_bo: the candidate's non-private validation value"),
    "best_so_far": (MEASUREMENT, "kusner_bo: best non-private value so far"),
}

TABLES: Mapping[str, Mapping[str, tuple[str, str]]] = {"results": RESULTS, "trace": TRACE}


class UnclassifiedColumn(ValueError):
    """A column is about to be written that :mod:`dpbench.schema` does not classify."""


def _entry(registry: Mapping[str, tuple[str, str]], column: str) -> tuple[str, str] | None:
    """The registry's (class, meaning) of ``column``: its own entry, else that of a ``prefix*`` name it starts with."""
    if column in registry:
        return registry[column]
    return next(
        (entry for name, entry in registry.items() if name.endswith("*") and column.startswith(name[:-1])), None
    )


def column_class(table: str, column: str) -> str | None:
    """The class of one ``results`` or ``trace`` column, None when the registry does not know it."""
    entry = _entry(TABLES[table], column)
    return entry[0] if entry else None


def column_classes(table: str, columns: Iterable[str]) -> dict[str, str]:
    """``{column: class}`` for the columns of a ``results`` or ``trace`` table; raises
    :class:`UnclassifiedColumn` naming every column the registry does not know."""
    registry = TABLES[table]
    entries = {c: _entry(registry, c) for c in columns}
    unknown = [c for c, entry in entries.items() if entry is None]
    if unknown:
        raise UnclassifiedColumn(
            f"{table} column(s) {', '.join(unknown)} not classified as public/release/measurement in dpbench/schema.py"
        )
    return {c: entry[0] for c, entry in entries.items()}


def markdown() -> str:
    """docs/schema.md: every column of both tables with its class and meaning."""
    lines = [
        "# Results schema",
        "",
        "Generated by `python -m dpbench.schema > docs/schema.md`; the class of each column is also stored in the",
        "parquet files (field metadata `dpbench.class`). Classes: **public** — fixed before any private data is",
        "read; **release** — a differentially private output or a function of the run's private transcript, covered",
        "by its (ε, δ); **measurement** — computed from private data outside the privacy analysis, for evaluation",
        "only, never to be published as a private output.",
    ]
    for table, registry in TABLES.items():
        lines += ["", f"## {table}.parquet", "", "| column | class | meaning |", "|---|---|---|"]
        lines += [f"| `{name}` | {cls} | {meaning} |" for name, (cls, meaning) in sorted(registry.items())]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown())
