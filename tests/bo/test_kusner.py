"""kusner_bo Algorithms 1–3 and the Fig. 1 study: sensitivities by hand, the exponential mechanism
over Λ, a statistical audit of the ṽ release, the ledger, config refusals and jobs end to end."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import chisquare

from dpbench.bo.algorithms import BOProblem, KusnerAlg1, KusnerAlg2, KusnerAlg3
from dpbench.bo.gp import beta, gp_ucb, kernel_matrix, max_information_gain_bound
from dpbench.bo.sensitivity import (
    alg1_value_sensitivity,
    alg2_value_sensitivity,
    alg3_value_sensitivity,
    hyperparameter_sensitivity,
)
from dpbench.engine import run_job
from dpbench.errors import ConfigError, PrivacyViolation
from dpbench.jobs.plan import RunPlan, make_plan
from dpbench.privacy.audit import epsilon_lower_bound
from dpbench.privacy.events import ApproxDPEvent, LaplaceEvent
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.mechanisms import exponential_mechanism_probabilities

# ------------------------------------------------------------------ sensitivities by hand
# T = 30, |Λ| = 100, δ = 1e-5, k1 = 0.95, σ² = 0.0025, γ_T = 12.
T, N, DELTA, K1, NOISE, GAMMA = 30, 100, 1e-5, 0.95, 0.0025, 12.0


def test_beta_and_the_exponential_mechanism_sensitivity_by_hand():
    # β_31 = 2 log(100 · 961 · π² / 3e-5) = 2 · 24.17692 ; c = 2√(0.05 · log(3e7)) = 2√(0.05 · 17.21671)
    beta_31 = 2 * math.log(100 * 31**2 * math.pi**2 / (3 * 1e-5))
    assert beta(31, N, DELTA) == pytest.approx(beta_31, rel=1e-14)
    assert beta_31 == pytest.approx(48.353835, abs=1e-6)
    c = 2 * math.sqrt(0.05 * math.log(3e7))
    assert c == pytest.approx(1.855624, abs=1e-6)
    assert hyperparameter_sensitivity(T, N, DELTA, K1) == pytest.approx(2 * math.sqrt(beta_31) + c, rel=1e-14)
    assert hyperparameter_sensitivity(T, N, DELTA, K1) == pytest.approx(15.763009, abs=1e-6)


def test_algorithm_1_laplace_scale_by_hand():
    c1 = 8 / math.log(1 + 1 / 0.0025)  # = 8 / log 401 = 1.33437...
    beta_30 = 2 * math.log(100 * 900 * math.pi**2 / 3e-5)
    c = 2 * math.sqrt(0.05 * math.log(3e7))
    q = 0.05 * math.sqrt(4 * math.log(3e5))  # σ √(4 log(3/δ))
    expected = math.sqrt(c1 * beta_30 * GAMMA) / math.sqrt(T) + c + q
    assert c1 == pytest.approx(1.334677, abs=1e-6) and q == pytest.approx(0.355127, abs=1e-6)
    assert alg1_value_sensitivity(T, N, DELTA, K1, NOISE, GAMMA) == pytest.approx(expected, rel=1e-14)
    assert expected == pytest.approx(7.284672, abs=1e-6)  # Laplace scale at ε = 1: 7.3 on a gain in [0, 1]


def test_algorithm_2_and_3_laplace_scales_by_hand():
    # Alg. 2: A e^{−2τ/(log 2)^{d/4}} + 2√((1 − k1) log(2|Λ|/δ)), d = 2, A = τ = 1
    regret = math.exp(-2 / math.log(2) ** 0.5)
    c2 = 2 * math.sqrt(0.05 * math.log(2e7))
    assert alg2_value_sensitivity(1.0, 1.0, 2, N, DELTA, K1) == pytest.approx(regret + c2, rel=1e-14)
    assert regret == pytest.approx(0.090515, abs=1e-6) and c2 == pytest.approx(1.833644, abs=1e-6)
    # Alg. 3: min{g*/m, L/(mλmin)} + (λmax − λmin)L/(λmaxλmin); m = 1000, L = g* = 1, λ ∈ [1e-2, 1]
    assert alg3_value_sensitivity(1.0, 1000, 1e-2, 1.0, 1.0) == pytest.approx(1e-3 + 0.99 / 1e-2, rel=1e-14)
    assert alg3_value_sensitivity(1.0, 10, 0.5, 0.5, 1.0) == pytest.approx(0.1)  # λmin = λmax: only the swap term
    with pytest.raises(ValueError, match="lambda_max"):
        alg3_value_sensitivity(1.0, 10, 0.5, 0.1, 1.0)


# ------------------------------------------------------------------ mechanisms
def _problem(n=16, seed=0, shift=0.0, dim=2):
    rng = np.random.default_rng(seed)
    points = rng.random((n, dim))
    gains = 0.8 + 0.1 * np.sin(3 * points).sum(axis=1) + shift
    hyper = [{"lambda": float(10 ** (-2 + 2 * p[0]))} for p in points]
    return BOProblem(gains, points, hyper, validation_size=1000, row_norm=1.0)


def test_the_exponential_mechanism_over_lambda_follows_softmax_of_the_posterior_mean():
    """χ² goodness of fit of 40,000 λ̃ draws (Gumbel-max) to softmax(εμ_T/(2Δ)); large ε so the law is
    far from uniform (the test has power against a uniform or an argmax sampler)."""
    method = KusnerAlg1(iterations=8)
    problem = _problem()
    run, _ = method._ucb(problem, method.noise_variance, 1e-6)
    eps = 400.0
    sens = hyperparameter_sensitivity(8, 16, 1e-6, method.k1)
    probs = exponential_mechanism_probabilities(run.mean, sensitivity=sens, epsilon=eps)
    assert probs.max() < 0.5 and probs.min() < 0.5 / 16  # neither uniform nor a point mass
    ledger = Ledger(1e9, 0.5, "approx")
    rng = np.random.default_rng(11)
    draws = [method._release_hyperparameter(run, 16, eps, 1e-6, rng, ledger)[0] for _ in range(40_000)]
    counts = np.bincount(draws, minlength=16)
    assert (probs * 40_000 >= 5).all()  # every cell large enough for the χ² approximation
    observed, expected = counts, probs * 40_000
    assert chisquare(observed, expected).pvalue > 1e-3  # a false alarm with probability 0.001
    uniform = np.full(observed.size, 40_000 / observed.size)
    assert chisquare(observed, uniform).pvalue < 1e-12  # and the test can tell the difference
    assert [(e.event, e.count) for e in ledger.entries] == [(ApproxDPEvent(eps, 1e-6), 40_000)]
    assert ledger.summary()["n_charges"] == 40_000


def _released_values(problem, n, eps_total, seed):
    method = KusnerAlg1(iterations=4, gamma_t=1.0)
    rng = np.random.default_rng(seed)
    out = np.empty(n)
    for i in range(n):
        ledger = Ledger(eps_total, 1e-5, "approx")
        out[i] = method.release(problem, epsilon=eps_total, delta=1e-5, rng=rng, ledger=ledger).value
    return out, method


@pytest.mark.slow
def test_v_tilde_audit_on_a_neighbouring_pair_at_the_sensitivity_bound():
    """Neighbouring gains built so that |v* − v*′| equals Alg. 1's Δ_v (the sensitivity assumption holds by
    construction, at its edge). The 99%-confidence Clopper–Pearson lower bound on ε from 30,000 releases
    per side must not exceed the per-release ε — and must be close to it, so the test is not vacuous."""
    eps_total = 2.0  # (1, δ/2) for ṽ
    base = _problem()
    method = KusnerAlg1(iterations=4, gamma_t=1.0)
    delta_v = alg1_value_sensitivity(4, 16, 0.5e-5, method.k1, method.noise_variance, 1.0)
    run = gp_ucb(
        base.gains,
        kernel_matrix(base.points, base.points, kernel="squared_exponential", length_scale=0.2),
        iterations=4,
        delta=0.5e-5,
        noise_variance=method.noise_variance,
    )
    neighbour = BOProblem(base.gains.copy(), base.points, base.hyperparameters, 1000, 1.0)
    neighbour.gains[run.indices] += delta_v  # the same path (UCB is shift-sensitive, so we check it), v*′ = v* + Δ_v
    v, _ = _released_values(base, 30_000, eps_total, seed=1)
    v_prime, _ = _released_values(neighbour, 30_000, eps_total, seed=2)
    v_star, v_star_prime = base.gains[run.indices].max(), neighbour.gains[run.indices].max()
    assert v_star_prime - v_star == pytest.approx(delta_v, rel=1e-12)
    threshold = v_star_prime  # S = {ṽ ≥ v*′}: the likelihood ratio there is exactly e^ε
    bound = epsilon_lower_bound(
        int((v_prime >= threshold).sum()), v_prime.size, int((v >= threshold).sum()), v.size, confidence=0.99
    )
    assert bound <= 1.0
    assert bound >= 0.85


def test_a_run_charges_two_releases_of_half_the_budget_and_alg3_one_pure_release():
    problem = _problem()
    for method in (KusnerAlg1(iterations=5), KusnerAlg2(iterations=5)):
        ledger = Ledger(1.0, 1e-5, "approx")
        release = method.release(problem, epsilon=1.0, delta=1e-5, rng=np.random.default_rng(0), ledger=ledger)
        assert [(e.event, e.count) for e in ledger.entries] == [(ApproxDPEvent(0.5, 0.5e-5), 1)] * 2  # two labels
        assert ledger.eps_spent == pytest.approx(1.0) and release.index is not None
        assert release.info["laplace_scale"] == pytest.approx(release.info["value_sensitivity"] / 0.5)
    ledger = Ledger(1.0, 1e-5, "approx")
    release = KusnerAlg3(iterations=5).release(
        problem, epsilon=1.0, delta=1e-5, rng=np.random.default_rng(0), ledger=ledger
    )
    assert [e.event for e in ledger.entries] == [LaplaceEvent(1.0)] and release.index is None  # Lap(Δ/ε): ε-DP
    lambdas = [h["lambda"] for h in problem.hyperparameters]
    assert release.info["value_sensitivity"] == pytest.approx(
        alg3_value_sensitivity(1.0, 1000, min(lambdas), max(lambdas), 1.0), rel=1e-14
    )


def test_alg2_releases_the_best_of_steps_2_to_T_and_alg1_uses_the_greedy_information_gain_bound():
    problem = _problem()
    method = KusnerAlg2(iterations=6)
    release = method.release(
        problem, epsilon=1e6, delta=1e-5, rng=np.random.default_rng(0), ledger=Ledger(1e6, 1e-5, "approx")
    )
    assert release.best_observed == release.run.values[1:].max()
    alg1 = KusnerAlg1(iterations=6)
    release = alg1.release(
        problem, epsilon=1.0, delta=1e-5, rng=np.random.default_rng(0), ledger=Ledger(1.0, 1e-5, "approx")
    )
    K = kernel_matrix(problem.points, problem.points, kernel="squared_exponential", length_scale=0.2)
    assert release.info["gamma_t"] == pytest.approx(max_information_gain_bound(K, 6, alg1.noise_variance))


def test_alg3_refuses_rows_that_are_not_unit_bounded():
    problem = BOProblem(*_problem().__dict__.values())
    bad = BOProblem(problem.gains, problem.points, problem.hyperparameters, 1000, row_norm=2.0)
    with pytest.raises(ValueError, match="1-Lipschitz"):
        KusnerAlg3().release(
            bad, epsilon=1.0, delta=1e-5, rng=np.random.default_rng(0), ledger=Ledger(1.0, 1e-5, "approx")
        )


# ------------------------------------------------------------------ config
SMALL = (
    "model=bo",
    "dataset=synthetic_logreg",
    "dataset.n=1500",
    "dataset.d=5",
    "bo.n_candidates=12",
    "bo.train_size=300",
    "bo.test_size=300",
    "bo.pool_size=800",
    "bo.validation_size=200",
    "progress=false",
)


@pytest.mark.parametrize(
    "overrides, message",
    [
        (
            ("algorithm=kusner_alg1", "model=logreg"),
            r"model=logreg does not fit algorithm=kusner_alg1, which needs kusner_bo's model=bo",
        ),
        (("model=bo",), r"model=bo does not fit algorithm=dp_blsgd"),
        (
            ("algorithm=kusner_alg3", "bo.target=svm_rbf"),
            r"algorithm kusner_alg3 cannot tune bo.target=svm_rbf; it supports bo.target=logreg",
        ),
        (
            ("model=bo", "algorithm=kusner_alg1", "bo.target=forest"),
            r"bo.target must be one of svm_rbf, logreg, got 'forest'",
        ),
        (("model=bo", "algorithm=kusner_alg1", "+bo.folds=3"), r"bo.folds is not a bo setting"),
        (("model=bo", "algorithm=kusner_alg1", "bo.validation_size=20000"), r"bo.pool_size \(20000\) must exceed"),
        (("model=bo", "algorithm=kusner_alg1", "algorithm.k1=1.0"), r"k1 must be a finite number in \[0, 1\), got 1.0"),
        (
            ("model=bo", "algorithm=kusner_alg1", "algorithm.gamma_t=-1"),
            r"gamma_t must be one of greedy_bound or a finite number > 0",
        ),
        (("model=bo", "algorithm=kusner_alg3", "bo.target=logreg", "algorithm.gain=accuracy"), r"gain must be ramp"),
        (("model=bo", "algorithm=kusner_mtgp_likelihood", "algorithm.k1_values=[0.5,1.0]"), r"k1_values must be"),
    ],
)
def test_bad_kusner_configs_are_refused_with_the_key(compose_run_config, overrides, message):
    with pytest.raises(ConfigError, match=message):
        compose_run_config(*overrides)


def test_glm_config_hashes_do_not_change_with_the_bo_section(compose_run_config):
    cfg = compose_run_config()
    assert cfg.bo is None and "bo" not in cfg.semantic_dict()


# ------------------------------------------------------------------ jobs
@pytest.mark.parametrize(
    "algorithm, target", [("kusner_alg1", "svm_rbf"), ("kusner_alg2", "logreg"), ("kusner_alg3", "logreg")]
)
def test_a_tuning_job_spends_its_budget_and_reports_release_and_reference(
    compose_run_config, tmp_path, algorithm, target
):
    cfg = compose_run_config(
        *SMALL,
        f"algorithm={algorithm}",
        f"bo.target={target}",
        "reps=4",
        "privacy.eps=2",
        "algorithm.iterations=6",
        "trace.nonprivate=true",
    )  # GP-UCB's path is never released
    df = run_job(make_plan(cfg), tmp_path)
    assert len(df) == 4 and (df["eps_spent"] <= 2.0).all() and (df["eps_spent"] >= 2.0 * (1 - 1e-12)).all()
    assert (df["delta_spent"] <= cfg.privacy.delta).all()
    assert (df["delta_spent"] == (0.0 if algorithm == "kusner_alg3" else cfg.privacy.delta)).all()
    assert (df["value_error"] == (df["value_released"] - df["value_best_observed"]).abs()).all()
    assert (df["gain_best_observed"] <= df["gain_best"]).all() and (df["iterations"] == 6).all()
    if algorithm == "kusner_alg3":
        assert (df["released_index"] == -1).all() and df["test_accuracy"].isna().all()
    else:
        assert df["released_index"].between(0, 11).all() and df["test_accuracy"].between(0, 1).all()
    assert df["validation_size"].eq(200).all() and df["rep"].tolist() == [0, 1, 2, 3]
    trace = pd.read_parquet(tmp_path / "trace.parquet")
    default = compose_run_config(
        *SMALL, f"algorithm={algorithm}", f"bo.target={target}", "reps=4", "privacy.eps=2", "algorithm.iterations=6"
    )
    run_job(make_plan(default), tmp_path / "default")
    assert pd.read_parquet(tmp_path / "default" / "trace.parquet").empty  # not written unless asked for
    assert (
        len(trace) == 4 * 6
        and (trace.groupby("rep")["best_so_far"].last().values == df["value_best_observed"].values).all()
    )
    again = run_job(make_plan(cfg), tmp_path)  # finished: skipped, identical
    pd.testing.assert_frame_equal(again, df)


def test_reruns_are_bit_identical_and_reps_draw_different_validation_sets(compose_run_config, tmp_path):
    cfg = compose_run_config(*SMALL, "algorithm=kusner_alg1", "reps=3", "algorithm.iterations=5")
    a = run_job(make_plan(cfg), tmp_path / "a", key_dir=tmp_path)  # one sweep: one secret noise key
    b = run_job(make_plan(cfg), tmp_path / "b", key_dir=tmp_path)
    cols = ["released_index", "value_released", "gain_best"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    assert a["gain_best"].nunique() > 1
    other_key = run_job(make_plan(cfg), tmp_path / "c")  # the validation sets follow the seed, the noise the key
    pd.testing.assert_series_equal(a["gain_best"], other_key["gain_best"])
    assert not a["value_released"].equals(other_key["value_released"])


def test_a_job_that_overspends_is_refused_before_writing(compose_run_config, tmp_path, monkeypatch):
    """A method that releases at 2ε on a ledger with room for 10ε: the job's own check catches it."""
    cfg = compose_run_config(*SMALL, "algorithm=kusner_alg1", "algorithm.iterations=5", "privacy.eps=0.3")
    original = KusnerAlg1.release

    def overspend(self, problem, *, epsilon, delta, rng, ledger):
        return original(self, problem, epsilon=2 * epsilon, delta=delta, rng=rng, ledger=ledger)

    monkeypatch.setattr(KusnerAlg1, "release", overspend)
    monkeypatch.setattr(
        RunPlan,
        "ledger",
        lambda plan, method=None: (Ledger(10 * plan.run.privacy.eps, plan.run.privacy.delta, "approx"), float),
    )
    with pytest.raises(PrivacyViolation, match=r"spent \(ε, δ\) = \(0\.6"):
        run_job(make_plan(cfg), tmp_path)
    assert not (tmp_path / "results.parquet").exists()


