"""han_pwa's fidelity modes: ``fidelity=paper`` runs Sec. 4.2's √d-scaled noise on the solution and Alg. 1's printed
sign; ``correct`` (the default) Δ/ε and the active sign. Both printed variants stay ε-DP: their rows say so.

Hand-computed values: on the box of half-width c = ½ in d = 4, Δ = diam P = 2√d·c = 2, so at ε = 2 the noise
scale is Δ/ε = 1 (correct) and √d·Δ/ε = 2 (paper). On three pieces a = (1, −1, ½) in d = 1, x(1) = 0 and
b = (0, ln 2, ln 4) with ε/(2b_max) = 1, Alg. 1 draws i* with probabilities (1, 2, 4)/7 under the active sign
and (4, 2, 1)/7 as printed.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import chisquare

from dpbench.algorithms.registry import make_algorithm
from dpbench.engine import run_job
from dpbench.errors import ConfigError
from dpbench.jobs.plan import make_plan
from dpbench.privacy.ledger import Ledger
from dpbench.pwa import PWAProblem, make_problem, subgradient_index_probabilities
from dpbench.pwa.algorithms import PWALaplaceSolution, PWASubgradient

LEVEL = 1e-3
PWA = ("dataset=synthetic_pwa", "model=pwa", "progress=false", "dataset.m=8", "dataset.d=3", "reps=5")
HALF = (1.0, 2.0, 4.0)  # exp(u) for u = b = (0, ln 2, ln 4): the active law ∝ these, the printed law ∝ their inverses


def _ledger(eps: float) -> Ledger:
    return Ledger(eps, 1e-8, "pure")


@pytest.mark.parametrize("name", ["pwa_laplace_solution", "pwa_subgradient"])
def test_the_mode_is_validated(name):
    assert make_algorithm(name, {}).fidelity == "correct" and make_algorithm(name, {}).fidelity_mode is None
    assert make_algorithm(name, {"fidelity": "paper"}).fidelity_mode.breaks_guarantee == ""  # still ε-DP
    with pytest.raises(
        ConfigError, match=rf"algorithm {name}: fidelity must be one of correct, paper, got 'authors_code'"
    ):
        make_algorithm(name, {"fidelity": "authors_code"})


# ----------------------------------------------------------------------------------- Sec. 4.2: the noise scale
def test_the_solution_noise_scale_is_delta_over_eps_and_sqrt_d_times_that_as_printed():
    problem = make_problem(12, d=4, c=0.5, seed=6)
    x_opt, _ = problem.solve()
    noise, scales = {}, {}
    for fidelity in ("correct", "paper"):
        release = PWALaplaceSolution(fidelity=fidelity).release(
            problem, epsilon=2.0, runs=500, rng=np.random.default_rng(3), ledger=_ledger(2.0)
        )
        noise[fidelity], scales[fidelity] = release.x - x_opt, release.info["noise_scale"]
    assert scales == {"correct": 1.0, "paper": 2.0}  # Δ/ε = 2/2; √d·Δ/ε = 2·2/2
    np.testing.assert_allclose(noise["paper"], 2.0 * noise["correct"], rtol=1e-12)  # the same draws, √d = 2 times
    mean_norm = np.linalg.norm(noise["correct"], axis=1).mean()  # ‖w‖ ~ Gamma(d = 4, scale 1): mean 4
    assert abs(mean_norm - 4.0) < 4 * 2.0 / math.sqrt(500)


# ----------------------------------------------------------------------------------- Alg. 1: the sign
def _three_pieces() -> PWAProblem:
    return PWAProblem(np.array([[1.0], [-1.0], [0.5]]), np.log(np.array(HALF)), 1.0, 1.0)


def test_the_selection_law_is_hand_computed_in_both_modes():
    b = _three_pieces().b
    np.testing.assert_allclose(
        subgradient_index_probabilities(b, epsilon=2.0, b_max=1.0), [np.array(HALF) / 7], rtol=1e-12
    )
    np.testing.assert_allclose(
        subgradient_index_probabilities(b, epsilon=2.0, b_max=1.0, selection="printed"),
        [np.array(HALF[::-1]) / 7],
        rtol=1e-12,
    )


@pytest.mark.parametrize("fidelity, law", [("correct", HALF), ("paper", HALF[::-1])])
def test_one_step_of_the_method_draws_the_index_from_its_mode_s_law(fidelity, law):
    """k = 1 and ε = 2: ε/(2b_max) = 1; α = ½·diam P/G = 1, so x(2) = −a_{i*} names the index."""
    problem, n = _three_pieces(), 70_000
    method = PWASubgradient(iterations=1, step_scale=0.5, fidelity=fidelity)
    x = method.release(problem, epsilon=2.0, runs=n, rng=np.random.default_rng(11), ledger=_ledger(2.0)).x[:, 0]
    index = np.select([x == -1.0, x == 1.0, x == -0.5], [0, 1, 2], default=-1)
    assert (index >= 0).all()
    counts = np.bincount(index, minlength=3)
    assert chisquare(counts, n * np.array(law) / 7).pvalue > LEVEL
    assert chisquare(counts, n * np.array(law[::-1]) / 7).pvalue < 1e-100  # the other mode's law is far off


# ----------------------------------------------------------------------------------- rows, through the engine
@pytest.mark.parametrize("algorithm, scale_factor", [("pwa_laplace_solution", math.sqrt(3)), ("pwa_subgradient", None)])
def test_rows_carry_the_fidelity_and_a_valid_guarantee(compose_run_config, tmp_path, algorithm, scale_factor):
    """ε = 50: ε/k = ½ per step, large enough for the sign to change the paths of 5 runs."""
    correct = compose_run_config(*PWA, f"algorithm={algorithm}", "privacy.eps=50")
    paper = compose_run_config(*PWA, f"algorithm={algorithm}", "algorithm.fidelity=paper", "privacy.eps=50")
    assert compose_run_config(*PWA, f"algorithm={algorithm}_paper", "privacy.eps=50").config_hash == paper.config_hash
    assert paper.config_hash != correct.config_hash
    rows = {}
    for name, cfg in (("correct", correct), ("paper", paper)):
        rows[name] = run_job(make_plan(cfg), tmp_path / name)
        assert set(rows[name]["fidelity"]) == {name} and set(rows[name]["p_fidelity"]) == {name}
        assert rows[name]["guarantee_valid"].all() and set(rows[name]["guarantee_note"]) == {""}
        assert (rows[name]["guarantee"] == "eps-DP").all() and (rows[name]["eps_spent"] <= rows[name]["eps"]).all()
    assert not np.array_equal(rows["correct"]["train_objective"], rows["paper"]["train_objective"])
    if scale_factor is not None:  # run.json records each release's public noise scale
        scales = [json.loads((tmp_path / name / "run.json").read_text()) for name in ("correct", "paper")]
        found = [_find(meta, "noise_scale") for meta in scales]
        assert found[1] == pytest.approx(scale_factor * found[0], rel=1e-12)


def _find(tree, key):
    """The first value of ``key`` anywhere in a JSON tree."""
    if isinstance(tree, dict):
        if key in tree:
            return tree[key]
        tree = list(tree.values())
    if isinstance(tree, list):
        for item in tree:
            found = _find(item, key)
            if found is not None:
                return found
    return None
