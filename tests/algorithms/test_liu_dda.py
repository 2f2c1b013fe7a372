"""liu_dda Algorithm 1 as algorithm=dp_dda / dp_dda_all_nodes: privacy paid before the first release,
σ for the budget, Theorem 1 mode and its refusals, config checks, the ℓ1-SVM's F*, presets end to end."""

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from dpbench.algorithms.base import Tracer
from dpbench.algorithms.baselines import NonPrivate
from dpbench.algorithms.liu_dda import DPDDA, DPDDAAllNodes
from dpbench.conf_files import config_dir
from dpbench.data import load_dataset
from dpbench.dda import (
    activation_counts,
    edge_schedule,
    noisy_subgradients,
    proof_guarantee,
    release_event,
    sigma_for_budget,
    split_rows,
    theorem1_sigma,
)
from dpbench.errors import ConfigError
from dpbench.privacy.accountants import make_accountant
from dpbench.privacy.ledger import Ledger
from dpbench.problems import make_problem


def _svm(n=400, d=8, density=1.0, seed=0, **model):
    data = load_dataset(
        "synthetic_svm",
        {"n": n, "n_test": 100, "d": d, "density": density, "seed": seed},
        data_dir=Path("."),
        allow_download=False,
    )
    params = {"reg": 0.0005, **model}
    problem = make_problem(data.X, data.y, loss="hinge", public_row_norm=data.info["row_norm_bound"], **params)
    return problem, data


def _fit(algorithm, problem, eps=0.8, delta=1e-5, accountant="rdp", seed=3, test=None):
    ledger = Ledger(eps, delta, make_accountant(accountant))
    tracer = Tracer(problem, ledger, test=test)
    result = algorithm.fit(problem, ledger, np.random.default_rng(seed), tracer)
    return result, ledger, pd.DataFrame(tracer.rows)


@pytest.mark.parametrize("n_edges", [1, 2])
def test_dp_dda_pays_the_most_releases_of_any_node_before_running_and_spends_the_budget(n_edges):
    problem, data = _svm()
    algorithm = DPDDA(n_edges=n_edges, epochs=2)
    result, ledger, trace = _fit(algorithm, problem, test=(data.X_test, data.y_test))
    # replay the rng: rows split first, then the gossip of all T iterations
    rng = np.random.default_rng(3)
    rows = split_rows(problem.n, 20, rng)
    q, iota = rows.shape[1], {1: 0.1, 2: 0.19047619047619047}[n_edges]
    iterations = round(2 * math.ceil(q / iota))
    releases = int(activation_counts(20, edge_schedule(20, n_edges, iterations, rng)).max())
    assert result.n_iterations == iterations and q == 20
    [entry] = ledger.entries
    assert entry.count == releases and entry.event == release_event(trace["sigma"].iloc[0], lipschitz=1.0, q=q)
    assert trace["sigma"].iloc[0] == sigma_for_budget(0.8, 1e-5, releases=releases, lipschitz=1.0, q=q)
    assert 0.8 * (1 - 1e-5) <= ledger.eps_spent <= 0.8
    # the trace: privacy spent so far grows to the budget, epochs reach 2, test accuracy is measured
    assert trace["eps_hat"].is_monotonic_increasing and trace["eps_hat"].iloc[-1] == pytest.approx(
        ledger.eps_spent, rel=1e-9
    )
    assert trace["epoch"].iloc[-1] == pytest.approx(2.0, abs=1e-3) and trace["iota"].eq(iota).all()
    assert trace["test_accuracy"].between(0, 1).all() and trace["iteration"].iloc[-1] == iterations
    assert np.array_equal(result.w, _fit(algorithm, problem)[0].w)  # deterministic given the seed


def test_all_nodes_baseline_releases_at_every_iteration_with_iota_one():
    problem, _ = _svm()
    result, ledger, trace = _fit(DPDDAAllNodes(epochs=1), problem)
    assert result.n_iterations == 20  # one epoch = q iterations
    [entry] = ledger.entries
    assert entry.count == 20 and trace["iota"].eq(1.0).all()
    assert trace["sigma"].iloc[0] == sigma_for_budget(0.8, 1e-5, releases=20, lipschitz=1.0, q=20)