def test_fig1_study_writes_one_row_per_k1_and_the_likelihood_favours_large_k1(compose_run_config, tmp_path):
    cfg = compose_run_config(*SMALL, "algorithm=kusner_mtgp_likelihood", "algorithm.n_sets=20")
    df = run_job(make_plan(cfg), tmp_path)
    assert len(df) == 19 and df["k1"].tolist() == sorted(df["k1"])
    assert df["k1"].min() == pytest.approx(0.05) and df["k1"].max() == pytest.approx(0.95)
    assert df["log_likelihood"].is_monotonic_increasing  # neighbours' gains differ by at most 1/m
    assert (df["max_abs_gain_change"] <= 1 / 200 + 1e-12).all() and df["eps_spent"].eq(math.inf).all()
    assert 0 < df["n_added"].iloc[0] < 20


@pytest.mark.data
def test_svm_tuning_on_adult_a9a_sparse_rows(shared_data, compose_run_config, tmp_path):
    """Alg. 1 on the real a9a rows (sparse, 124 columns): 8 RBF SVMs on 300 rows, V of 500 pool rows."""
    root = shared_data("adult_a9a/a9a.gz", "adult_a9a/a9a.t.gz")
    cfg = compose_run_config(
        "model=bo",
        "algorithm=kusner_alg1",
        "dataset=adult",
        f"data_dir={root}",
        "bo.n_candidates=8",
        "bo.train_size=300",
        "bo.test_size=500",
        "bo.pool_size=1000",
        "bo.validation_size=500",
        "algorithm.iterations=5",
        "reps=2",
        "progress=false",
    )
    df = run_job(make_plan(cfg), tmp_path)
    assert len(df) == 2 and (df["eps_spent"] <= 1.0).all() and df["dataset"].eq("adult").all()
    assert df["gain_best"].between(0.70, 0.95).all()  # Adult's majority rate is 0.76; a 300-row SVM reaches ~0.8
    assert df["test_accuracy"].between(0.70, 0.95).all()


