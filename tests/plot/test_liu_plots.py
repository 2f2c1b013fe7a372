"""liu_dda Figs 1–4 (Sec. 5) and their summary on hand-built results and traces whose numbers are
known: figure structure, the plotted values, and claims whose verdicts flip with the data."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

from dpbench.errors import DpbenchError
from dpbench.plot import liu
from dpbench.plot.cli import main
from dpbench.plot.io import Jobs, load_jobs
from dpbench.plot.registry import FIGURES

FSTAR = 0.3
ONE, TWO, ALL = ("dp_dda", 1), ("dp_dda", 2), ("dp_dda_all_nodes", None)
IOTA = {ONE: 0.1, TWO: 0.19048, ALL: 1.0}
LABELS = {ONE: "Alg. 1, 1 edge (ι = 0.10)", TWO: "Alg. 1, 2 edges (ι = 0.19)", ALL: "all nodes [19] (ι = 1)"}
SPREAD = np.array([-1.5, -0.5, 0.5, 1.5])  # per-rep offsets: 4 reps, known mean and std
EPOCHS = np.linspace(0.0, 3.0, 7)  # recorded points of a run
EPS5 = (0.2, 0.4, 0.6, 0.8, 1.0)


def paper_gap(method, eps):
    """Final suboptimality as the paper reports it: Alg. 1 below [19], 1 edge below 2 edges, all
    falling with ε, and the ratio [19] / Alg. 1 = 10/ε (1 edge) or 5/ε (2 edges) largest at small ε."""
    return {ONE: 0.02 / eps, TWO: 0.04 / eps, ALL: 0.2 / eps**2}[method]


def paper_acc(method, eps):
    return {ONE: 0.85, TWO: 0.80, ALL: 0.70}[method] + 0.01 * eps


def _finals(base: float, rel: float = 0.05) -> np.ndarray:
    return base * (1.0 + rel * SPREAD)


def make_jobs(
    eps_values=EPS5,
    methods=(ONE, TWO, ALL),
    gap=paper_gap,
    acc=paper_acc,
    dataset="adult",
    model="liu_l2_svm",
    trace_iota=True,
) -> Jobs:
    """One job per (method, ε), 4 reps each; traces fall geometrically to the final gap over 3 epochs."""
    results, traces = [], []
    for (algorithm, n_edges), eps in ((m, e) for m in methods for e in eps_values):
        job = f"{algorithm}_{n_edges}_{eps:g}"
        params = {"epochs": 3, "iterations": None, "lipschitz": None, "n_nodes": 20, "noise": "rdp"}
        if n_edges is not None:
            params["n_edges"] = n_edges
        gaps = _finals(gap((algorithm, n_edges), eps))
        accs = acc((algorithm, n_edges), eps) + 0.005 * SPREAD
        results.append(
            pd.DataFrame(
                {
                    "algorithm": algorithm,
                    "dataset": dataset,
                    "model": model,
                    "eps": eps,
                    "fold": 0,
                    "rep": range(4),
                    "test_accuracy": accs,
                    "suboptimality": gaps,
                    "train_objective": FSTAR + gaps,
                    "fstar": FSTAR,
                    "params": json.dumps(params, sort_keys=True),
                    "experiment": "liu_test",
                    "job": job,
                }
            )
        )
        per_epoch = {1: 1000, 2: 526, None: 100}[n_edges]
        for rep, (g, a) in enumerate(zip(gaps, accs)):
            frame = pd.DataFrame(
                {
                    "fold": 0,
                    "rep": rep,
                    "iteration": np.rint(EPOCHS * per_epoch).astype(int),
                    "train_objective": FSTAR + g * 10.0 ** (1.0 - EPOCHS / 3.0),
                    "eps_spent": eps * EPOCHS / 3.0,
                    "epoch": EPOCHS,
                    "test_accuracy": 0.5 + (a - 0.5) * EPOCHS / 3.0,
                    "eps_hat": eps * EPOCHS / 3.0,
                    "algorithm": algorithm,
                    "dataset": dataset,
                    "eps": eps,
                    "job": job,
                }
            )
            if trace_iota:
                frame["iota"] = IOTA[(algorithm, n_edges)]
            traces.append(frame)
    return Jobs(pd.concat(results, ignore_index=True), pd.concat(traces, ignore_index=True))


def verdict(text: str, claim: str) -> str:
    line = next(line for line in text.splitlines() if line.startswith(f"**{claim}"))
    return line.rsplit(": ", 1)[1].rstrip("*")


def legend_lines(ax) -> dict[str, object]:
    handles, labels = ax.get_legend_handles_labels()
    return dict(zip(labels, handles))


# ----------------------------------------------------------------------------- registry
def test_registry_exposes_the_four_liu_figures():
    for k, draw in ((1, liu.fig1), (2, liu.fig2), (3, liu.fig1), (4, liu.fig2)):
        recipe = FIGURES[f"liu.fig{k}"]
        assert recipe.draw is draw and recipe.table is liu.summary and recipe.load is load_jobs
        assert recipe.filename == f"liu_fig{k}"


# ----------------------------------------------------------------------------- Figs 1 and 3
def test_fig1_has_two_panels_and_one_mean_line_per_method():
    fig = liu.fig1(make_jobs(eps_values=(0.8,)))
    assert isinstance(fig, Figure)
    ax_gap, ax_acc = fig.axes
    assert ax_gap.get_yscale() == "log" and ax_acc.get_yscale() == "linear"
    for ax in (ax_gap, ax_acc):
        assert list(legend_lines(ax)) == [LABELS[ONE], LABELS[TWO], LABELS[ALL]]
        assert len(ax.collections) == 3  # a std band per method
    # the 1-edge curve: x = recorded epochs, y = mean over reps of F − F* (geometric from 10× to the final gap)
    line = legend_lines(ax_gap)[LABELS[ONE]]
    np.testing.assert_allclose(line.get_xdata(), EPOCHS)
    expected = _finals(paper_gap(ONE, 0.8)).mean() * 10.0 ** (1.0 - EPOCHS / 3.0)
    np.testing.assert_allclose(line.get_ydata(), expected, rtol=1e-9)
    acc_line = legend_lines(ax_acc)[LABELS[TWO]]
    assert acc_line.get_ydata()[-1] == pytest.approx(paper_acc(TWO, 0.8))
    title = fig._suptitle.get_text()
    assert "Fig. 1" in title and "ℓ2-SVM" in title and "adult" in title and "ε = 0.8" in title


def test_fig3_title_names_the_l1_model_and_negative_gaps_are_floored():
    jobs = make_jobs(eps_values=(0.4,), gap=lambda m, e: -1e-3 if m == ONE else paper_gap(m, e), model="liu_l1_svm")
    fig = liu.fig1(jobs)
    assert "Fig. 3" in fig._suptitle.get_text() and "ℓ1-SVM" in fig._suptitle.get_text()
    y = legend_lines(fig.axes[0])[LABELS[ONE]].get_ydata()
    assert np.all(y == liu.GAP_FLOOR)


def test_fig1_refuses_mixed_eps_and_datasets():
    with pytest.raises(DpbenchError, match=r"privacy budgets ε \(0.4, 0.8\).*one preset's sweep"):
        liu.fig1(make_jobs(eps_values=(0.4, 0.8)))
    a, b = make_jobs(eps_values=(0.8,)), make_jobs(eps_values=(0.8,), dataset="rcv1")
    mixed = Jobs(
        pd.concat([a.results, b.results.assign(job=b.results["job"] + "r")]),
        pd.concat([a.traces, b.traces.assign(job=b.traces["job"] + "r")]),
    )
    with pytest.raises(DpbenchError, match=r"datasets \(adult, rcv1\)"):
        liu.fig1(mixed)
    with pytest.raises(DpbenchError, match="datasets"):
        liu.fig2(mixed)


def test_iota_comes_from_the_trace_or_else_from_n_edges():
    traced = liu.method_runs(make_jobs(eps_values=(0.8,)))
    untraced = liu.method_runs(make_jobs(eps_values=(0.8,), trace_iota=False))
    for runs in (traced, untraced):
        by_method = runs.groupby("method")["iota"].mean()
        assert by_method["dp_dda/1"] == pytest.approx(0.1)
        assert by_method["dp_dda/2"] == pytest.approx(1 - math.comb(171, 2) / math.comb(190, 2), abs=1e-5)  # 0.19048
        assert by_method["dp_dda_all_nodes"] == 1.0
        assert set(runs["label"]) == set(LABELS.values())


# ----------------------------------------------------------------------------- Figs 2 and 4
def test_fig2_plots_mean_and_standard_error_against_eps():
    fig = liu.fig2(make_jobs())
    ax_gap, ax_acc = fig.axes
    assert ax_gap.get_yscale() == "log" and ax_gap.get_xlabel() == "ε"
    assert list(legend_lines(ax_gap)) == [LABELS[ONE], LABELS[TWO], LABELS[ALL]]
    assert len(legend_lines(ax_acc)) == 3
    container = legend_lines(ax_gap)[LABELS[ALL]]  # an ErrorbarContainer: (data line, caps, bars)
    line = container[0]
    np.testing.assert_allclose(line.get_xdata(), EPS5)
    np.testing.assert_allclose(line.get_ydata(), [_finals(paper_gap(ALL, e)).mean() for e in EPS5])
    segments = container[2][0].get_segments()
    se = np.std(_finals(paper_gap(ALL, 0.2)), ddof=1) / 2.0  # 4 runs
    assert segments[0][1, 1] - segments[0][0, 1] == pytest.approx(2 * se)
    assert "Fig. 2" in fig._suptitle.get_text()
    assert "Fig. 4" in liu.fig2(make_jobs(model="liu_l1_svm"))._suptitle.get_text()


# ----------------------------------------------------------------------------- summary
def test_summary_table_has_independent_numbers_and_claims_hold_on_paper_like_data():
    text = liu.summary(make_jobs())
    assert "## ε = 0.2" in text and "## ε = 1" in text and "after 3 epochs" in text
    g = _finals(paper_gap(ONE, 0.4))
    a = paper_acc(ONE, 0.4) + 0.005 * SPREAD
    cell = (
        f"| {LABELS[ONE]} | 4 | {g.mean():.4g} ± {g.std(ddof=1) / 2:.4g} | {a.mean():.4g} ± {a.std(ddof=1) / 2:.4g} |"
    )
    assert cell in text.split("## ε = 0.4\n")[1]
    for claim in ("(A)", "(A′)", "(B)", "(C)", "(D)"):
        assert verdict(text, claim) == "HOLDS", claim
    assert "r(0.2) = 50, r(0.4) = 25" in text  # 1 edge: r = 10/ε
    assert "Spearman ρ(r, ε) = -1.00" in text


def test_claim_a_fails_when_the_baseline_wins_and_is_partly_when_it_wins_at_small_eps():
    baseline_best = lambda m, e: 0.01 if m == ALL else paper_gap(m, e)
    text = liu.summary(make_jobs(gap=baseline_best, acc=lambda m, e: 0.9 if m == ALL else 0.7))
    assert verdict(text, "(A)") == "FAILS" and verdict(text, "(A′)") == "FAILS"
    assert "does not beat" in text

    # [19] at 0.05 everywhere; Alg. 1 worse at ε ≤ 0.4, better from 0.6 on, at 0.8 within noise for 2 edges
    def crossing(m, e):
        return 0.05 if m == ALL else {ONE: 0.03, TWO: 0.048}[m] * (1.0 if e >= 0.6 else 4.0)

    text = liu.summary(make_jobs(gap=crossing))
    assert verdict(text, "(A)") == "PARTLY"
    failed = next(line for line in text.splitlines() if line.startswith("- does not beat at:"))
    assert "ε = 0.2, " + LABELS[ONE] in failed and "ε = 0.4, " + LABELS[TWO] in failed
    assert "ε = 0.8, " + LABELS[TWO] in failed and "ε = 0.8, " + LABELS[ONE] not in failed
    assert verdict(text, "(B)") == "FAILS"  # the advantage is at large ε here


def test_claim_b_fails_when_the_advantage_grows_with_eps():
    def growing(m, e):
        return {ONE: 0.02, TWO: 0.04, ALL: 0.2 * e}[m]  # r = 10ε, 5ε

    text = liu.summary(make_jobs(gap=growing))
    assert verdict(text, "(B)") == "FAILS"
    assert "Spearman ρ(r, ε) = 1.00: not larger at small ε" in text
    assert verdict(text, "(D)") == "FAILS"  # Alg. 1 flat, [19] rising in ε


def test_claim_c_flips_and_reports_no_difference():
    reversed_iota = lambda m, e: {ONE: 0.04, TWO: 0.02, ALL: 0.2}[m]
    assert verdict(liu.summary(make_jobs(eps_values=(0.8,), gap=reversed_iota)), "(C)") == "FAILS"
    equal = lambda m, e: {ONE: 0.02, TWO: 0.0201, ALL: 0.2}[m]
    text = liu.summary(make_jobs(eps_values=(0.8,), gap=equal))
    assert verdict(text, "(C)") == "NO MEASURABLE DIFFERENCE"
    assert "(B)" not in text and "(D)" not in text  # one ε: no trend claims
    assert verdict(liu.summary(make_jobs(eps_values=(0.8,))), "(C)") == "HOLDS"


def test_missing_baseline_cannot_be_evaluated_but_the_rest_still_works():
    jobs = make_jobs(methods=(ONE, TWO))
    text = liu.summary(jobs)
    for claim in ("(A)", "(A′)", "(B)"):
        assert verdict(text, claim) == "CANNOT BE EVALUATED"
    assert "cannot be evaluated: no runs of the all-nodes baseline [19]" in text
    assert verdict(text, "(C)") == "HOLDS" and verdict(text, "(D)") == "HOLDS"
    assert len(legend_lines(liu.fig2(jobs).axes[0])) == 2
    assert len(legend_lines(liu.fig1(make_jobs(eps_values=(0.4,), methods=(ONE, TWO))).axes[0])) == 2


def test_unsuitable_results_fail_clearly():
    jobs = make_jobs(eps_values=(0.8,))
    with pytest.raises(DpbenchError, match="no runs of dp_dda or dp_dda_all_nodes"):
        liu.summary(Jobs(jobs.results.assign(algorithm="dp_sgd"), jobs.traces))
    with pytest.raises(DpbenchError, match=r"lack column.*fstar"):
        liu.fig2(Jobs(jobs.results.drop(columns="fstar"), jobs.traces))
    with pytest.raises(DpbenchError, match=r"traces lack column.*epoch"):
        liu.fig1(Jobs(jobs.results, jobs.traces.drop(columns="epoch")))


# ----------------------------------------------------------------------------- CLI
def _write(jobs: Jobs, root):
    for job, results in jobs.results.groupby("job"):
        (root / job).mkdir(parents=True)
        results.drop(columns="job").to_parquet(root / job / "results.parquet")
        jobs.traces[jobs.traces["job"] == job].drop(columns="job").to_parquet(root / job / "trace.parquet")
    return root


@pytest.mark.parametrize("name, eps_values", [("liu.fig1", (0.8,)), ("liu.fig2", EPS5)])
def test_cli_writes_figure_and_summary_from_parquet_jobs(tmp_path, capsys, name, eps_values):
    sweep = _write(make_jobs(eps_values=eps_values), tmp_path / "sweep")
    main([name, str(sweep), "--out", str(tmp_path / "f")])
    assert f"{3 * 4 * len(eps_values)} result rows" in capsys.readouterr().out
    stem = name.replace(".", "_")
    assert (tmp_path / "f" / f"{stem}.png").stat().st_size > 10_000
    assert (tmp_path / "f" / f"{stem}.pdf").is_file()
    text = (tmp_path / "f" / f"{stem}.md").read_text()
    assert verdict(text, "(A)") == "HOLDS" and verdict(text, "(C)") == "HOLDS"


def test_cli_reports_mixed_eps_for_fig1(tmp_path, capsys):
    sweep = _write(make_jobs(eps_values=(0.4, 0.8)), tmp_path / "sweep")
    with pytest.raises(SystemExit) as exc:
        main(["liu.fig3", str(sweep), "--out", str(tmp_path / "f")])
    assert exc.value.code == 2
    assert "one preset's sweep" in capsys.readouterr().err
