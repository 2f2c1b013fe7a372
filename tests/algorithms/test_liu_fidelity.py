"""liu_dda's fidelity modes: ``fidelity=paper`` draws Theorem 1's σ as printed (constant 32, the ι of node
sampling, no condition on T), as Sec. 5 does, is charged the ε the figures claim and labels its rows;
``fidelity=correct`` is unchanged for both ``noise`` values."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf

from dpbench.algorithms.base import Tracer
from dpbench.algorithms.liu_dda import DPDDA, DPDDAAllNodes
from dpbench.algorithms.registry import make_algorithm
from dpbench.conf_files import config_dir
from dpbench.data import load_dataset
from dpbench.dda import remark31_epsilon, sec5_sigma, split_rows, theorem1_sigma
from dpbench.engine import run_job
from dpbench.errors import ConfigError
from dpbench.jobs.plan import make_plan
from dpbench.plot.leaderboard import cell_statistics
from dpbench.privacy.accountants import make_accountant
from dpbench.privacy.events import ApproxDPEvent
from dpbench.privacy.ledger import Ledger
from dpbench.problems import make_problem


def _svm(n=400):
    data = load_dataset(
        "synthetic_svm",
        {"n": n, "n_test": 100, "d": 8, "density": 1.0, "seed": 0},
        data_dir=Path("."),
        allow_download=False,
    )
    return make_problem(data.X, data.y, loss="hinge", public_row_norm=data.info["row_norm_bound"], reg=0.0005)


def _fit(algorithm, problem, eps=0.8, delta=1e-5):
    ledger = Ledger(eps, delta, make_accountant(algorithm.accountant))
    tracer = Tracer(problem, ledger)
    result = algorithm.fit(problem, ledger, np.random.default_rng(3), tracer)
    return result, ledger, pd.DataFrame(tracer.rows)


# ----------------------------------------------------------------------------------- σ
def test_the_paper_sigma_is_theorem_1_as_printed_with_iota():
    """Adult, one edge, 3 epochs, ε = 0.8: q = 1628, ι = 0.1, T = 3·⌈1628/0.1⌉ = 48,840, L = √15, δ₀ = 0.01.
    σ² = 32·0.1²·15·48840·ln 200/(1628²·0.8²) = 0.32·15·48840·5.2983174/1,696,245.76 = 0.732263, σ = 0.855723
    (0.221·L, where the RDP σ is 2.4·L). The condition T ≥ 5q²ε²/(4ι²) = 2.1·10⁸ is not met, and not checked."""
    sigma = sec5_sigma(0.8, delta0=0.01, iota=0.1, q=1628, iterations=48_840, lipschitz=math.sqrt(15))
    assert sigma == pytest.approx(0.855723, rel=1e-6)
    with pytest.raises(ValueError, match="below Theorem 1's requirement"):
        theorem1_sigma(0.8, delta0=0.01, iota=0.1, q=1628, iterations=48_840, lipschitz=math.sqrt(15))
    # where the condition holds, the printed σ is √(32/160) of the corrected one, and equals the printed Theorem 1's
    args = {"delta0": 0.01, "iota": 0.1, "q": 2, "iterations": 2000, "lipschitz": 1.0}
    assert sec5_sigma(0.8, **args) == theorem1_sigma(0.8, **args)
    assert sec5_sigma(0.8, **args) == pytest.approx(
        theorem1_sigma(0.8, **args, corrected=True) / math.sqrt(5), rel=1e-12
    )
    with pytest.raises(ValueError, match=r"epsilon must be in \(0, 1\]"):
        sec5_sigma(1.5, **args)


@pytest.mark.parametrize(
    "algorithm, iota",
    [
        (DPDDA(fidelity="paper", epochs=2), 0.1),
        (DPDDA(fidelity="paper", n_edges=2, epochs=2), 0.19047619047619047),
        (DPDDAAllNodes(fidelity="paper", epochs=2), 1.0),
    ],
)
def test_a_paper_run_draws_the_printed_sigma_and_is_charged_the_claimed_epsilon(algorithm, iota):
    problem = _svm()
    assert algorithm.accountant == "approx"
    result, ledger, trace = _fit(algorithm, problem)
    q = split_rows(problem.n, 20, np.random.default_rng(3)).shape[1]
    assert q == 20 and result.n_iterations == round(2 * math.ceil(q / iota))
    expected = sec5_sigma(0.8, delta0=0.01, iota=iota, q=q, iterations=result.n_iterations, lipschitz=1.0)
    assert trace["sigma"].eq(expected).all() and result.info["sigma"] == expected
    [entry] = ledger.entries
    assert entry.event == ApproxDPEvent(0.8, 1e-5) and ledger.eps_spent == 0.8
    assert trace["eps_hat"].iloc[-1] == pytest.approx(
        remark31_epsilon(result.n_iterations, iterations=result.n_iterations, epsilon=0.8), rel=1e-12
    )
    assert trace["delta0"].eq(0.01).all()
    correct = _fit(dataclasses.replace(algorithm, fidelity="correct"), problem)[2]["sigma"].iloc[0]
    assert correct > 5 * expected  # the paper's σ is far smaller than the one the budget pays for


# ----------------------------------------------------------------------------------- correct is unchanged
@pytest.mark.parametrize(
    "algorithm, n, delta, fingerprint",
    [
        (DPDDA(n_edges=2, epochs=2), 400, 1e-5, (492.48563706468633, 70.96208570241153, 0.7999998558107823, 210)),
        (DPDDAAllNodes(epochs=2), 400, 1e-5, (65.33206184377434, 62.84507578483111, 0.7999999048448005, 40)),
        (
            DPDDA(noise="theorem1", iterations=100),
            40,
            0.9,
            (-541.8715004701389, 181.97385400360466, 0.7078232420355923, 100),
        ),
    ],
)
def test_correct_runs_as_before_the_fidelity_key(algorithm, n, delta, fingerprint):
    """Σw, σ, ε spent and T of seeded runs, as computed by main at b6c15fe (before fidelity existed here);
    the ``theorem1`` case as recorded once Theorem 1 was priced at ι = 1 (at T = 2000 it now certifies δ = 1,
    so it runs T = 100: σ = 181.97 where ι = 0.1 gave 81.38 at T = 2000)."""
    result, ledger, trace = _fit(algorithm, _svm(n), delta=delta)
    got = (float(result.w.sum()), float(trace["sigma"].iloc[0]), ledger.eps_spent, result.n_iterations)
    assert got == pytest.approx(fingerprint, rel=1e-12)


# ----------------------------------------------------------------------------------- refused combinations
def test_paper_refuses_noise_theorem1_and_unknown_modes():
    with pytest.raises(
        ValueError, match=r"fidelity=paper draws Theorem 1's σ as printed.*noise=theorem1 with fidelity=correct"
    ):
        DPDDA(fidelity="paper", noise="theorem1")
    with pytest.raises(ConfigError, match="algorithm dp_dda_all_nodes: fidelity must be one of correct, paper"):
        make_algorithm("dp_dda_all_nodes", {"fidelity": "authors_code"})
    with pytest.raises(ConfigError, match=r"dp_dda with fidelity=paper: epsilon must be in \(0, 1\]"):
        _fit(DPDDA(fidelity="paper", epochs=1), _svm(), eps=2.0)


# ----------------------------------------------------------------------------------- rows
JOB = (
    "algorithm=dp_dda",
    "dataset=synthetic_svm",
    "dataset.n=400",
    "dataset.n_test=100",
    "dataset.d=8",
    "reps=2",
    "algorithm.epochs=0.5",
    "privacy.eps=0.8",
    "progress=false",
)


def test_paper_rows_are_labelled_and_never_ranked(compose_run_config, tmp_path):
    correct = compose_run_config(*JOB)
    assert "fidelity" not in correct.semantic_dict()["algorithm_params"]  # the hashes of earlier jobs stay
    rows = run_job(make_plan(correct), tmp_path / "correct")
    assert set(rows["fidelity"]) == {"correct"} and rows["guarantee_valid"].all() and set(rows["accountant"]) == {"rdp"}

    paper = compose_run_config(*JOB, "algorithm.fidelity=paper")
    assert paper.config_hash != correct.config_hash
    paper_rows = run_job(make_plan(paper), tmp_path / "paper")
    assert set(paper_rows["fidelity"]) == {"paper"} and not paper_rows["guarantee_valid"].any()
    assert (
        paper_rows["guarantee_note"]
        .str.startswith("fidelity=paper: σ from Theorem 1 as printed: its constant 32")
        .all()
    )
    assert set(paper_rows["accountant"]) == {"approx"} and (paper_rows["eps_spent"] == paper_rows["eps"]).all()

    baseline = run_job(make_plan(compose_run_config(*JOB, "algorithm=dp_dda_all_nodes")), tmp_path / "baseline")
    ranks = cell_statistics(pd.concat([paper_rows, baseline])).set_index("algorithm")["rank"]
    assert math.isnan(ranks["dp_dda"]) and ranks["dp_dda_all_nodes"] == 1.0


def test_the_deviations_preset_sweeps_both_modes_at_the_figures_key_points():
    preset = OmegaConf.load(config_dir() / "experiment" / "deviations_liu.yaml")
    params = preset.hydra.sweeper.params
    assert params["algorithm.fidelity"] == "correct,paper"
    assert params.algorithm == "dp_dda,dp_dda_two_edges,dp_dda_all_nodes"
    assert set(params.model.split(",")) == {"liu_l2_svm", "liu_l1_svm"}
    assert preset.privacy.delta == 1e-5 and preset.algorithm.noise == "rdp"
