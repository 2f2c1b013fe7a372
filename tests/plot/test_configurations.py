"""A figure never pools rows of different configurations into one curve. Generic
figures split them into curves labelled by the differing hyper-parameter; the papers' figures, a
curve per method, refuse them in one line naming it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from dpbench.errors import DpbenchError
from dpbench.jobs.plan import make_plan
from dpbench.plot import chen_lee, han, kuru, kusner, liu
from dpbench.plot.generic import accuracy_vs_eps
from dpbench.plot.io import Jobs, load_results
from dpbench.plot.registry import FIGURES

pytestmark = pytest.mark.xdist_group(
    "plot.test_configurations"
)  # its module-scoped fixture is made once, on one worker

SMALL = ["dataset.n=2000", "dataset.seed=1", "progress=false"]


def _run(args: list[str], cwd, module: str = "dpbench") -> subprocess.CompletedProcess:
    env = {**os.environ, "DPBENCH_CACHE": str(cwd / ".cache")}
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


@pytest.fixture(scope="module")
def adhoc(tmp_path_factory):
    """A user's session: an ad-hoc σ = 4 sweep (with the non-private reference), then a σ = 8 one,
    both into the one default ad-hoc directory."""
    root = tmp_path_factory.mktemp("adhoc")
    for args in (
        ["algorithm=dp_sgd,nonprivate", "privacy.eps=0.5,2.0"],
        ["algorithm=dp_sgd", "privacy.eps=0.5,2.0", "algorithm.noise_multiplier=8"],
    ):
        result = _run(["-m", *args, *SMALL], root)
        assert result.returncode == 0, result.stderr[-3000:]
    return root, root / "outputs" / "sweeps" / "adhoc"


def _curves(fig) -> dict[str, tuple[list, list]]:
    """{legend label: (x, y)} of the error-bar curves of the figure's first panel."""
    ax = fig.axes[0]
    return {c.get_label(): (list(c.lines[0].get_xdata()), list(c.lines[0].get_ydata())) for c in ax.containers}


def test_accuracy_vs_eps_draws_one_labelled_curve_per_noise_multiplier(adhoc):
    root, sweep = adhoc
    plot = _run(["accuracy-vs-eps", str(sweep), "--out", str(root / "figs")], root, module="dpbench.plot")
    assert plot.returncode == 0, plot.stderr
    assert (root / "figs" / "accuracy_vs_eps.png").stat().st_size > 1000

    recipe = FIGURES["accuracy-vs-eps"]
    df = recipe.load([str(sweep)])
    curves = _curves(recipe.draw(df))
    assert set(curves) == {"dp_sgd, noise_multiplier=4", "dp_sgd, noise_multiplier=8"}
    for sigma in (4.0, 8.0):  # each point is the mean of its own configuration's rows only
        rows = df[(df["algorithm"] == "dp_sgd") & (df["p_noise_multiplier"] == sigma)]
        expected = rows.groupby("eps")["test_accuracy"].mean()
        x, y = curves[f"dp_sgd, noise_multiplier={sigma:g}"]
        assert x == list(expected.index) and y == pytest.approx(list(expected.values))
    references = [line.get_label() for line in recipe.draw(df).axes[0].lines if line.get_label() == "nonprivate"]
    assert references == ["nonprivate"]


@pytest.mark.parametrize("figure", ["chen_lee.fig3", "leaderboard"])
def test_paper_figures_refuse_the_mixed_sweep_in_one_line_naming_the_hyper_parameter(adhoc, figure):
    root, sweep = adhoc
    plot = _run([figure, str(sweep), "--out", str(root / "refused")], root, module="dpbench.plot")
    assert plot.returncode == 2
    lines = plot.stderr.strip().splitlines()
    assert len(lines) == 1 and "p_noise_multiplier (4, 8)" in lines[0], plot.stderr


