"""han_pwa through the engine: configs, vectorised jobs, budgets, resumption, figures and summaries."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpbench.engine import run_job
from dpbench.errors import ConfigError, DataError, PrivacyViolation
from dpbench.jobs.plan import RunPlan, make_plan
from dpbench.plot import han
from dpbench.pwa import make_problem
from dpbench.pwa.algorithms import PWALaplaceData
from dpbench.pwa.mechanisms import laplace_data

pytestmark = pytest.mark.xdist_group("pwa.test_pwa_job")  # its module-scoped fixture is made once, on one worker

PWA = (
    "dataset=synthetic_pwa",
    "model=pwa",
    "progress=false",
    "dataset.m=8",
    "dataset.d=3",
    "privacy.neighbouring=replace_one",
)
ALGORITHMS = (
    "pwa_laplace_data",
    "pwa_laplace_solution",
    "pwa_laplace_solution_paper",
    "pwa_exponential",
    "pwa_subgradient",
    "pwa_subgradient_paper",
    "pwa_subgradient_nonprivate",
)


def _cfg(compose_run_config, *overrides):
    short_chains = ("algorithm.n_steps=200",) if "algorithm=pwa_exponential" in overrides else ()
    return compose_run_config(*PWA, *overrides, *short_chains)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_every_mechanism_runs_as_a_job_within_budget(compose_run_config, tmp_path, algorithm):
    cfg = _cfg(compose_run_config, f"algorithm={algorithm}", "reps=7", "privacy.eps=0.5", "privacy.delta=1e-6")
    df = run_job(make_plan(cfg), tmp_path)
    problem = make_problem(8, d=3)
    _, fstar = problem.solve()
    assert len(df) == 7 and list(df["rep"]) == list(range(7))
    np.testing.assert_allclose(df["fstar"], fstar, rtol=1e-12)
    np.testing.assert_allclose(df["suboptimality"], df["train_objective"] - fstar, rtol=1e-12)
    assert (df.loc[df["inside_box"], "suboptimality"] >= -1e-7).all()  # f ≥ f* on P
    assert df["test_accuracy"].isna().all() and (df["pwa_m"] == 8).all() and (df["pwa_d"] == 3).all()
    meta = json.loads((tmp_path / "run.json").read_text())
    assert meta["dataset"]["checksum"] == df["dataset_checksum"].iloc[0]
    if algorithm == "pwa_subgradient_nonprivate":
        assert np.isinf(df["eps_spent"]).all() and df["guarantee"].str.startswith("none").all()
        return
    assert (df["eps_spent"] <= 0.5).all() and (df["eps_spent"] > 0.5 * (1 - 1e-9)).all()
    if algorithm == "pwa_exponential":  # MCMC: (ε, δ) by assumption, said in the row and the ledger
        assert (df["delta_spent"] == 1e-6).all() and not df["exact_sampler"].any()
        assert df["guarantee"].str.contains("assuming the MCMC chain has mixed").all()
        assert meta["ledgers"][0]["accountant"] == "approx"
    else:
        assert (df["delta_spent"] == 0).all() and df["exact_sampler"].all() and (df["guarantee"] == "eps-DP").all()


def test_runs_are_blocks_of_one_vectorised_call_each_with_its_own_ledger(compose_run_config, tmp_path, monkeypatch):
    calls = []
    original = PWALaplaceData.release

    def spy(self, problem, *, epsilon, runs, rng, ledger):
        calls.append((runs, ledger))
        return original(self, problem, epsilon=epsilon, runs=runs, rng=rng, ledger=ledger)

    monkeypatch.setattr(PWALaplaceData, "release", spy)
    df = run_job(make_plan(_cfg(compose_run_config, "algorithm=pwa_laplace_data", "reps=250")), tmp_path)
    assert [runs for runs, _ in calls] == [100, 100, 50]
    assert len({id(ledger) for _, ledger in calls}) == 3  # a fresh per-run ledger per block
    assert all(len(ledger.entries) == 1 for _, ledger in calls)
    assert len(df) == 250 and df["rep"].is_unique
    meta = json.loads((tmp_path / "run.json").read_text())
    assert [b["runs"] for b in meta["ledgers"]] == [100, 100, 50]


def test_same_seed_same_numbers_and_finished_jobs_are_skipped(compose_run_config, tmp_path):
    cfg = _cfg(compose_run_config, "algorithm=pwa_subgradient", "reps=120")
    a = run_job(make_plan(cfg), tmp_path / "a", key_dir=tmp_path)  # one sweep: one secret noise key
    b = run_job(make_plan(cfg), tmp_path / "b", key_dir=tmp_path)
    pd.testing.assert_series_equal(a["train_objective"], b["train_objective"])
    other = run_job(
        make_plan(_cfg(compose_run_config, "algorithm=pwa_subgradient", "reps=120", "seed=1")),
        tmp_path / "c",
        key_dir=tmp_path,
    )
    assert not np.allclose(a["train_objective"], other["train_objective"])
    other_key = run_job(make_plan(cfg), tmp_path / "d")
    assert not np.allclose(a["train_objective"], other_key["train_objective"])
    stamp = (tmp_path / "a" / "results.parquet").stat().st_mtime_ns
    run_job(make_plan(cfg), tmp_path / "a", key_dir=tmp_path)
    assert (tmp_path / "a" / "results.parquet").stat().st_mtime_ns == stamp


def test_an_overspending_mechanism_is_a_privacy_violation(compose_run_config, tmp_path, monkeypatch):
    from dpbench.privacy.ledger import Ledger

    def overspend(self, problem, *, epsilon, runs, rng, ledger):
        return laplace_data(problem, epsilon=2 * epsilon, runs=runs, rng=rng, ledger=ledger)

    monkeypatch.setattr(PWALaplaceData, "release", overspend)
    monkeypatch.setattr(  # a ledger ten times too generous: the job's own check must catch the overspend
        RunPlan,
        "ledger",
        lambda plan, method=None: (Ledger(10 * plan.run.privacy.eps, plan.run.privacy.delta, "pure"), float),
    )
    with pytest.raises(PrivacyViolation, match=r"spent \(ε, δ\) = \(0\.6"):
        run_job(make_plan(_cfg(compose_run_config, "algorithm=pwa_laplace_data", "privacy.eps=0.3")), tmp_path)
    assert not (tmp_path / "results.parquet").exists()


@pytest.mark.parametrize(
    "overrides, message",
    [
        (
            ("algorithm=pwa_subgradient", "dataset=synthetic_logreg", "model=logreg"),
            r"dataset=synthetic_logreg and model=logreg do not fit algorithm=pwa_subgradient, which needs han_pwa's dataset=synthetic_pwa model=pwa",
        ),
        (
            ("dataset=synthetic_pwa",),
            r"dataset=synthetic_pwa does not fit algorithm=dp_blsgd, which needs a linear-model dataset",
        ),
        (("dataset=synthetic_pwa", "model=pwa"), r"dataset=synthetic_pwa and model=pwa do not fit algorithm=dp_blsgd"),
        (("algorithm=dp_sgd", "model=pwa"), r"model=pwa does not fit algorithm=dp_sgd"),
    ],
)
def test_mismatched_problem_kinds_are_refused(compose_run_config, overrides, message):
    with pytest.raises(ConfigError, match=message):
        compose_run_config(*overrides)


@pytest.mark.parametrize(
    "override, error, message",
    [
        ("dataset.m=0", DataError, r"option 'm' must be an integer >= 1, got 0"),
        ("dataset.c=-1", DataError, r"option 'c' must be a positive number, got -1"),
        ("+dataset.n=5", DataError, r"has no option 'n'"),
        ("algorithm.fidelity=authors_code", ConfigError, r"fidelity must be one of correct, paper, got 'authors_code'"),
        ("algorithm.iterations=0", ConfigError, r"iterations must be an integer ≥ 1, got 0"),
        ("algorithm.project=1", ConfigError, r"project must be true or false, got 1"),
        ("model.reg=0.1", ConfigError, r"takes no parameters and reg = 0"),
    ],
)
def test_bad_pwa_values_are_named(compose_run_config, override, error, message):
    with pytest.raises(error, match=message):
        compose_run_config(*PWA, "algorithm=pwa_subgradient", override)


# ----------------------------------------------------------------------------------- figures
@pytest.fixture(scope="module")
def sweeps(tmp_path_factory):
    """Small han_fig1/han_fig2-like sweeps run through the engine (few runs, short chains)."""
    from hydra import compose, initialize_config_dir

    from dpbench.conf_files import config_dir
    from dpbench.resolve import run_config
    from dpbench.resolvers import register_resolvers

    register_resolvers()
    root = tmp_path_factory.mktemp("han")
    with initialize_config_dir(str(config_dir()), version_base="1.3"):

        def run(name, *overrides):
            cfg = compose("config", overrides=[*PWA, "reps=30", "privacy.eps=0.1", *overrides])
            run_job(make_plan(run_config(cfg)), root / name / "_".join(overrides))

        for algorithm in ("pwa_subgradient_paper", "pwa_subgradient", "pwa_subgradient_nonprivate"):
            for k in (1, 10, 50):
                for scale in (1.0, 0.1):
                    run("fig1", f"algorithm={algorithm}", f"algorithm.iterations={k}", f"algorithm.step_scale={scale}")
        for algorithm in (
            "pwa_laplace_data",
            "pwa_laplace_solution_paper",
            "pwa_exponential",
            "pwa_subgradient_paper",
            "pwa_subgradient",
            "pwa_subgradient_small_step",
        ):
            for c in (0.1, 1.0):
                extra = ("algorithm.n_steps=300",) if algorithm == "pwa_exponential" else ()
                run("fig2", f"algorithm={algorithm}", f"dataset.c={c}", *extra)
    return root


def test_figure_1_and_its_summary(sweeps):
    from dpbench.plot.io import load_results

    df = load_results([sweeps / "fig1"])
    figure = han.fig1(df)
    assert len(figure.axes) == 2
    text = han.summary(df)
    assert "# han_pwa Fig. 1" in text and "### step α = 0.1·R/(G√k)" in text
    assert "the regular subgradient method's objective decreases as k grows: " in text
    stats = han.point_stats(df, "k")
    assert set(stats["runs"]) == {30} and set(stats["x"]) == {1, 10, 50}


def test_figure_2_summary_computes_the_claim_from_the_numbers(sweeps):
    from dpbench.plot.io import load_results

    df = load_results([sweeps / "fig2"])
    assert len(han.fig2(df).axes) == 1
    stats = han.point_stats(df, "c")
    _claim, verdict, lines = han._lowest_claim(stats, "c")
    winners = stats[stats["method"].isin(han.MECHANISMS)].sort_values("subopt").groupby("x")["method"].first()
    assert verdict == ("HOLDS" if (winners == "subgradient").all() else "FAILS")
    assert len(lines) == 2
    # the verdict follows the numbers: make the Laplace-on-data mechanism perfect and the claim fails
    rigged = stats.copy()
    rigged.loc[rigged["method"] == "laplace_data", "subopt"] = -1.0
    assert han._lowest_claim(rigged, "c")[1] == "FAILS"
    rigged.loc[rigged["method"] == "laplace_data", "subopt"] = 1e9
    rigged.loc[rigged["method"] == "subgradient", "subopt"] = -1.0
    assert han._lowest_claim(rigged, "c")[1] == "HOLDS"
    text = han.summary(df)
    assert "as c grows, the private subgradient method's suboptimality grows slowest" in text
    assert "— as private subgradient (Alg. 2; Alg. 1 sign flipped) (for information)" in text
    # the small-step variant is a curve and a claim of its own, never merged with the default step
    assert "— as private subgradient (Alg. 2; Alg. 1 as printed), step × 0.01 (for information)" in text
    assert set(stats["method"]) == {*han.MECHANISMS, "subgradient_active", "subgradient@0.01"}


def test_figures_refuse_mixed_sweeps(sweeps):
    from dpbench.errors import DpbenchError
    from dpbench.plot.io import load_results

    df = load_results([sweeps / "fig1", sweeps / "fig2"])
    with pytest.raises(DpbenchError, match="vary c as well as k"):
        han.fig1(df)
