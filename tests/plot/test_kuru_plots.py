"""kuru_acc figures: analytic Figs 1–2 against hand-computed values, Figs 3–4 and their summary on
tiny fake sweep directories whose numbers are known."""

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

from dpbench.errors import DpbenchError
from dpbench.plot import kuru
from dpbench.plot.cli import main
from dpbench.plot.io import load_jobs

FSTAR = 0.5


def _gaps(method: str, T: int, c: float) -> list[float]:
    """Final F(x_T) − F* of the two reps: the -opt method is 10× better than DP-GD, c = 1 is 100×
    better than c = 0.1, and T = 100 beats T = 200 for DP-NAG-opt only."""
    base = 1e-2 if method == "dp_gd" else 1e-3
    base *= 1e-2 if c == 1.0 else 1.0
    if method != "dp_gd" and T == 200:
        base *= 3.0
    return [base, 3.0 * base]


def _write_sweep(
    root,
    methods=("dp_gd", "dp_nag_opt"),
    Ts=(100, 200),
    cs=(0.1, 1.0),
    batch_size=None,
    gaps=_gaps,
    t_run=lambda method, T: T // 2 if method.endswith("_opt") else T,
):
    """One job directory per (method, T, c) with results.parquet (2 reps) and trace.parquet."""
    for j, (method, T, c) in enumerate((m, T, c) for m in methods for T in Ts for c in cs):
        job = root / str(j)
        job.mkdir(parents=True)
        params = json.dumps({"iterations": T, "step_scale": c, "batch_size": batch_size}, sort_keys=True)
        finals = gaps(method, T, c)
        n_it = t_run(method, T)
        pd.DataFrame(
            {
                "algorithm": method,
                "dataset": "synthetic_logreg",
                "eps": 1.0,
                "fold": 0,
                "rep": [0, 1],
                "fstar": FSTAR,
                "n_iterations": n_it,
                "train_objective": [FSTAR + g for g in finals],
                "params": params,
                "n_train": 1000,
            }
        ).to_parquet(job / "results.parquet")
        rows = []
        for rep, final in enumerate(finals):
            t = np.arange(n_it + 1)
            gap = 10.0 * (final / 10.0) ** (t / n_it)  # geometric from 10 at t = 0 to the final gap
            rows.append(
                pd.DataFrame(
                    {
                        "fold": 0,
                        "rep": rep,
                        "iteration": t,
                        "train_objective": FSTAR + gap,
                        "algorithm": method,
                        "dataset": "synthetic_logreg",
                        "eps": 1.0,
                    }
                )
            )
        pd.concat(rows).to_parquet(job / "trace.parquet")
    return root


def _cell(gaps: list[float]) -> str:
    """The summary cell computed independently: log10 of the mean, ± std (ddof 1) of the log10s."""
    logs = np.log10(gaps)
    return f"{math.log10(np.mean(gaps)):.3f} ± {np.std(logs, ddof=1):.3f}"


def _verdict(text: str, claim: str) -> str:
    line = next(line for line in text.splitlines() if line.startswith(f"**{claim}"))
    return line.rsplit(": ", 1)[1].rstrip("*")


# ----------------------------------------------------------------------------- Fig. 1
def test_rate_at_beta_zero_is_gradient_descent_contraction():
    for alpha in (0.1, 0.5, 1.0, 1.5):
        expected = max(abs(1 - alpha * 0.5), abs(1 - alpha * 1.0))
        assert kuru.hb_rate(alpha, [0.0])[0] == pytest.approx(expected, abs=1e-12)
    # α = 1, β = 1/4: both eigenvalues give complex roots, |a| = √β = 0.5
    assert kuru.hb_rate(1.0, [0.25])[0] == pytest.approx(0.5, abs=1e-12)


def test_rate_optimal_beta_matches_grid_argmin():
    grid = np.linspace(0.0, 0.999, 99_901)
    for alpha in kuru.FIG1_ALPHAS:
        rho = kuru.hb_rate(alpha, grid)
        b_star = kuru.rate_optimal_beta(alpha, 0.5)
        assert grid[np.argmin(rho)] == pytest.approx(b_star, abs=2e-5)
        assert kuru.hb_rate(alpha, [b_star])[0] == pytest.approx(1 - math.sqrt(alpha * 0.5), abs=1e-12)
        assert rho.min() >= 1 - math.sqrt(alpha * 0.5) - 1e-12


def test_bound_317_at_one_hand_computed_point():
    # α = 1, β = 0, T = 1, c_w = 0.1: ρ = 0.5, σ² = 0.01, V = 10 + 0.01/0.75, m = 0.005·(2/0.75 + 2)
    expected = (10 + 0.01 / 0.75) * 0.25 + 1.0 * 0.005 * (2 / 0.75 + 2)
    assert kuru.hb_bound(1.0, 0.0, 1, 0.1) == pytest.approx(expected, rel=1e-12)


@pytest.mark.slow
def test_analytic_figures_need_no_results(tmp_path, capsys):
    main(["kuru.fig1", "--out", str(tmp_path)])
    main(["kuru.fig2", "--out", str(tmp_path)])
    assert "analytic" in capsys.readouterr().out
    for name in ("kuru_fig1", "kuru_fig2"):
        assert (tmp_path / f"{name}.png").stat().st_size > 10_000
        assert (tmp_path / f"{name}.pdf").is_file()


