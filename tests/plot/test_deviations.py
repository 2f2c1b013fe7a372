"""``dpbench-plot deviations``: each fidelity mode against ``correct`` with 95 % intervals,
the modes' declared changes, and chen_lee's claims per mode."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpbench.engine import run_job
from dpbench.errors import DpbenchError
from dpbench.jobs.plan import make_plan
from dpbench.plot import deviations


def _rows(values: dict[tuple[str, str, float], list[float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "paper": "chen_lee",
                "algorithm": algorithm,
                "dataset": "bank",
                "model": "logreg",
                "eps": eps,
                "delta": 1e-8,
                "neighbouring": "add_remove",
                "private": True,
                "fidelity": mode,
                "test_accuracy": v,
                "fold": i,
                "rep": 0,
                "config_hash": f"{algorithm}-{mode}-{eps}",
                "guarantee_valid": mode == "correct",
                "guarantee_note": "" if mode == "correct" else "fidelity=authors_code: broken",
            }
            for (algorithm, mode, eps), vs in values.items()
            for i, v in enumerate(vs)
        ]
    )


def test_the_difference_and_its_welch_interval_by_hand():
    a, b = [0.80, 0.82, 0.81, 0.83], [0.85, 0.86, 0.88, 0.87, 0.86]
    found = deviations.effects(_rows({("dp_agd", "correct", 0.1): a, ("dp_agd", "authors_code", 0.1): b}))
    (row,) = found.to_dict(orient="records")
    va, vb = np.var(b, ddof=1) / 5, np.var(a, ddof=1) / 4
    dof = (va + vb) ** 2 / (va**2 / 4 + vb**2 / 3)
    assert row["difference"] == pytest.approx(np.mean(b) - np.mean(a))
    assert row["difference_ci"] == pytest.approx(stats.t.ppf(0.975, dof) * math.sqrt(va + vb))
    assert row["correct_ci"] == pytest.approx(stats.t.ppf(0.975, 3) * np.std(a, ddof=1) / 2)
    assert row["significant"] and not row["guarantee"] and row["runs"] == 4


def test_a_point_without_a_correct_run_or_a_sweep_without_modes_is_refused():
    with pytest.raises(DpbenchError, match="nothing to compare"):
        deviations.effects(_rows({("dp_agd", "authors_code", 0.1): [0.8, 0.9]}))
    with pytest.raises(DpbenchError, match="no fidelity column"):
        deviations.effects(_rows({("dp_agd", "correct", 0.1): [0.8, 0.9]}).drop(columns="fidelity"))


def test_a_mode_world_takes_the_mode_where_a_method_has_it_and_correct_elsewhere():
    rows = _rows(
        {
            ("dp_agd", "correct", 0.1): [0.8],
            ("dp_agd", "authors_code", 0.1): [0.9],
            ("dp_blsgd", "correct", 0.1): [0.85],
        }
    )
    world = deviations.mode_rows(rows, "authors_code")
    assert sorted(zip(world["algorithm"], world["fidelity"])) == [("dp_agd", "authors_code"), ("dp_blsgd", "correct")]


def test_the_page_lists_the_changes_the_effects_and_the_claims_per_mode(compose_run_config, tmp_path):
    """Real runs: DP-AGD on the synthetic data in both modes, and DP-BLSGD in correct."""
    job = ("dataset.n=2000", "dataset.seed=1", "reps=3", "progress=false")
    frames = [
        run_job(make_plan(compose_run_config(*job, f"algorithm={a}", *extra)), tmp_path / name)
        for name, a, extra in (
            ("agd", "dp_agd", ()),
            ("agd_authors", "dp_agd", ("algorithm.fidelity=authors_code",)),
            ("blsgd", "dp_blsgd", ()),
        )
    ]
    rows = pd.concat(frames, ignore_index=True)
    page = deviations.table(rows)
    assert "## chen_lee: dp_agd, fidelity=authors_code\n\n**Not private**: fidelity=authors_code: the noisy min" in page
    assert "- the step applied is candidate idx − 1 of the chosen idx" in page
    assert "| synthetic_logreg | 1 |" in page
    assert "## chen_lee's claims, fidelity=correct" in page and "## chen_lee's claims, fidelity=authors_code" in page
    assert page.count("- dp_blsgd beats dp_agd in ") == 2  # the claim checked in each mode
    assert len(deviations.figure(rows).axes) == 1


def test_the_figure_draws_a_line_per_setting_and_never_pools_settings():
    rows = pd.concat(
        [
            _rows(
                {("dp_agd", "correct", e): [0.80, 0.82], ("dp_agd", "authors_code", e): [0.85 + shift, 0.87 + shift]}
            ).assign(p_splits=splits, config_hash=lambda d, s=splits: d["config_hash"] + f"-{s}")
            for splits, shift in ((30, 0.0), (60, 0.05))
            for e in (0.1, 0.4)
        ],
        ignore_index=True,
    )
    (ax,) = deviations.figure(rows).axes
    lines = {c.get_label(): list(c.lines[0].get_ydata()) for c in ax.containers}
    assert lines == {
        "dp_agd authors_code splits=30": pytest.approx([0.05, 0.05]),
        "dp_agd authors_code splits=60": pytest.approx([0.10, 0.10]),
    }


def test_kuru_claims_are_checked_per_mode_on_the_rows(compose_run_config, tmp_path):
    """Real runs of DP-GD and DP-NAG-opt on small synthetic data, T = 60, in correct and authors_code:
    the Sec 5 claims are checked in each mode, say which T ran, and authors_code's T' (its α/2 weights)
    is the one its rows recorded."""
    job = (
        "model=kuru_logreg",
        "dataset.n=2000",
        "dataset.seed=1",
        "reps=2",
        "cv.folds=1",
        "cv.test_fraction=0",
        "algorithm.iterations=60",
        "algorithm.smoothness=5.1033",
        "progress=false",
    )
    frames = [
        run_job(
            make_plan(compose_run_config(*job, f"algorithm={a}", f"algorithm.fidelity={mode}")),
            tmp_path / f"{a}_{mode}",
        )
        for a in ("dp_gd", "dp_nag_opt")
        for mode in ("correct", "authors_code")
    ]
    rows = pd.concat(frames, ignore_index=True)
    page = deviations.table(rows)
    for mode in ("correct", "authors_code"):
        section = page.split(f"## kuru_acc's claims, fidelity={mode}\n\n")[1].split("\n## ")[0]
        assert section.startswith("Best over T is over the T that ran: 60.")
        assert (
            "**(a) accelerated methods (DP-HB, DP-NAG, DP-NAG-opt) beat DP-GD, best over T, m = n = 2000: " in section
        )
        t_run = rows.loc[(rows["algorithm"] == "dp_nag_opt") & (rows["fidelity"] == mode), "n_iterations"].mean()
        assert f"DP-NAG-opt T = 60: mean T' = {t_run:.1f}" in section


def test_han_points_are_kept_apart_by_instance_and_compared_on_mean_suboptimality():
    """Two han_pwa instances (c = 1, 10) in one sweep are two points; the headline is the mean of f − f*,
    which may be negative (a release off P) or 0, never its log."""
    rows = pd.DataFrame(
        [
            {
                "paper": "han_pwa",
                "algorithm": "pwa_laplace_solution",
                "dataset": "synthetic_pwa",
                "model": "pwa",
                "eps": 0.1,
                "delta": 0.0,
                "neighbouring": "replace_one",
                "private": True,
                "fidelity": mode,
                "pwa_m": 50,
                "pwa_d": 10,
                "pwa_c": c,
                "suboptimality": v * c * (3.0 if mode == "paper" else 1.0),
                "test_accuracy": math.nan,
                "guarantee_valid": True,
                "guarantee_note": "",
            }
            for c in (1.0, 10.0)
            for mode in ("correct", "paper")
            for v in (-2.0, 0.0, 5.0)
        ]
    )
    found = deviations.effects(rows).sort_values("pwa_c")
    assert list(found["pwa_c"]) == [1.0, 10.0] and set(found["metric"]) == {"mean f(x) − f*"}
    assert list(found["correct"]) == pytest.approx([1.0, 10.0]) and list(found["difference"]) == pytest.approx(
        [2.0, 20.0]
    )
    assert "| synthetic_pwa | 0.1 | pwa_c=1 |" in deviations.table(rows)


def test_points_of_two_models_are_labelled_by_model():
    rows = _rows({("dp_agd", "correct", 0.1): [0.80, 0.82], ("dp_agd", "authors_code", 0.1): [0.85, 0.86]})
    rows = pd.concat([rows, rows.assign(model="svm", test_accuracy=rows["test_accuracy"] - 0.1)], ignore_index=True)
    page = deviations.table(rows)
    assert "| bank | 0.1 | model=logreg | 0.810" in page and "| bank | 0.1 | model=svm | 0.710" in page


def test_claims_compare_with_the_majority_class_of_the_baseline_rows():
    """The majority class (paper "baseline") is part of chen_lee's claim rows: "weak at small ε" reads its
    accuracy (it was NaN when only chen_lee's rows were kept)."""
    rows = _rows(
        {
            ("dp_agd", "correct", 0.05): [0.80, 0.82],
            ("dp_agd", "authors_code", 0.05): [0.85, 0.86],
            ("objpert", "correct", 0.05): [0.70, 0.72],
        }
    )
    majority = _rows({("majority", "correct", 0.05): [0.75, 0.75]}).assign(paper="baseline", private=False)
    page = deviations.table(pd.concat([rows, majority], ignore_index=True))
    assert "bank ε = 0.05 (majority 0.750): objpert" in page and "majority nan" not in page