def test_dp_sgd_sigma4_rows_say_dp_sgd_but_never_pool_with_dp_sgd(adhoc, tmp_path):
    root, sweep = adhoc
    mixed = tmp_path / "mixed"
    shutil.copytree(sweep, mixed)
    result = _run(["-m", "algorithm=dp_sgd_sigma4", "privacy.eps=0.5", f"hydra.sweep.dir={mixed}", *SMALL], root)
    assert result.returncode == 0, result.stderr[-3000:]
    df = load_results([mixed])
    assert set(df.loc[df["private"], "algorithm"]) == {"dp_sgd"}
    assert set(_curves(accuracy_vs_eps(df))) == {
        "dp_sgd, noise=calibrated, noise_multiplier=4",
        "dp_sgd, noise=calibrated, noise_multiplier=8",
        "dp_sgd, noise=fixed, noise_multiplier=4",
    }
    with pytest.raises(DpbenchError, match=r"p_noise \(calibrated, fixed\)"):
        chen_lee.fig3(df[df["p_noise_multiplier"] != 8.0])


# ----------------------------------------------------------------------------- without the CLI
def _rows(**columns) -> pd.DataFrame:
    base = {
        "dataset": "d",
        "algorithm": "a",
        "private": True,
        "eps": 1.0,
        "fold": 0,
        "rep": 0,
        "seed": 0,
        "test_accuracy": 0.5,
    }
    return pd.DataFrame({**base, **columns})


def test_seeds_of_one_configuration_pool_and_unrecorded_differences_are_refused():
    seeds = _rows(seed=[0, 1], config_hash=["h0", "h1"], test_accuracy=[0.6, 0.8], params='{"lr": 1}')
    assert _curves(accuracy_vs_eps(seeds)) == {"a": ([1.0], [pytest.approx(0.7)])}
    hidden = _rows(seed=[0, 0], config_hash=["h0", "h1"], params='{"lr": 1}')
    with pytest.raises(
        DpbenchError,
        match=r"accuracy-vs-eps: .*seed = 0 holds 2 configurations \(config_hash h0, h1\) "
        r"differing in settings the results do not record",
    ):
        accuracy_vs_eps(hidden)


def test_old_results_without_p_columns_split_by_their_params():
    old = _rows(params=['{"lr": 0.1}', '{"lr": 1.0}'], test_accuracy=[0.6, 0.8])
    assert set(_curves(accuracy_vs_eps(old))) == {"a, lr=0.1", "a, lr=1"}


def _kuru_jobs(initial_values) -> Jobs:
    results, traces = [], []
    for job, initial in enumerate(initial_values):
        params = json.dumps({"iterations": 10, "step_scale": 1.0, "batch_size": None, "initial_value": initial})
        results.append(
            pd.DataFrame(
                {
                    "algorithm": "dp_gd",
                    "dataset": "d",
                    "eps": 1.0,
                    "fold": 0,
                    "rep": [0],
                    "fstar": 0.0,
                    "train_objective": 0.1,
                    "n_iterations": 10,
                    "params": params,
                    "job": str(job),
                }
            )
        )
        traces.append(
            pd.DataFrame({"fold": 0, "rep": 0, "iteration": np.arange(11), "train_objective": 0.1, "job": str(job)})
        )
    return Jobs(pd.concat(results, ignore_index=True), pd.concat(traces, ignore_index=True))


def _liu_jobs(n_nodes) -> Jobs:
    results, traces = [], []
    for job, nodes in enumerate(n_nodes):
        params = json.dumps({"epochs": 3, "n_nodes": nodes, "n_edges": 1})
        results.append(
            pd.DataFrame(
                {
                    "algorithm": "dp_dda",
                    "dataset": "d",
                    "model": "liu_l2_svm",
                    "eps": 0.8,
                    "fold": 0,
                    "rep": [0],
                    "test_accuracy": 0.8,
                    "suboptimality": 0.01,
                    "fstar": 0.3,
                    "params": params,
                    "job": str(job),
                }
            )
        )
        traces.append(
            pd.DataFrame(
                {
                    "fold": 0,
                    "rep": 0,
                    "iteration": [0, 1],
                    "train_objective": 0.31,
                    "epoch": [0, 3],
                    "test_accuracy": 0.8,
                    "job": str(job),
                }
            )
        )
    return Jobs(pd.concat(results, ignore_index=True), pd.concat(traces, ignore_index=True))