@pytest.mark.slow
@pytest.mark.parametrize(
    "preset, figure",
    [("kusner_fig1", "kusner.fig1"), ("kusner_utility", "kusner.utility"), ("kusner_utility_logreg", "kusner.utility")],
)
def test_presets_run_ci_sized_on_synthetic_data_and_plot(cli, tmp_path, preset, figure):
    """Each preset through the CLI on synthetic_logreg, shrunk through config only, then dpbench-plot."""
    sweep = tmp_path / "s"
    sizes = (
        ["bo.validation_size=200,400"] if preset == "kusner_fig1" else ["bo.validation_size=500", "privacy.eps=0.5,5"]
    )
    result = cli(
        [
            "-m",
            f"experiment={preset}",
            "dataset=synthetic_logreg",
            "dataset.n=3000",
            "dataset.d=5",
            "bo.n_candidates=16",
            "bo.train_size=300",
            "bo.test_size=500",
            "bo.pool_size=1000",
            "reps=3",
            "algorithm.n_sets=10" if preset == "kusner_fig1" else "algorithm.iterations=8",
            *sizes,
            f"hydra.sweep.dir={sweep}",
            "progress=false",
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    df = pd.concat(map(pd.read_parquet, sweep.rglob("results.parquet")))
    if preset == "kusner_fig1":
        assert sorted(df["validation_size"].unique()) == [200, 400] and len(df) == 2 * 3 * 19
    else:
        n_methods = 2 if preset == "kusner_utility" else 3
        assert len(df) == n_methods * 2 * 3 and (df["eps_spent"] <= df["eps"]).all()
    plot = cli([figure, str(sweep), "--out", str(tmp_path / "f")], tmp_path, module="dpbench.plot")
    assert plot.returncode == 0, plot.stderr
    name = figure.replace(".", "_")
    assert (tmp_path / "f" / f"{name}.png").stat().st_size > 10_000 and (tmp_path / "f" / f"{name}.md").is_file()


def test_presets_use_the_papers_grids():
    from omegaconf import OmegaConf

    from dpbench.conf_files import config_dir

    fig1 = OmegaConf.load(config_dir() / "experiment" / "kusner_fig1.yaml")
    assert fig1.hydra.sweeper.params["bo.validation_size"] == "1000,2000,3000,5000,15000"
    assert fig1.bo.n_candidates == 100 and fig1.bo.pool_size > 15000
    study = OmegaConf.load(config_dir() / "algorithm" / "kusner_mtgp_likelihood.yaml")
    assert study.n_sets == 100 and list(study.k1_values) == [round(0.05 * i, 2) for i in range(1, 20)]
    for name in ("kusner_utility", "kusner_utility_logreg"):
        preset = OmegaConf.load(config_dir() / "experiment" / f"{name}.yaml")
        assert preset.hydra.sweeper.params["privacy.eps"] == "0.1,0.2,0.5,1.0,2.0,5.0,10.0"
