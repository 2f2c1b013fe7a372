"""With ε very large each chen_lee baseline approaches the non-private accuracy on Adult (within 1 point)."""

import pandas as pd
import pytest

from dpbench.engine import run_job
from dpbench.jobs.plan import make_plan


@pytest.mark.data
@pytest.mark.slow
@pytest.mark.parametrize(
    "algorithm,eps,extra",
    [
        ("dp_agd", 200.0, []),
        ("objpert", 1e4, []),
        # Δ_T ≤ 2G/(nμ) whatever T, so more steps are free; the default T = 50 stops short (0.827 vs 0.841)
        ("outpert_gd", 1e4, ["algorithm.iterations=1000"]),
        ("outpert_rsgd", 1e4, ["privacy.neighbouring=replace_one"]),  # its proof is replace-one only
        # r = nε/800 rounds would be ~4·10⁸; its mutation scale 0.5·0.95^t has stopped moving long before 150.
        # Measured: 0.8405 against 0.8512 — DP-AGD's PrivGene protocol plateaus just over a point short.
        pytest.param(
            "privgene",
            1e4,
            ["algorithm.max_rounds=150"],
            marks=pytest.mark.xfail(
                strict=True, reason="PrivGene's decaying mutation plateaus 1.07 points below non-private"
            ),
        ),
    ],
)
def test_large_epsilon_approaches_nonprivate_on_adult(compose_run_config, shared_data, tmp_path, algorithm, eps, extra):
    data_dir = shared_data("adult_a9a/a9a.gz", "adult_a9a/a9a.t.gz")
    common = ["dataset=adult", f"data_dir={data_dir}", "progress=false", f"privacy.eps={eps}"]
    private = run_job(make_plan(compose_run_config(*common, f"algorithm={algorithm}", *extra)), tmp_path / "private")
    # the reference sees the same preprocessing (objpert clips rows to norm 1)
    row_norm = compose_run_config(*common, f"algorithm={algorithm}", *extra).row_norm
    reference_overrides = [*common, "algorithm=nonprivate"] + ([f"data.row_norm={row_norm}"] if row_norm else [])
    reference = run_job(make_plan(compose_run_config(*reference_overrides)), tmp_path / "reference")
    assert (private["eps_spent"] <= eps).all()
    gap = reference["test_accuracy"].mean() - private["test_accuracy"].mean()
    assert gap < 0.01, pd.concat([private, reference])[["algorithm", "test_accuracy"]]


@pytest.mark.data
@pytest.mark.parametrize(
    "overrides, floor",
    [
        # σ calibrated to one epoch at ε = 0.05 (σ = 4 cannot pay for one step: w = 0 scores 0.239)
        (["algorithm=dp_sgd", "privacy.eps=0.05", "cv.folds=2"], 0.761),  # above majority
        # L, the L1 clip and x₀ from the public row bounds (√15, 15) and the model; nothing set by hand
        (["algorithm=dp_gd", "model=kuru_logreg"], 0.80),
    ],
    ids=["dp_sgd_eps0.05", "dp_gd_kuru_logreg"],
)
def test_baselines_at_their_defaults_are_sensible_on_adult(compose_run_config, shared_data, tmp_path, overrides, floor):
    """Baselines on an equal footing: none may fail because a fixed hyper-parameter ignores the
    budget or the dataset. Deterministic (fixed seeds); measured 0.807/0.801 and 0.814."""
    data_dir = shared_data("adult_a9a/a9a.gz", "adult_a9a/a9a.t.gz")
    rows = run_job(
        make_plan(compose_run_config("dataset=adult", f"data_dir={data_dir}", "progress=false", *overrides)), tmp_path
    )
    assert (rows["eps_spent"] <= rows["eps"]).all() and (rows["n_iterations"] > 0).all()
    assert (rows["test_accuracy"] > floor).all(), rows[["fold", "test_accuracy"]]
