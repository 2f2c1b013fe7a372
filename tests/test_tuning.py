"""tuning=fixed | private | oracle (dpbench.tuning): what the rows say, what the ledger records, and
that a tuned run's ε recomputes with dp-accounting's repeat-and-select accounting."""

from __future__ import annotations

import json
import math

import dp_accounting
import dp_accounting.dp_event
import dp_accounting.rdp
import pandas as pd
import pytest

from dpbench.engine import run_job
from dpbench.errors import ConfigError
from dpbench.jobs.plan import make_plan
from dpbench.privacy.events import RenyiBoundEvent, RepeatAndSelectEvent
from dpbench.privacy.serialize import events_from_summary

EPS, DELTA = 1.0, 1e-6
TINY = (
    "dataset=synthetic_logreg",
    "dataset.n=1000",
    "dataset.d=5",
    "progress=false",
    f"privacy.eps={EPS}",
    f"privacy.delta={DELTA}",
)


def _job(compose_run_config, tmp_path, *overrides):
    """One job in ``tmp_path``; the jobs of one test share a secret noise key (in its parent), as the
    jobs of one sweep do."""
    cfg = compose_run_config(*TINY, *overrides)
    results = run_job(make_plan(cfg), tmp_path, key_dir=tmp_path.parent)
    return cfg, results, json.loads((tmp_path / "run.json").read_text())["ledgers"]


def dp_accounting_epsilon(event: RepeatAndSelectEvent, delta: float) -> float:
    """dp-accounting's ε of a recorded repeat-and-select over (α, ρ)-RDP trials: on the one order α a
    Gaussian of σ = √(α/(2ρ)) has exactly the trial's RDP."""
    ((trial, count),) = event.trial
    assert count == 1 and isinstance(trial, RenyiBoundEvent)
    accountant = dp_accounting.rdp.RdpAccountant(orders=[trial.order])
    gaussian = dp_accounting.GaussianDpEvent(math.sqrt(trial.order / (2.0 * trial.rdp)))
    accountant.compose(dp_accounting.dp_event.RepeatAndSelectDpEvent(gaussian, event.mean, event.shape))
    return accountant.get_epsilon(delta)


@pytest.mark.parametrize("algorithm", ["dp_sgd", "dp_agd", "dp_gd"])  # RDP, zCDP and pure-DP trials
def test_a_privately_tuned_run_recomputes_with_dp_accounting(compose_run_config, tmp_path, algorithm):
    cfg, results, ledgers = _job(compose_run_config, tmp_path, f"algorithm={algorithm}", "tuning=private", "reps=4")
    grid = cfg.tuning.grid
    assert grid and (results["tuning"] == "private").all()
    for (_, row), summary in zip(results.iterrows(), ledgers):
        ((event, count),) = events_from_summary(summary)
        assert count == 1 and isinstance(event, RepeatAndSelectEvent)
        assert (event.mean, event.shape) == (cfg.tuning.trials_mean, cfg.tuning.trials_shape)
        assert summary["orders"] == [event.trial[0][0].order]
        theirs = dp_accounting_epsilon(event, DELTA) + row["eps_count"]  # and the noisy n̄, paid first under add/remove
        assert row["eps_count"] == pytest.approx(0.05 * EPS, rel=1e-12) == summary["count"]["eps_spent"]
        assert row["eps_spent"] == pytest.approx(theirs, rel=1e-6) and row["eps_spent"] <= EPS
        assert row["eps_spent"] >= 0.999 * EPS  # the plan spends the budget it was given
        assert row["eps_count"] + row["eps_train"] + row["eps_tuning"] == pytest.approx(row["eps_spent"], rel=1e-12)
        assert 0 < row["eps_train"] < row["eps_spent"]
        chosen = json.loads(row["tuned_params"])
        assert set(chosen) == set(grid) and all(chosen[k] in grid[k] for k in grid)
        assert row["n_trials"] >= 1 and math.isfinite(row["tuning_score"])  # a noisy accuracy: may leave [0, 1]
        assert row["n_train"] < 1000 * 0.8 * 0.9  # the released trial trained without its held-out part
        assert row["guarantee_valid"] and row["stopping_rule"].startswith("repeat_and_select(alpha=")


def test_rows_of_every_mode_say_how_the_parameters_were_chosen(compose_run_config, tmp_path):
    _, fixed, _ = _job(compose_run_config, tmp_path / "fixed", "algorithm=dp_sgd")
    assert fixed[["tuning", "eps_tuning", "n_trials", "tuned_params"]].iloc[0].tolist() == ["fixed", 0.0, 1, "{}"]
    assert (fixed["eps_count"] + fixed["eps_train"] == fixed["eps_spent"]).all()
    _, nothing, _ = _job(compose_run_config, tmp_path / "nothing", "algorithm=nonprivate", "tuning=private")
    assert nothing[["tuning", "n_trials", "tuned_params"]].iloc[0].tolist() == ["private", 1, "{}"]


