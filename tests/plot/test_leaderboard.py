"""The leaderboard: per-cell CIs and ranks, the Friedman test and Nemenyi CD by hand, refusals, the CLI."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpbench.errors import DpbenchError
from dpbench.plot.leaderboard import (
    cell_statistics,
    check_comparable,
    claim_lines,
    figure,
    rank_test,
    table,
)


def _rows(means: dict[tuple[str, float, str], float], reps: int = 4, relation: str = "add_remove") -> pd.DataFrame:
    """``reps`` rows per (dataset, ε, algorithm) at mean ± 0.01 (alternating), one config per cell."""
    rows = []
    for (dataset, eps, algorithm), mean in means.items():
        for r in range(reps):
            rows.append(
                {
                    "dataset": dataset,
                    "eps": eps,
                    "algorithm": algorithm,
                    "test_accuracy": mean + (0.01 if r % 2 else -0.01),
                    "private": algorithm not in ("nonprivate", "majority"),
                    "neighbouring": relation,
                    "config_hash": f"{algorithm}-{dataset}-{eps}",
                }
            )
    return pd.DataFrame(rows)


ORDER = {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}  # a always best
CELLS = [(ds, e) for ds in ("x", "y") for e in (0.1, 0.4, 1.6)]


def _board(swap_cd_in_y=False):
    means = {}
    for ds, e in CELLS:
        for m, v in ORDER.items():
            means[(ds, e, m)] = v
        if swap_cd_in_y and ds == "y":
            means[(ds, e, "c")], means[(ds, e, "d")] = 0.6, 0.7
        means[(ds, e, "nonprivate")] = 0.95
    return _rows(means)


def test_cells_have_t_intervals_and_ranks_among_private_methods():
    cells = cell_statistics(_board())
    a = cells[(cells["algorithm"] == "a") & (cells["dataset"] == "x") & (cells["eps"] == 0.1)].iloc[0]
    sd = np.std([0.89, 0.91, 0.89, 0.91], ddof=1)
    assert a["mean"] == pytest.approx(0.9) and a["rank"] == 1.0
    assert a["ci95"] == pytest.approx(stats.t.ppf(0.975, 3) * sd / 2)
    assert cells.loc[cells["algorithm"] == "nonprivate", "rank"].isna().all()


def test_friedman_and_nemenyi_by_hand():
    """k = 4 methods, N = 6 cells; c and d swap places in dataset y. Demšar 2006: q_0.05(4) = 2.569,
    CD = 2.569·√(4·5/36) = 1.915; χ²_F = 12N/(k(k+1))·(Σ R_j² − k(k+1)²/4)."""
    test = rank_test(cell_statistics(_board(swap_cd_in_y=True)))
    assert list(test["average_rank"].index) == ["a", "b", "c", "d"] or list(test["average_rank"].index) == [
        "a",
        "b",
        "d",
        "c",
    ]
    assert test["average_rank"]["a"] == 1.0 and test["average_rank"]["c"] == test["average_rank"]["d"] == 3.5
    ranks = np.array([1.0, 2.0, 3.5, 3.5])
    chi2 = 12 * 6 / (4 * 5) * (np.sum(ranks**2) - 4 * 25 / 4)
    assert test["friedman_statistic"] == pytest.approx(chi2)
    assert test["friedman_p"] == pytest.approx(stats.chi2.sf(chi2, 3))
    assert test["critical_difference"] == pytest.approx(2.569 * math.sqrt(20 / 36), abs=2e-3)
    text = table(_board(swap_cd_in_y=True))
    assert "| 1 | a | 1.00 | yes |" in text and "| 2 | b | 2.00 | yes |" in text  # 2 − 1 < CD = 1.91
    assert "| 3 | c | 3.50 | no |" in text or "| 3 | d | 3.50 | no |" in text
    assert "neighbouring relation `add_remove`" in text and "### x" in text and "0.900 ± 0.018 (#1)" in text


def test_incomplete_cells_are_left_out_of_the_test():
    board = _board()
    board = board[~((board["dataset"] == "y") & (board["eps"] == 1.6) & (board["algorithm"] == "d"))]
    assert rank_test(cell_statistics(board))["blocks"] == 5


def test_mixed_relations_or_configurations_are_refused():
    mixed = pd.concat([_rows({("x", 0.1, "a"): 0.9}), _rows({("x", 0.1, "b"): 0.8}, relation="replace_one")])
    with pytest.raises(DpbenchError, match=r"mix neighbouring relations: add_remove \(a\), replace_one \(b\)"):
        check_comparable(mixed)
    two_configs = _rows({("x", 0.1, "a"): 0.9})
    two_configs.loc[0, "config_hash"] = "other"
    with pytest.raises(DpbenchError, match=re.escape("more than one configuration, e.g. a on x at ε = 0.1")):
        table(two_configs)


def test_figure_draws_average_ranks():
    fig = figure(_board())
    height = {t.get_text(): t.get_position()[1] for t in fig.axes[0].get_yticklabels()}
    assert height["a"] > height["b"] > height["c"] > height["d"]  # the best at the top


@pytest.mark.slow
def test_cli_ranks_a_small_sweep(cli, tmp_path):
    """End to end: a 3-method × 2-ε sweep on small synthetic data, then dpbench-plot leaderboard."""
    sweep = tmp_path / "sweep"
    run = cli(
        [
            "-m",
            "algorithm=dp_sgd,dp_blgd,outpert_gd,nonprivate",
            "privacy.eps=0.5,2.0",
            "dataset.n=3000",
            "reps=2",
            "progress=false",
            f"hydra.sweep.dir={sweep}",
        ],
        tmp_path,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    plot = cli(["leaderboard", str(sweep), "--out", str(tmp_path / "f")], tmp_path, module="dpbench.plot")
    assert plot.returncode == 0, plot.stderr
    text = (tmp_path / "f" / "leaderboard.md").read_text()
    assert "3 private methods, 2 complete (dataset, ε) cells" in text and "| nonprivate |" in text
    assert (tmp_path / "f" / "leaderboard.png").stat().st_size > 5_000


def _tuned_board() -> pd.DataFrame:
    """_board() in three tuning modes: private a little below fixed, oracle above, c's oracle not private."""
    modes = []
    for mode, shift in (("private", -0.02), ("fixed", 0.0), ("oracle", 0.01)):
        rows = _board()
        rows["test_accuracy"] += np.where(rows["private"], shift, 0.0)
        rows["tuning"] = mode
        rows["guarantee_valid"] = mode != "oracle"
        rows["config_hash"] += f"-{mode}"
        modes.append(rows)
    return pd.concat(modes, ignore_index=True)