def test_more_noise_for_a_smaller_budget_and_none_spent_beyond_it():
    problem, _ = _svm()
    sigmas = [_fit(DPDDA(iterations=500), problem, eps=eps)[2]["sigma"].iloc[0] for eps in (0.2, 1.0)]
    assert sigmas[0] > 3 * sigmas[1]


def test_theorem1_mode_uses_the_corrected_sigma_and_charges_the_proofs_guarantee():
    """Theorem 1 is priced at ι = 1: its proof's ι = 0.1 (dp_dda with one edge on 5 nodes) amplifies by
    hidden node inactivity, which the threat model rejects. The σ that ι = 0.1 gave (ε = 0.8, q = 2,
    T = 2000) certifies nothing at ι = 1 (the proof's δ′ = √(Σε′²) = 3.58 > 1). At ι = 1 the certified δ̃
    grows fast with T (each iteration adds δ₀/q): 0.61 at T = 100, which is run here, and 1 at T = 2000."""
    problem, _ = _svm(n=40)  # q = 2, so Theorem 1's T condition (T ≥ 5q²ε²/(4ι²) = 3.2 at ι = 1) is reachable
    algorithm = DPDDA(noise="theorem1", iterations=100)
    assert algorithm.accountant == "approx" and DPDDA().accountant == "rdp"
    _, ledger, trace = _fit(algorithm, problem, delta=0.9, accountant="approx")
    sigma = theorem1_sigma(0.8, delta0=0.01, iota=1.0, q=2, iterations=100, lipschitz=1.0, corrected=True)
    assert trace["sigma"].iloc[0] == sigma
    amplified = theorem1_sigma(0.8, delta0=0.01, iota=0.1, q=2, iterations=2000, lipschitz=1.0, corrected=True)
    with pytest.raises(ValueError, match=re.escape("δ' = √(Σε'²) = 3.57")):
        proof_guarantee(2000, sigma=amplified, lipschitz=1.0, delta0=0.01, iota=1.0, q=2)
    eps_cert, delta_cert = proof_guarantee(100, sigma=sigma, lipschitz=1.0, delta0=0.01, iota=1.0, q=2)
    assert ledger.entries[0].event.epsilon == eps_cert and ledger.entries[0].event.delta == delta_cert
    assert eps_cert <= 0.8 and 0.8 / math.sqrt(5) <= delta_cert <= 0.9
    # Remark 3.1: ε̂(t) = √(3t/5T)ε + tε²/(5T), ε̂(T) = √(3/5)·0.8 + 0.128
    assert trace["eps_hat"].iloc[-1] == pytest.approx(math.sqrt(0.6) * 0.8 + 0.128, rel=1e-12)
    assert trace["delta0"].eq(0.01).all()


def test_theorem1_mode_refuses_unreachable_T_and_a_delta_below_its_certificate():
    problem, _ = _svm()
    with pytest.raises(ConfigError, match=r"T >= 5q²ε²/\(4ι²\).*or use noise=rdp"):
        _fit(DPDDA(noise="theorem1", iterations=2), problem, delta=0.9, accountant="approx")
    small, _ = _svm(n=40)
    with pytest.raises(ConfigError, match=r"certifies δ = 0\.\d+.*privacy\.delta = 1e-05"):
        _fit(DPDDA(noise="theorem1", iterations=100), small, accountant="approx")


def test_subgradients_are_clipped_to_the_public_bound():
    features = np.array([[3.0, 4.0], [0.3, 0.4]])  # norms 5 and 0.5
    g = noisy_subgradients(
        features, [1, 1], np.array([0, 1]), np.zeros((2, 2)), sigma=0, rng=np.random.default_rng(0), clip=1.0
    )
    assert np.allclose(g, [[-0.6, -0.8], [-0.3, -0.4]])  # the long row is scaled to norm 1, the short one untouched


def test_lipschitz_must_be_public():
    data = load_dataset("synthetic_logreg", {"n": 200}, data_dir=Path("."), allow_download=False)
    problem = make_problem(data.X, data.y, loss="hinge", reg=0.0005)
    with pytest.raises(ConfigError, match=re.escape("algorithm.lipschitz")):
        _fit(DPDDA(iterations=10), problem)
    result, _, trace = _fit(DPDDA(iterations=10, lipschitz=20.0), problem)
    assert result.n_iterations == 10 and np.isnan(trace["test_accuracy"]).all()