# ----------------------------------------------------------------------------- Fig. 2
def test_fig2_noise_falls_within_each_stage_and_spends_the_budget():
    schedules = kuru.fig2_schedules()
    assert [T for T, _, _ in schedules] == [54, 134, 294, 614]  # n₁ = 14, stage k adds 2^k·10
    for T, stages, b in schedules:
        assert len(b) == len(stages) == T and stages[-1] == stages.max()
        for s in np.unique(stages):
            assert np.all(np.diff(b[stages == s]) < 0)
        # m = n: ε_t = S₁/(n b_t) sums to ε
        assert np.sum(kuru.FIG2_S1 / (kuru.FIG2_N * b)) == pytest.approx(kuru.FIG2_EPS, rel=1e-9)


# ----------------------------------------------------------------------------- Figs 3–4
def test_fig3_writes_figure_and_summary_with_independent_numbers(tmp_path, capsys):
    sweep = _write_sweep(tmp_path / "sweep")
    main(["kuru.fig3", str(sweep), "--out", str(tmp_path / "f")])
    assert "16 result rows" in capsys.readouterr().out
    assert (tmp_path / "f" / "kuru_fig3.png").stat().st_size > 10_000
    assert (tmp_path / "f" / "kuru_fig3.pdf").is_file()
    text = (tmp_path / "f" / "kuru_fig3.md").read_text()
    assert "## m = n = 1000, c = 0.1" in text and "## m = n = 1000, c = 1" in text
    for c in (0.1, 1.0):
        section = text.split(f"## m = n = 1000, c = {c:g}\n")[1].split("## ")[0]
        for method, label in (("dp_gd", "DP-GD"), ("dp_nag_opt", "DP-NAG-opt")):
            cells = [_cell(_gaps(method, T, c)) for T in (100, 200)]
            assert f"| {label} | {cells[0]} | {cells[1]} |" in section
        assert "| DP-HB | not run | not run |" in section
        assert "| DP-NAG-opt | 50.0 | 100.0 |" in section  # mean T'
        assert "| DP-MASG-opt | not run | not run |" in section
    assert _verdict(text, "(a)") == "HOLDS"
    assert _verdict(text, "(b)") == "NOT TESTABLE"
    assert _verdict(text, "(c)") == "HOLDS"
    # the evidence of (a) at c = 1: best over T of each method, computed here
    gd = min(math.log10(np.mean(_gaps("dp_gd", T, 1.0))) for T in (100, 200))
    nag = math.log10(np.mean(_gaps("dp_nag_opt", 100, 1.0)))
    assert f"c = 1: DP-NAG-opt best {nag:.3f} (T = 100) vs DP-GD best {gd:.3f} (T = 100): beats" in text


def test_mean_traces_average_before_the_log(tmp_path):
    jobs = load_jobs([_write_sweep(tmp_path / "sweep")])
    curves = kuru.mean_traces(jobs)
    row = curves[(curves["algorithm"] == "dp_gd") & (curves["c"] == 1.0) & (curves["T"] == 100)]
    assert list(row["iteration"]) == list(range(101))
    assert row["log_gap"].iloc[0] == pytest.approx(1.0)
    assert row["log_gap"].iloc[-1] == pytest.approx(math.log10(np.mean(_gaps("dp_gd", 100, 1.0))))


def test_claims_flip_when_the_data_disagree(tmp_path):
    def gd_wins(method, T, c):
        return [1e-6, 2e-6] if method == "dp_gd" else [1e-3, 2e-3]

    text = kuru.summary(load_jobs([_write_sweep(tmp_path / "a", gaps=gd_wins, t_run=lambda m, T: T)]))
    assert _verdict(text, "(a)") == "FAILS" and "does not beat" in text
    assert _verdict(text, "(c)") == "FAILS" and "mean T' = 100.0 = 100" in text

    # (b): with three methods at c = 1 the two -opt ones must be the two lowest
    methods = ("dp_gd", "dp_nag_opt", "dp_masg_opt")
    text = kuru.summary(load_jobs([_write_sweep(tmp_path / "b", methods=methods)]))
    assert _verdict(text, "(b)") == "HOLDS"
    text = kuru.summary(load_jobs([_write_sweep(tmp_path / "c", methods=methods, gaps=gd_wins)]))
    assert _verdict(text, "(b)") == "FAILS"
    assert "#1: DP-GD" in text


def test_mixed_batch_sizes_are_refused_naming_them(tmp_path):
    _write_sweep(tmp_path / "s" / "full")
    _write_sweep(tmp_path / "s" / "mini", batch_size=100)
    with pytest.raises(DpbenchError, match=r"batch sizes \(m = 100, n = 1000, m = n = 1000\)"):
        kuru.fig3(load_jobs([tmp_path / "s"]))


def test_fig4_labels_the_batch_size_and_missing_trace_fails_clearly(tmp_path):
    sweep = _write_sweep(tmp_path / "s", batch_size=100, Ts=(100,), cs=(1.0,))
    text = kuru.summary(load_jobs([sweep]))
    assert "## m = 100, n = 1000, c = 1" in text and "| T = 100 |" in text
    (sweep / "0" / "trace.parquet").unlink()
    with pytest.raises(DpbenchError, match=re.escape("no trace.parquet")):
        load_jobs([sweep])