def test_each_tuning_mode_is_ranked_apart_and_the_oracle_is_never_ranked():
    board = _tuned_board()
    cells = cell_statistics(board)
    assert cells.loc[cells["tuning"] == "oracle", "rank"].isna().all()
    assert rank_test(cells)["mode"] == "private" and rank_test(cells, mode="fixed")["blocks"] == 6
    text = table(board)
    assert "tuning: private, fixed, oracle" in text
    assert (
        "| # | method | average rank (private) | within CD (private) | average rank (fixed) | within CD (fixed) |"
        in text
    )
    assert "| a | 0.880 | 0.900 | 0.910 | -0.020 | +0.030 | +0.010 | 6 |" in text  # what tuning costs
    assert "| method | ε = 0.1 private | ε = 0.1 fixed | ε = 0.1 oracle |" in text
    assert "0.910 ± 0.018 |" in text and "0.910 ± 0.018 (#" not in text  # the oracle cell has no rank
    fig = figure(board)
    assert {t.get_text() for t in fig.axes[0].get_legend().get_texts()} >= {"tuning=private", "tuning=fixed"}


def test_a_mode_with_two_configurations_is_refused():
    board = _tuned_board()
    board.loc[board.index[0], "config_hash"] = "other"
    with pytest.raises(DpbenchError, match="tuning=private"):
        check_comparable(board)


@pytest.mark.slow
def test_ci_runs_the_leaderboard_preset_with_private_tuning_end_to_end(cli, tmp_path):
    """experiment=leaderboard, shrunk: synthetic data, 2 methods + references, 2 ε, E[K] = 2, 2 folds; then
    dpbench-plot leaderboard. Every row within budget; oracle rows marked; private rows paid for tuning."""
    sweep = tmp_path / "sweep"
    run = cli(
        [
            "-m",
            "experiment=leaderboard",
            "dataset=synthetic_logreg",
            "dataset.n=3000",
            "algorithm=dp_sgd,outpert_gd,dp_gd,nonprivate",
            "privacy.eps=0.5,2.0",
            "cv.folds=2",
            "++tuning.trials_mean=2",
            "progress=false",
            f"hydra.sweep.dir={sweep}",
        ],
        tmp_path,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    rows = pd.concat([pd.read_parquet(p) for p in sweep.glob("*/results.parquet")], ignore_index=True)
    assert len(rows) == 4 * 2 * 3 * 2 and set(rows["tuning"]) == {"private", "fixed", "oracle"}
    private = rows[rows["private"]]
    assert (private["eps_spent"] <= private["eps"]).all() and (private["neighbouring"] == "add_remove").all()
    assert (~rows.loc[rows["tuning"] == "oracle", "guarantee_valid"]).all()
    tuned = private[(private["tuning"] == "private")]
    assert (tuned["eps_tuning"] > 0).all() and (tuned["eps_train"] < tuned["eps"]).all()
    plot = cli(["leaderboard", str(sweep), "--out", str(tmp_path / "f")], tmp_path, module="dpbench.plot")
    assert plot.returncode == 0, plot.stderr
    text = (tmp_path / "f" / "leaderboard.md").read_text()
    assert "3 private methods, 2 complete (dataset, ε) cells, neighbouring relation `add_remove`" in text
    assert "tuning: private, fixed, oracle" in text and "### What tuning costs" in text
    assert (tmp_path / "f" / "leaderboard.png").stat().st_size > 5_000


def test_the_papers_claims_are_checked_per_ranked_mode():
    """chen_lee's "DP-BLSGD and DP-BLGD beat DP-AGD" and kuru_acc's "-opt variants are the best two",
    computed from the rows of one tuning mode."""
    means = {}
    for e in (0.1, 1.6):
        means.update(
            {
                ("x", e, "dp_agd"): 0.80,
                ("x", e, "dp_blsgd"): 0.82 if e == 0.1 else 0.78,
                ("x", e, "dp_blgd"): 0.85,
                ("x", e, "majority"): 0.75,
            }
        )
        means.update(
            {
                ("x", e, m): 0.7 + 0.01 * i
                for i, m in enumerate(("dp_gd", "dp_hb", "dp_nag", "dp_masg", "dp_nag_opt", "dp_masg_opt"))
            }
        )
    text = "\n".join(claim_lines(_rows(means), "fixed"))
    assert "- dp_blsgd beats dp_agd in 1 of 2 settings: holds in part; not at x ε = 1.6 (0.780 vs 0.800)" in text
    assert "- dp_blgd beats dp_agd in 2 of 2 settings: holds" in text
    assert "- the two -opt methods are the top two in 2 of 2 settings: holds" in text