def test_the_oracle_is_the_best_grid_point_on_the_test_fold_and_says_it_is_not_private(compose_run_config, tmp_path):
    cfg, oracle, _ = _job(compose_run_config, tmp_path / "oracle", "algorithm=outpert_gd", "tuning=oracle")
    points = cfg.tuning.grid["iterations"]
    row = oracle.iloc[0]
    assert row["tuning"] == "oracle" and not row["guarantee_valid"] and row["eps_tuning"] == math.inf
    assert row["n_trials"] == len(points) and row["eps_spent"] <= EPS
    accuracies = {}
    for value in points:
        _, fixed, _ = _job(
            compose_run_config, tmp_path / str(value), "algorithm=outpert_gd", f"algorithm.iterations={value}"
        )
        accuracies[value] = fixed["test_accuracy"].iloc[0]
    assert row["test_accuracy"] == max(accuracies.values())
    assert accuracies[json.loads(row["tuned_params"])["iterations"]] == row["test_accuracy"]


def test_a_tuned_job_reruns_bit_for_bit(compose_run_config, tmp_path):
    _, first, _ = _job(compose_run_config, tmp_path / "a", "algorithm=dp_sgd", "tuning=private", "reps=2")
    _, second, _ = _job(compose_run_config, tmp_path / "b", "algorithm=dp_sgd", "tuning=private", "reps=2")
    columns = [c for c in first.columns if c != "wall_time_s"]
    pd.testing.assert_frame_equal(first[columns], second[columns])


def test_fixed_tuning_keeps_the_config_hashes_of_older_jobs(compose_run_config):
    fixed = compose_run_config(*TINY, "algorithm=dp_sgd")
    assert "tuning" not in fixed.semantic_dict()
    private = compose_run_config(*TINY, "algorithm=dp_sgd", "tuning=private")
    assert private.config_hash != fixed.config_hash and private.semantic_dict()["tuning"]["grid"] == private.tuning.grid


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (("algorithm=objpert", "tuning=private", "+algorithm.tuning_grid.tol=[1e-10,1e-8]"), "no Rényi curve"),
        (("algorithm=dp_sgd", "tuning=private", "privacy.neighbouring=replace_one"), "natively"),
        (("algorithm=dp_sgd", "+tuning.trials=3"), r"tuning\.trials is not a tuning setting"),
        (("algorithm=dp_sgd", "tuning=private", "tuning.trials_mean=0.5"), "trials_mean must be"),
        (("algorithm=dp_sgd", "tuning=private", "tuning.validation_fraction=1"), "validation_fraction must be"),
        (("algorithm=dp_sgd", "+algorithm.tuning_grid.momentum=[0.9]"), "momentum is not a hyper-parameter"),
        (("algorithm=dp_sgd", "algorithm.tuning_grid.epochs=[-1]"), r"tuning_grid\.epochs"),
        (("algorithm=dp_sgd", "algorithm.tuning_grid.epochs=[]"), "non-empty lists"),
    ],
)
def test_tuning_that_cannot_run_is_refused_in_one_line(compose_run_config, overrides, message):
    with pytest.raises(ConfigError, match=message):
        compose_run_config(*TINY, *overrides)


def test_private_tuning_is_for_the_linear_model_methods(compose_run_config):
    with pytest.raises(ConfigError, match="linear-model methods"):
        compose_run_config(
            "dataset=synthetic_pwa",
            "model=pwa",
            "algorithm=pwa_laplace_data",
            "tuning=private",
            "privacy.neighbouring=native",
        )


def test_an_oracle_row_names_the_stopping_rule_of_the_grid_point_it_chose(compose_run_config, tmp_path):
    """dp_blsgd's Rényi filter order is fixed from its own setting (α = 32 at the configured
    expected_iterations = 100, 512 at 20 or 50 on ε = 0.95 after the count); an oracle row's
    ``stopping_rule`` is the chosen point's — the ledger's one order — not the configured point's."""
    cfg, oracle, ledgers = _job(
        compose_run_config,
        tmp_path,
        "algorithm=dp_blsgd",
        "tuning=oracle",
        "reps=3",
        "algorithm.expected_iterations=100",
        "privacy.noise_key=seed",
    )
    configured = make_plan(cfg).identity["stopping_rule"]
    for (_, row), summary in zip(oracle.iterrows(), ledgers):
        assert row["stopping_rule"] == f"renyi_filter(alpha={summary['orders'][0]:g})", (
            row["tuned_params"],
            summary["orders"],
        )
    assert (oracle["stopping_rule"] != configured).any()  # on this seed the oracle chose another order