@pytest.mark.parametrize(
    "params, message",
    [
        ({"n_nodes": 1}, "n_nodes must be an integer ≥ 2"),
        ({"n_edges": 191}, "exceeds the 190 edges"),
        ({"noise": "laplace"}, "noise must be one of rdp, theorem1"),
        ({"epochs": 0}, "epochs must be a finite number > 0"),
        ({"lipschitz": -1.0}, "lipschitz must be a finite number > 0 or null"),
        ({"delta0": 2.0}, r"delta0 must be a finite number in \(0, 1\]"),
        ({"schedule": "l3"}, "schedule must be one of auto, l2, l1"),
    ],
)
def test_bad_hyper_parameters_are_named(params, message):
    with pytest.raises(ValueError, match=message):
        DPDDA(**params)


def test_config_pairs_models_and_algorithms(compose_run_config):
    _compose = compose_run_config
    run = _compose(
        "algorithm=dp_dda_two_edges", "model=liu_l1_svm", "dataset=synthetic_svm", "privacy.neighbouring=replace_one"
    )
    assert run.algorithm == "dp_dda" and run.algorithm_params["n_edges"] == 2 and run.model.l1_reg == 0.0005
    with pytest.raises(
        ConfigError, match=r"ℓ1 regulariser .* dp_sgd does not handle.*dp_dda, dp_dda_all_nodes, nonprivate"
    ):
        _compose("algorithm=dp_sgd", "model=liu_l1_svm")
    with pytest.raises(ConfigError, match="exactly one regulariser"):
        _compose("algorithm=dp_dda", "model=liu_l1_svm", "model.reg=0.1")
    with pytest.raises(ConfigError, match="does not support the logistic loss"):
        _compose("algorithm=dp_dda_all_nodes", "model=logreg")


def test_l1_objective_and_its_lp_optimum():
    problem, _ = _svm(n=300, d=3, reg=0.0, l1_reg=0.02)
    w = np.array([0.5, -1.0, 0.0])
    hinge = np.maximum(0.0, 1.0 - problem.y * (problem.X @ w)).mean()
    assert problem.evaluate_objective(w) == pytest.approx(hinge + 0.02 * 1.5, rel=1e-14)
    with pytest.raises(ValueError, match="non-smooth term"):
        problem.objective_and_gradient(w)
    best = NonPrivate().fit(problem, None, np.random.default_rng(0), Tracer(problem, None)).w
    fstar = problem.evaluate_objective(best)
    # no point of a fine grid around the LP solution, nor any random perturbation, does better
    grid = np.linspace(-0.05, 0.05, 21)
    around = np.stack(np.meshgrid(grid, grid, grid), axis=-1).reshape(-1, 3) + best
    assert min(problem.evaluate_objective(v) for v in around) >= fstar - 1e-9
    rng = np.random.default_rng(1)
    assert min(problem.evaluate_objective(best + 1e-3 * rng.standard_normal(3)) for _ in range(500)) >= fstar - 1e-9


def test_synthetic_svm_rows_are_unit_norm_dense_or_sparse_and_deterministic():
    dense = load_dataset("synthetic_svm", {"n": 300, "d": 20}, data_dir=Path("."), allow_download=False)
    sparse = load_dataset(
        "synthetic_svm", {"n": 300, "d": 20, "density": 0.1}, data_dir=Path("."), allow_download=False
    )
    assert isinstance(dense.X, np.ndarray) and sparse.X.format == "csr" and sparse.X.nnz == 300 * 2
    assert np.allclose(np.linalg.norm(dense.X, axis=1), 1.0) and np.allclose(
        np.sqrt(sparse.X.multiply(sparse.X).sum(axis=1)), 1.0
    )
    assert dense.X_test.shape == (1000, 20) and dense.info["row_norm_bound"] == 1.0
    again = load_dataset("synthetic_svm", {"n": 300, "d": 20}, data_dir=Path("."), allow_download=False)
    assert again.checksum == dense.checksum and np.array_equal(again.X, dense.X)
    assert (
        load_dataset("synthetic_svm", {"n": 300, "d": 20, "n_test": 0}, data_dir=Path("."), allow_download=False).X_test
        is None
    )


PRESET_EPS = {1: [0.8], 2: [0.2, 0.4, 0.6, 0.8, 1.0], 3: [0.4], 4: [0.2, 0.4, 0.6, 0.8, 1.0]}