def _kusner_rows(length_scales) -> pd.DataFrame:
    metrics = dict.fromkeys(kusner.METRICS, 0.5)
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "algorithm": "kusner_alg1",
                    "dataset": "d",
                    "target": "svm_rbf",
                    "gain": "accuracy",
                    "eps": 1.0,
                    "rep": [job],
                    "validation_size": 100,
                    **metrics,
                    "params": json.dumps({"length_scale": scale}),
                }
            )
            for job, scale in enumerate(length_scales)
        ],
        ignore_index=True,
    )


def _chen_lee_fig1_rows(clips) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "variant": "default",
            "eps": 0.05,
            "test_accuracy": 0.8,
            "adaptive_clipping": False,
            "params": [
                json.dumps(
                    {
                        "alpha": 0.5,
                        "beta": 0.8,
                        "noise": "laplace",
                        "sampling_rate": 0.1,
                        "budget_strategy": "adap",
                        "zeta": 0.05,
                        "adaptive_clipping": False,
                        "clip_grad": clip,
                    }
                )
                for clip in clips
            ],
        }
    )


def _chen_lee_fig2_rows(eps) -> pd.DataFrame:
    return pd.DataFrame(
        {"eps": eps, "grad_evals": 10, "obj_evals": 5, "params": [json.dumps({"sampling_rate": 0.1})] * len(eps)}
    )


@pytest.mark.parametrize(
    "draw, same, mixed, named",
    [
        (kuru.fig3, lambda: _kuru_jobs([0.0, 0.0]), lambda: _kuru_jobs([0.0, 1.0]), r"p_initial_value \(0, 1\)"),
        (liu.fig2, lambda: _liu_jobs([20, 20]), lambda: _liu_jobs([20, 10]), r"p_n_nodes \(10, 20\)"),
        (
            kusner.utility,
            lambda: _kusner_rows([0.2, 0.2]),
            lambda: _kusner_rows([0.2, 0.5]),
            r"p_length_scale \(0.2, 0.5\)",
        ),
        (
            chen_lee.fig1,
            lambda: _chen_lee_fig1_rows([3.0, 3.0]),
            lambda: _chen_lee_fig1_rows([1.0, 3.0]),
            r"p_clip_grad \(1, 3\)",
        ),
        (
            chen_lee.fig2,
            lambda: _chen_lee_fig2_rows([0.4, 0.4]),
            lambda: _chen_lee_fig2_rows([0.4, 1.0]),
            r"eps \(0.4, 1\)",
        ),
    ],
)
def test_a_paper_figure_draws_one_configuration_per_curve_and_refuses_two(draw, same, mixed, named):
    draw(same())
    with pytest.raises(DpbenchError, match=named):
        draw(mixed())


def test_han_refuses_a_point_pooling_two_configurations(compose_run_config, tmp_path):
    from dpbench.engine import run_job

    pwa = (
        "dataset=synthetic_pwa",
        "model=pwa",
        "progress=false",
        "dataset.m=8",
        "dataset.d=3",
        "privacy.neighbouring=replace_one",
        "algorithm=pwa_subgradient",
        "algorithm.iterations=20",
        "reps=3",
    )
    for project in ("true", "false"):
        run_job(make_plan(compose_run_config(*pwa, f"algorithm.project={project}")), tmp_path / project)
    han.fig2(load_results([tmp_path / "true"]))
    with pytest.raises(DpbenchError, match=r"han_pwa, objective against box half-width c: .*p_project \(False, True\)"):
        han.fig2(load_results([tmp_path]))
