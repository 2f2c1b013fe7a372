"""``algorithm.fidelity=correct|paper|authors_code``. Every mode is declared with what it
changes; a mode that breaks the guarantee labels its rows and is never ranked; DP-AGD's
``authors_code`` follows the public code (ppmlguy/DP-AGD, algo/agd_rho.py) where it differs."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
import yaml

from dpbench.algorithms import dp_agd as dp_agd_module
from dpbench.algorithms.base import FIDELITIES, Tracer
from dpbench.algorithms.registry import ALGORITHMS, class_preset, make_algorithm
from dpbench.conf_files import config_dir
from dpbench.engine import run_job
from dpbench.errors import ConfigError
from dpbench.jobs.plan import make_plan
from dpbench.plot.leaderboard import cell_statistics
from dpbench.privacy.audit import epsilon_lower_bound
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.published import noisy_min_exponential_subtracted
from dpbench.problems import make_problem

JOB = ("algorithm=dp_agd", "dataset.n=2000", "dataset.seed=1", "reps=2", "progress=false")


@pytest.mark.parametrize("name", [n for n, cls in ALGORITHMS.items() if cls.fidelity_modes])
def test_every_mode_is_declared_with_its_changes_and_defaults_to_correct(name):
    cls = ALGORITHMS[name]
    assert set(cls.fidelity_modes) <= set(FIDELITIES) - {"correct"}
    for mode in cls.fidelity_modes.values():
        assert mode.changes and all(change.strip() for change in mode.changes)
    assert {f.name: f.default for f in dataclasses.fields(cls)}["fidelity"] == "correct"
    preset = config_dir() / "algorithm" / f"{name}.yaml"  # a plugin's method may have none: its class is its preset
    conf = yaml.safe_load(preset.read_text()) if preset.exists() else class_preset(cls)
    assert conf.get("algorithm", conf)["fidelity"] == "correct"  # a global-package file keeps its keys under algorithm
    with pytest.raises(ConfigError, match=f"algorithm {name}: fidelity must be one of correct, "):
        make_algorithm(name, {"fidelity": "approximately"})


def test_an_authors_code_run_labels_every_row_and_keeps_the_correct_hash(compose_run_config, tmp_path):
    correct = compose_run_config(*JOB)
    assert correct.config_hash == compose_run_config(*JOB).config_hash
    assert "fidelity" not in correct.semantic_dict()["algorithm_params"]  # the hashes of earlier jobs stay
    rows = run_job(make_plan(correct), tmp_path / "correct")
    assert (
        set(rows["fidelity"]) == {"correct"} and rows["guarantee_valid"].all() and set(rows["guarantee_note"]) == {""}
    )

    authors = compose_run_config(*JOB, "algorithm.fidelity=authors_code")
    assert authors.config_hash != correct.config_hash
    rows = run_job(make_plan(authors), tmp_path / "authors")
    assert set(rows["fidelity"]) == {"authors_code"} and not rows["guarantee_valid"].any()
    assert rows["guarantee_note"].str.startswith("fidelity=authors_code: the noisy min adds").all()
    assert (rows["eps_spent"] <= rows["eps"]).all()  # the ledger still holds every release to the budget


def test_the_leaderboard_never_ranks_a_non_correct_fidelity():
    rows = pd.DataFrame(
        [
            {
                "dataset": "x",
                "eps": 1.0,
                "algorithm": a,
                "test_accuracy": acc + 0.01 * r,
                "private": True,
                "neighbouring": "add_remove",
                "config_hash": a,
                "fidelity": fidelity,
                "guarantee_valid": True,
            }
            for a, acc, fidelity in (("a", 0.9, "correct"), ("b", 0.8, "correct"), ("c", 0.95, "paper"))
            for r in range(3)
        ]
    )
    ranks = cell_statistics(rows).set_index("algorithm")["rank"]
    assert ranks["a"] == 1.0 and ranks["b"] == 2.0 and math.isnan(ranks["c"])


def test_the_public_noisy_min_is_not_epsilon_dp():
    """k = 21 candidates with equal scores on D; on D′ candidate 0's score is lower by Δ (one record
    more, monotone). ε-DP would bound P′[pick 0]/P[pick 0] by e^ε = 2.72; the ratio is ≈ 13 (module
    docstring of dpbench.privacy.published). 20,000 draws per side, 99.9 % Clopper–Pearson bound."""
    rng = np.random.default_rng(7)
    n, k = 20_000, 21

    def picks_zero(scores) -> int:
        ledger = Ledger(epsilon=n * 1.0 + 1.0, delta=1e-5, accountant="pure")
        return sum(
            noisy_min_exponential_subtracted(scores, sensitivity=1.0, epsilon=1.0, rng=rng, ledger=ledger) == 0
            for _ in range(n)
        )

    on_d = picks_zero(np.zeros(k))
    on_d_prime = picks_zero(np.r_[-1.0, np.zeros(k - 1)])
    assert epsilon_lower_bound(on_d_prime, n, on_d, n, confidence=0.999) > 2.0


def test_authors_code_moves_to_the_candidate_before_the_chosen_one(monkeypatch):
    """With the selection forced to index 3, the first step is η₂ under authors_code and η₃ otherwise
    (candidate steps 0, 0.1, …, 2; w₀ = 0 and a unit direction, so ‖w₁‖ is the step)."""
    rng_x = np.random.default_rng(0)
    problem = make_problem(rng_x.normal(size=(200, 4)) / 4, np.sign(rng_x.normal(size=200)), loss="logistic", reg=0.0)
    monkeypatch.setattr(dp_agd_module, "report_noisy_max_screened", lambda *a, **k: 3)  # the logistic loss's
    monkeypatch.setattr(dp_agd_module, "noisy_min_exponential_subtracted", lambda *a, **k: 3)
    norms = {}
    for fidelity in ("correct", "authors_code"):
        ledger = Ledger(epsilon=1.0, delta=1e-8, accountant="zcdp")
        fitted = make_algorithm("dp_agd", {"fidelity": fidelity, "max_iterations": 1}).fit(
            problem, ledger, np.random.default_rng(1), Tracer(problem, ledger)
        )
        norms[fidelity] = float(np.linalg.norm(fitted.w))
    assert norms["correct"] == pytest.approx(0.3) and norms["authors_code"] == pytest.approx(0.2)


def test_fidelity_on_a_method_without_modes_names_the_methods_that_have_them(cli, tmp_path):
    result = cli(["algorithm=dp_blsgd", "algorithm.fidelity=authors_code"], tmp_path)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("dpbench: error: this algorithm has no fidelity modes; ")
    assert (
        "dp_agd (authors_code)" in line and "dp_nag_opt (paper|authors_code)" in line and "docs/deviations.md" in line
    )
    assert "choice(" not in line  # not a sweep: no hint about Hydra's first composition


def test_a_sweep_over_algorithms_takes_their_keys_written_as_a_choice(cli, tmp_path):
    """With -m Hydra composes the default algorithm (dp_blsgd) first, which has no ``fidelity``: the
    error says to write ``algorithm.fidelity=choice(…)``, and so written the sweep runs each algorithm's
    mode (a misspelt key is still refused, by the algorithm of the job)."""
    sweep = [
        "-m",
        "algorithm=dp_gd,dp_hb",
        "model=kuru_logreg",
        "reps=1",
        "cv.folds=1",
        "dataset.n=300",
        "progress=False",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    ]
    refused = cli([*sweep, "algorithm.fidelity=paper"], tmp_path)
    assert refused.returncode == 2
    assert (
        "written algorithm.fidelity=choice(…) (each job's algorithm still checks it)"
        in refused.stderr.strip().splitlines()[-1]
    )
    ran = cli([*sweep, "algorithm.fidelity=choice(paper)", "algorithm.iterations=choice(5)"], tmp_path)
    assert ran.returncode == 0, ran.stderr
    rows = pd.concat(pd.read_parquet(p) for p in (tmp_path / "sweep").glob("*/results.parquet"))
    assert sorted(rows["algorithm"]) == ["dp_gd", "dp_hb"] and set(rows["fidelity"]) == {"paper"}
    typo = cli([*sweep, "algorithm.iteratons=choice(5)"], tmp_path)
    assert typo.returncode == 2
    assert typo.stderr.strip().splitlines()[-1] == (
        "dpbench: error: algorithm.iteratons is not a key of the algorithm of a job of this sweep: a typo, or a key "
        "that algorithm lacks; `dpbench algorithm=<name> --cfg job` prints its keys"
    )


CONFIG_OF = {"dp_sgd": "dp_sgd_sigma4"}  # dp_sgd's authors_code mode needs the public code's fixed σ = 4


@pytest.mark.parametrize("name, mode", [(n, m) for n, cls in ALGORITHMS.items() for m in cls.fidelity_modes])
def test_every_mode_that_breaks_its_guarantee_says_so_in_its_rows_columns(compose_run_config, name, mode):
    """Every (method, mode): the run's configuration composes, and the guarantee columns its rows get
    (:func:`~dpbench.jobs.columns.guarantee_breaches`) name the mode's reason exactly when it declares one."""
    from dpbench.jobs.columns import guarantee_breaches

    declared = ALGORITHMS[name].fidelity_modes[mode]
    extra = ["data.row_norm=null"] if declared.rows_as_loaded else []
    cfg = compose_run_config(f"algorithm={CONFIG_OF.get(name, name)}", f"algorithm.fidelity={mode}", *extra)
    reasons = guarantee_breaches(cfg, make_plan(cfg).method, "public")
    assert (f"fidelity={mode}: {declared.breaks_guarantee}" in reasons) == bool(declared.breaks_guarantee), reasons
    assert bool(reasons) == bool(declared.breaks_guarantee or declared.trains_on_test_fold), reasons