@pytest.mark.parametrize("figure", [1, 2, 3, 4])
def test_presets_sweep_the_papers_grid(figure):
    preset = OmegaConf.load(config_dir() / "experiment" / f"liu_fig{figure}.yaml")
    params = preset.hydra.sweeper.params
    assert params.algorithm == "dp_dda,dp_dda_two_edges,dp_dda_all_nodes"
    eps = [float(e) for e in str(params.get("privacy.eps", preset.privacy.eps)).split(",")]
    assert eps == PRESET_EPS[figure] and preset.privacy.delta == 1e-5
    assert f"override /model: {'liu_l2_svm' if figure <= 2 else 'liu_l1_svm'}" in OmegaConf.to_yaml(preset)


@pytest.mark.slow
@pytest.mark.parametrize("figure", [1, 2, 3, 4])
def test_presets_run_on_the_synthetic_stand_in_and_plot(cli, tmp_path, figure):
    """Each preset end to end on synthetic_svm (sparse), short runs; Figs. 2/4 at two of their five ε."""
    sweep = tmp_path / "s"
    eps = PRESET_EPS[figure] if len(PRESET_EPS[figure]) == 1 else [0.2, 1.0]
    result = cli(
        [
            "-m",
            f"experiment=liu_fig{figure}",
            "dataset=synthetic_svm",
            "dataset.n=1000",
            "dataset.n_test=200",
            "dataset.density=0.2",
            "reps=2",
            "algorithm.epochs=0.5",
            f"privacy.eps={','.join(map(str, eps))}",
            f"hydra.sweep.dir={sweep}",
            "progress=false",
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    df = pd.concat(map(pd.read_parquet, sweep.rglob("results.parquet")))
    assert set(df["eps"]) == set(eps) and len(df) == 3 * 2 * len(eps)
    assert (df["eps_spent"] <= df["eps"]).all() and (df["eps_spent"] >= df["eps"] * (1 - 1e-5)).all()
    assert set(df["model"]) == {"liu_l2_svm" if figure <= 2 else "liu_l1_svm"} and (df["suboptimality"] > 0).all()
    plot = cli([f"liu.fig{figure}", str(sweep), "--out", str(tmp_path / "f")], tmp_path, module="dpbench.plot")
    assert plot.returncode == 0, plot.stderr
    assert (tmp_path / "f" / f"liu_fig{figure}.png").stat().st_size > 10_000
    assert "subsampling" in (tmp_path / "f" / f"liu_fig{figure}.md").read_text()


@pytest.mark.data
def test_dp_dda_runs_on_the_epsilon_sample_with_its_unit_norm_bound(shared_data, cli, tmp_path):
    """The 100-row epsilon sample (liu_dda Table 2's dense dataset): q = 5 rows per node, L = 1 from
    the encoding (rows normalised to unit length), both methods within budget."""
    root = shared_data("epsilon_sample/epsilon_normalized.head100.gz", "epsilon_sample/epsilon_normalized.t.head100.gz")
    sample = root / "epsilon_sample"
    result = cli(
        [
            "-m",
            "algorithm=dp_dda,dp_dda_all_nodes",
            "model=liu_l2_svm",
            "dataset=epsilon",
            f"dataset.train_file={sample / 'epsilon_normalized.head100.gz'}",
            f"dataset.test_file={sample / 'epsilon_normalized.t.head100.gz'}",
            "privacy.eps=0.8",
            "privacy.neighbouring=replace_one",
            f"hydra.sweep.dir={tmp_path / 's'}",
            f"data_dir={root}",
            "progress=false",
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    df = pd.concat(map(pd.read_parquet, (tmp_path / "s").rglob("results.parquet")))
    assert sorted(df["algorithm"]) == ["dp_dda", "dp_dda_all_nodes"] and (df["n_test"] == 100).all()
    assert (
        (df["eps_spent"] <= 0.8).all() and (df["suboptimality"] > 0).all() and df["test_accuracy"].between(0, 1).all()
    )
    trace = pd.concat(map(pd.read_parquet, (tmp_path / "s").rglob("trace.parquet")))
    assert set(trace.groupby("algorithm")["iteration"].max()) == {15, 150}  # 3 epochs of q = 5: 3q and ⌈3q/ι⌉
