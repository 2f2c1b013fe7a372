"""Figures of liu_dda (Liu, Johansson & Shi, "Differentially private distributed dual averaging",
Sec. 5, Figs 1–4) and their summary, from the runs of ``experiment=liu_fig1`` … ``liu_fig4``.

* Figs 1 and 3 (:func:`fig1`; ℓ2-SVM at ε = 0.8, ℓ1-SVM at ε = 0.4): (a) suboptimality
  F(x̄) − F* and (b) test accuracy against epochs, a line per method (mean over runs at each
  recorded iteration) with a ±1 std band, from the traces.
* Figs 2 and 4 (:func:`fig2`; ℓ2 and ℓ1): (a) final suboptimality and (b) final test accuracy
  (after the run's 3 epochs) against ε, mean ± standard error over runs, from the results rows.
* :func:`summary`: a table per ε and the Sec. 5 claims, each with a verdict computed from the runs:
  (A) node subsampling beats the all-nodes baseline [19]; (B) more so at small ε; (C) the larger ι
  has the higher utility loss (Figs 1, 3); (D) the utility loss falls as ε grows (Figs 2, 4).

A method is (algorithm, n_edges): ``dp_dda`` is Algorithm 1 sampling ``n_edges`` edges of the
complete graph per iteration (ι = 0.10 for one edge, 0.19 for two at n = 20), ``dp_dda_all_nodes``
the baseline of ref. [19] (every node active, ι = 1). ι is read from the traces' ``iota`` column,
else computed from ``n_nodes`` and ``n_edges`` in the run's params.

Suboptimality is plotted on a log axis: means (and band edges) that are not above
:data:`GAP_FLOOR` are drawn at it (F* is a numerical optimum; a tiny or negative gap is noise).
"""

from __future__ import annotations

import json
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dpbench.algorithms.base import Look
from dpbench.dda.gossip import activation_probability
from dpbench.errors import DpbenchError
from dpbench.plot.configs import check_one_configuration
from dpbench.plot.io import Jobs
from dpbench.plot.style import style

__all__ = ["GAP_FLOOR", "claims", "curves", "fig1", "fig2", "final_stats", "method_runs", "summary"]

SUBSAMPLED, BASELINE = "dp_dda", "dp_dda_all_nodes"
GAP_FLOOR = 1e-12  # non-positive (or smaller) suboptimality is drawn at this value on the log axis
#: Algorithm 1 with one edge in DP-DDA's style (:mod:`dpbench.plot.style`), with two edges in its colour, dashed
STYLES = {
    "dp_dda/1": style(SUBSAMPLED),
    "dp_dda/2": Look(style(SUBSAMPLED).colour, "s", "--"),
    BASELINE: style(BASELINE),
}
OTHER_STYLE = Look(style(SUBSAMPLED).colour, "D", ":")  # any other n_edges
MODELS = {"liu_l2_svm": ("ℓ2-SVM", "Fig. 1", "Fig. 2"), "liu_l1_svm": ("ℓ1-SVM", "Fig. 3", "Fig. 4")}
SE_MARGIN = 2.0  # "beats" = better by more than this many combined standard errors
RESULT_COLUMNS = (
    "algorithm",
    "dataset",
    "model",
    "eps",
    "fold",
    "rep",
    "test_accuracy",
    "suboptimality",
    "fstar",
    "params",
)
TRACE_COLUMNS = ("fold", "rep", "iteration", "train_objective", "epoch", "test_accuracy")
HINT = "run `dpbench -m experiment=liu_fig1` (… liu_fig4) first"


# ============================================================================= data
def _method_key(algorithm: str, params: dict) -> str:
    """``dp_dda/<n_edges>`` for Algorithm 1, ``dp_dda_all_nodes`` for the baseline [19]."""
    if algorithm == BASELINE:
        return BASELINE
    return f"{SUBSAMPLED}/{int(params.get('n_edges', 1))}"


def _n_edges(method: str) -> int | None:
    return None if method == BASELINE else int(method.split("/")[1])


def label(method: str, iota: float) -> str:
    """The legend text: "Alg. 1, 1 edge (ι = 0.10)", "all nodes [19] (ι = 1)"."""
    if method == BASELINE:
        return "all nodes [19] (ι = 1)"
    k = _n_edges(method)
    return f"Alg. 1, {k} edge{'s' if k != 1 else ''} (ι = {iota:.2f})"


def _order(method: str) -> tuple[int, int]:
    """Algorithm 1 by increasing n_edges (so ι), then the baseline."""
    return (1, 0) if method == BASELINE else (0, _n_edges(method))


def _require(df: pd.DataFrame, columns, what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise DpbenchError(
            f"the {what} lack column(s) {', '.join(missing)}; were they written by experiment=liu_fig1 … liu_fig4?"
        )


def _iotas(jobs: Jobs, runs: pd.DataFrame) -> pd.Series:
    """ι per run: the trace's ``iota`` (first recorded value of the run) where there is one, else
    ι from the run's params (activation probability of n_edges edges among n_nodes; 1 for [19])."""
    from_params = pd.Series(
        [
            1.0 if m == BASELINE else activation_probability(int(p.get("n_nodes", 20)), _n_edges(m))
            for m, p in zip(runs["method"], runs["_params"])
        ],
        index=runs.index,
    )
    tr = jobs.traces
    if "iota" not in tr.columns or tr.empty:
        return from_params
    first = tr.dropna(subset=["iota"]).groupby(["job", "fold", "rep"])["iota"].first().rename("_iota").reset_index()
    merged = runs[["job", "fold", "rep"]].merge(first, on=["job", "fold", "rep"], how="left")
    return pd.Series(merged["_iota"].to_numpy(), index=runs.index).fillna(from_params)


def method_runs(jobs: Jobs) -> pd.DataFrame:
    """One row per liu_dda run (results row) with ``method``, ``iota`` and ``label`` added.

    Raises DpbenchError when columns are missing, no dp_dda / dp_dda_all_nodes run is present, or a
    method holds more than one configuration at one ε (:mod:`dpbench.plot.configs`)."""
    _require(jobs.results, RESULT_COLUMNS, "results")
    df = jobs.results[jobs.results["algorithm"].isin((SUBSAMPLED, BASELINE))].copy()
    if df.empty:
        raise DpbenchError(f"no runs of {SUBSAMPLED} or {BASELINE} in these results; {HINT}")
    df["_params"] = [json.loads(p) if isinstance(p, str) else {} for p in df["params"]]
    df["method"] = [_method_key(a, p) for a, p in zip(df["algorithm"], df["_params"])]
    check_one_configuration(df, ["method", "eps", "dataset", "model"], "liu_dda Figs 1–4")
    df["iota"] = _iotas(jobs, df)
    iota = df.groupby("method")["iota"].mean()
    df["label"] = [label(m, iota[m]) for m in df["method"]]
    return df.drop(columns="_params")


def _methods(runs: pd.DataFrame) -> list[str]:
    return sorted(runs["method"].unique(), key=_order)


def _one_setting(runs: pd.DataFrame, columns=("dataset", "model")) -> None:
    """Refuse results mixing datasets, models (or, for Figs 1/3, ε): one figure shows one sweep."""
    names = {"dataset": "datasets", "model": "models", "eps": "privacy budgets ε"}
    for column in columns:
        if runs[column].nunique() > 1:
            values = ", ".join(map(str, sorted(runs[column].unique())))
            raise DpbenchError(
                f"these results mix {names[column]} ({values}); give one preset's sweep directory per figure "
                "(liu_fig1/liu_fig3: one ε; liu_fig2/liu_fig4: one dataset and model)"
            )


def _model_name(runs: pd.DataFrame) -> str:
    model = runs["model"].iloc[0]
    return MODELS.get(model, (str(model),))[0]


def _figure_name(runs: pd.DataFrame, trade_off: bool) -> str:
    model = runs["model"].iloc[0]
    return "liu_dda " + (
        MODELS[model][2 if trade_off else 1] if model in MODELS else ("Figs 2/4" if trade_off else "Figs 1/3")
    )


def curves(jobs: Jobs) -> pd.DataFrame:
    """Per (method, iteration) of the traces: mean epoch, mean/std over runs of the suboptimality
    F(x̄) − F* (F* of the trace's run, joined on job, fold, rep; not floored) and of the test
    accuracy (NaN points skipped), and the number of runs. One ε, dataset and model only."""
    return _curves(method_runs(jobs), jobs.traces)


def _curves(runs: pd.DataFrame, traces: pd.DataFrame) -> pd.DataFrame:
    """:func:`curves` from :func:`method_runs` rows and the trace rows."""
    _one_setting(runs, ("dataset", "model", "eps"))
    _require(traces, TRACE_COLUMNS, "traces")
    tr = traces.drop(columns=[c for c in ("algorithm", "dataset", "eps", "iota") if c in traces.columns])
    tr = tr.merge(runs[["job", "fold", "rep", "method", "fstar"]], on=["job", "fold", "rep"])
    if tr.empty:
        raise DpbenchError(f"the traces of these runs are empty; {HINT}")
    tr["gap"] = tr["train_objective"] - tr["fstar"]
    grouped = tr.groupby(["method", "iteration"])
    return pd.DataFrame(
        {
            "epoch": grouped["epoch"].mean(),
            "gap_mean": grouped["gap"].mean(),
            "gap_std": grouped["gap"].std(ddof=1).fillna(0.0),
            "acc_mean": grouped["test_accuracy"].mean(),
            "acc_std": grouped["test_accuracy"].std(ddof=1).fillna(0.0),
            "runs": grouped.size(),
        }
    ).reset_index()


def final_stats(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (ε, method) of :func:`method_runs` rows: runs, mean and standard error (std ddof 1 / √runs;
    NaN for a single run) of the final suboptimality and test accuracy, and the label."""
    grouped = runs.groupby(["eps", "method"])
    out = pd.DataFrame(
        {
            "runs": grouped.size(),
            "gap_mean": grouped["suboptimality"].mean(),
            "gap_se": grouped["suboptimality"].std(ddof=1),
            "acc_mean": grouped["test_accuracy"].mean(),
            "acc_se": grouped["test_accuracy"].std(ddof=1),
            "label": grouped["label"].first(),
        }
    ).reset_index()
    out["gap_se"] /= np.sqrt(out["runs"])
    out["acc_se"] /= np.sqrt(out["runs"])
    return out


# ============================================================================= figures
def _floor(values) -> np.ndarray:
    return np.maximum(np.asarray(values, dtype=float), GAP_FLOOR)


def _title(runs: pd.DataFrame, trade_off: bool) -> str:
    eps = "" if trade_off else f", ε = {runs['eps'].iloc[0]:g}"
    reps = runs.groupby(["eps", "method"]).size()
    n = f"{reps.min()}" if reps.min() == reps.max() else f"{reps.min()}–{reps.max()}"
    return (
        f"{_figure_name(runs, trade_off)}: {_model_name(runs)} on {runs['dataset'].iloc[0]}{eps}, {n} runs per method"
    )


def fig1(jobs: Jobs) -> Figure:
    """liu_dda Fig. 1 (ℓ2-SVM, ε = 0.8) / Fig. 3 (ℓ1-SVM, ε = 0.4), Sec. 5.2–5.3: (a) suboptimality
    (log y) and (b) test accuracy against epochs, mean over runs ± 1 std band, a line per method.

    Results mixing ε, datasets or models are refused (DpbenchError): pass the sweep directory of one
    preset (liu_fig1 or liu_fig3). Means and lower band edges at or below GAP_FLOOR are drawn at it."""
    runs = method_runs(jobs)
    data = _curves(runs, jobs.traces)
    fig, (ax_gap, ax_acc) = plt.subplots(1, 2, figsize=(11.0, 4.2))
    for method in _methods(runs):
        here = data[data["method"] == method].sort_values("epoch")
        look = STYLES.get(method, OTHER_STYLE)
        colour, marker = look.colour, look.marker
        name = runs.loc[runs["method"] == method, "label"].iloc[0]
        x, m, s = (here[c].to_numpy(float) for c in ("epoch", "gap_mean", "gap_std"))
        ax_gap.plot(
            x, _floor(m), color=colour, marker=marker, ls=look.line, markevery=max(1, len(here) // 8), ms=4, label=name
        )
        ax_gap.fill_between(x, _floor(m - s), _floor(m + s), color=colour, alpha=0.2, linewidth=0)
        m, s = here["acc_mean"].to_numpy(float), here["acc_std"].to_numpy(float)
        ax_acc.plot(x, m, color=colour, marker=marker, ls=look.line, markevery=max(1, len(here) // 8), ms=4, label=name)
        ax_acc.fill_between(x, m - s, m + s, color=colour, alpha=0.2, linewidth=0)
    _label_axes(ax_gap, ax_acc, "epochs", "suboptimality F(x̄) − F* (mean ± std)", "test accuracy (mean ± std)")
    fig.suptitle(_title(runs, trade_off=False))
    fig.tight_layout()
    return fig


def _label_axes(ax_gap, ax_acc, xlabel: str, gap_label: str, acc_label: str) -> None:
    """The two panels' scales, labels, titles, grids and legends (Figs 1–4 share them)."""
    ax_gap.set_yscale("log")
    ax_gap.set_ylabel(gap_label)
    ax_gap.set_title("(a) suboptimality", fontsize=10)
    ax_acc.set_ylabel(acc_label)
    ax_acc.set_title("(b) test accuracy", fontsize=10)
    for ax in (ax_gap, ax_acc):
        ax.set_xlabel(xlabel)
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize=8)


def fig2(jobs: Jobs) -> Figure:
    """liu_dda Fig. 2 (ℓ2-SVM) / Fig. 4 (ℓ1-SVM), Sec. 5.2–5.3: (a) final suboptimality (log y) and
    (b) final test accuracy against ε, mean ± standard error over runs, a line per method. Results
    mixing datasets or models are refused. Values at or below GAP_FLOOR are drawn at it."""
    runs = method_runs(jobs)
    _one_setting(runs)
    stats = final_stats(runs)
    fig, (ax_gap, ax_acc) = plt.subplots(1, 2, figsize=(11.0, 4.2))
    for method in _methods(runs):
        here = stats[stats["method"] == method].sort_values("eps")
        look = STYLES.get(method, OTHER_STYLE)
        colour, marker = look.colour, look.marker
        name = here["label"].iloc[0]
        eps = here["eps"].to_numpy(float)
        m, se = here["gap_mean"].to_numpy(float), here["gap_se"].fillna(0.0).to_numpy(float)
        lower, upper = _floor(m) - _floor(m - se), _floor(m + se) - _floor(m)
        ax_gap.errorbar(eps, _floor(m), yerr=[lower, upper], color=colour, marker=marker, ms=5, capsize=3, label=name)
        ax_acc.errorbar(
            eps,
            here["acc_mean"].to_numpy(float),
            yerr=here["acc_se"].fillna(0.0).to_numpy(float),
            color=colour,
            marker=marker,
            ms=5,
            capsize=3,
            label=name,
        )
    epochs = _epochs(runs)
    _label_axes(
        ax_gap, ax_acc, "ε", f"final suboptimality{epochs} (mean ± SE)", f"final test accuracy{epochs} (mean ± SE)"
    )
    fig.suptitle(_title(runs, trade_off=True))
    fig.tight_layout()
    return fig


def _epochs(runs: pd.DataFrame) -> str:
    """ " after 3 epochs" when every run's params agree on ``epochs`` (and set no ``iterations``), else ""."""
    values = {(p.get("epochs"), p.get("iterations")) for p in map(json.loads, runs["params"])}
    if len(values) != 1:
        return ""
    epochs, iterations = values.pop()
    return f" after {epochs:g} epochs" if epochs is not None and iterations is None else ""


# ============================================================================= claims
def _pm(mean: float, se: float, fmt: str = ".4g") -> str:
    return f"{mean:{fmt}} ± " + ("n/a" if pd.isna(se) else f"{se:{fmt}}")


def _compare(a: pd.Series, b: pd.Series, column: str, higher_is_better: bool) -> tuple[str, float]:
    """Is ``a`` better than ``b`` by more than SE_MARGIN combined SEs? → ("better" | "worse" |
    "no measurable difference" | "not comparable", z = improvement / combined SE)."""
    se = math.hypot(a[f"{column}_se"], b[f"{column}_se"])
    if pd.isna(se):
        return "not comparable", math.nan
    gain = (a[f"{column}_mean"] - b[f"{column}_mean"]) * (1 if higher_is_better else -1)
    z = gain / se if se > 0 else math.copysign(math.inf, gain) if gain else 0.0
    return ("better" if z > SE_MARGIN else "worse" if z < -SE_MARGIN else "no measurable difference"), z


def _verdict(outcomes: list[bool]) -> str:
    if not outcomes:
        return "CANNOT BE EVALUATED"
    return "HOLDS" if all(outcomes) else "FAILS" if not any(outcomes) else "PARTLY"


def _spearman(x, y) -> float:
    """Spearman rank correlation (average ranks for ties); NaN when either is constant."""
    rx, ry = pd.Series(x).rank().to_numpy(), pd.Series(y).rank().to_numpy()
    if rx.std() == 0 or ry.std() == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def _fmt_rho(rho: float) -> str:
    return "undefined (constant)" if math.isnan(rho) else f"{rho:.2f}"


def _cell(stats: pd.DataFrame, eps: float, method: str) -> pd.Series | None:
    rows = stats[(stats["eps"] == eps) & (stats["method"] == method)]
    return None if rows.empty else rows.iloc[0]


def _variants(stats: pd.DataFrame) -> list[str]:
    return [m for m in sorted(stats["method"].unique(), key=_order) if m != BASELINE]


def _name(stats: pd.DataFrame, method: str) -> str:
    return stats.loc[stats["method"] == method, "label"].iloc[0]


def _claim_a(stats: pd.DataFrame, column: str) -> tuple[str, str, list[str]]:
    """(A) each Alg. 1 variant beats [19] at each ε, on ``column`` (gap: lower, acc: higher)."""
    what = "final suboptimality (lower)" if column == "gap" else "test accuracy (higher)"
    claim = f"(A{'' if column == 'gap' else '′'}) node subsampling beats the all-nodes baseline [19] on {what}, by > {SE_MARGIN:g} SE"
    if BASELINE not in set(stats["method"]) or not _variants(stats):
        missing = "the all-nodes baseline [19]" if BASELINE not in set(stats["method"]) else "Algorithm 1 (dp_dda)"
        return claim, "CANNOT BE EVALUATED", [f"cannot be evaluated: no runs of {missing} in these results"]
    lines, outcomes, failures = [], [], []
    for eps in sorted(stats["eps"].unique()):
        base = _cell(stats, eps, BASELINE)
        for method in _variants(stats):
            var = _cell(stats, eps, method)
            if base is None or var is None:
                lines.append(f"ε = {eps:g}: {_name(stats, method) if var is None else 'the baseline'} not run")
                continue
            result, z = _compare(var, base, column, higher_is_better=(column == "acc"))
            where = f"ε = {eps:g}, {var['label']}"
            if result == "not comparable":
                lines.append(f"{where}: fewer than 2 runs, not compared")
                continue
            outcomes.append(result == "better")
            if result != "better":
                failures.append(where)
            lines.append(
                f"{where}: {_pm(var[f'{column}_mean'], var[f'{column}_se'])} vs baseline "
                f"{_pm(base[f'{column}_mean'], base[f'{column}_se'])} ({z:+.1f} SE): "
                + ("beats" if result == "better" else f"does not beat ({result})")
            )
    if failures and any(outcomes):
        lines.append("does not beat at: " + "; ".join(failures))
    return claim, _verdict(outcomes), lines


def _claim_b(stats: pd.DataFrame) -> tuple[str, str, list[str]] | None:
    """(B) the advantage ratio r(ε) = baseline / variant mean suboptimality falls as ε grows (only
    with ≥ 2 values of ε): r at the smallest ε above r at the largest, and Spearman ρ(r, ε) < 0.
    Means are floored at GAP_FLOOR before the ratio."""
    eps_values = sorted(stats["eps"].unique())
    if len(eps_values) < 2:
        return None
    claim = "(B) the advantage over [19] is larger at small ε (ratio r = baseline / Alg. 1 final suboptimality)"
    if BASELINE not in set(stats["method"]) or not _variants(stats):
        return (
            claim,
            "CANNOT BE EVALUATED",
            ["cannot be evaluated: the all-nodes baseline [19] or Algorithm 1 was not run"],
        )
    lines, outcomes = [], []
    for method in _variants(stats):
        ratios = {}
        for eps in eps_values:
            base, var = _cell(stats, eps, BASELINE), _cell(stats, eps, method)
            if base is not None and var is not None:
                ratios[eps] = _floor(base["gap_mean"]) / _floor(var["gap_mean"])
        name = _name(stats, method)
        if len(ratios) < 2:
            lines.append(f"{name}: fewer than two ε with both methods, not evaluated")
            continue
        xs = sorted(ratios)
        rho = _spearman(xs, [ratios[e] for e in xs])
        holds = bool(ratios[xs[0]] > ratios[xs[-1]] and rho < 0)
        outcomes.append(holds)
        lines.append(
            f"{name}: "
            + ", ".join(f"r({e:g}) = {float(ratios[e]):.3g}" for e in xs)
            + f"; Spearman ρ(r, ε) = {_fmt_rho(rho)}: "
            + ("larger at small ε" if holds else "not larger at small ε")
        )
    return claim, _verdict(outcomes), lines


def _claim_c(stats: pd.DataFrame) -> tuple[str, str, list[str]]:
    """(C) Figs 1/3: the 1-edge run (smaller ι) has lower final suboptimality than the 2-edge run,
    per ε, by > SE_MARGIN SE; reverse → fails; neither → no measurable difference."""
    claim = f"(C) the larger ι has the higher utility loss (1 edge below 2 edges in final suboptimality by > {SE_MARGIN:g} SE)"
    one, two = f"{SUBSAMPLED}/1", f"{SUBSAMPLED}/2"
    if not {one, two} <= set(stats["method"]):
        return claim, "CANNOT BE EVALUATED", ["cannot be evaluated: Algorithm 1 with both 1 and 2 edges is needed"]
    lines, results = [], []
    for eps in sorted(stats["eps"].unique()):
        a, b = _cell(stats, eps, one), _cell(stats, eps, two)
        if a is None or b is None:
            lines.append(f"ε = {eps:g}: not both run")
            continue
        result, z = _compare(a, b, "gap", higher_is_better=False)
        if result == "not comparable":
            lines.append(f"ε = {eps:g}: fewer than 2 runs, not compared")
            continue
        results.append(result)
        lines.append(
            f"ε = {eps:g}: {a['label']} {_pm(a['gap_mean'], a['gap_se'])} vs {b['label']} "
            f"{_pm(b['gap_mean'], b['gap_se'])} ({z:+.1f} SE): "
            + {"better": "smaller ι lower", "worse": "larger ι lower"}.get(result, result)
        )
    kinds = set(results)
    if not kinds:
        verdict = "CANNOT BE EVALUATED"
    elif len(kinds) > 1:
        verdict = "PARTLY"
    else:
        verdict = {"better": "HOLDS", "worse": "FAILS", "no measurable difference": "NO MEASURABLE DIFFERENCE"}[
            kinds.pop()
        ]
    return claim, verdict, lines


def _claim_d(stats: pd.DataFrame) -> tuple[str, str, list[str]] | None:
    """(D) Figs 2/4: each method's final suboptimality falls as ε grows (only with ≥ 2 values of ε):
    larger at the smallest ε than at the largest, and Spearman ρ(mean suboptimality, ε) < 0."""
    if stats["eps"].nunique() < 2:
        return None
    lines, outcomes = [], []
    for method in sorted(stats["method"].unique(), key=_order):
        here = stats[stats["method"] == method].sort_values("eps")
        if len(here) < 2:
            lines.append(f"{_name(stats, method)}: run at one ε only, not evaluated")
            continue
        gaps = here["gap_mean"].to_numpy()
        rho = _spearman(here["eps"], gaps)
        falls = bool(gaps[0] > gaps[-1] and rho < 0)
        outcomes.append(falls)
        lines.append(
            f"{_name(stats, method)}: "
            + ", ".join(f"{e:g}: {g:.4g}" for e, g in zip(here["eps"], gaps))
            + f"; Spearman ρ = {_fmt_rho(rho)}: "
            + ("falls" if falls else "does not fall")
        )
    return "(D) the final suboptimality falls as ε grows, for every method", _verdict(outcomes), lines


def claims(stats: pd.DataFrame) -> list[tuple[str, str, list[str]]]:
    """The Sec. 5 claims on :func:`final_stats` (one dataset and model): [(claim, verdict, evidence)],
    verdict ∈ {HOLDS, PARTLY, FAILS, NO MEASURABLE DIFFERENCE (C only), CANNOT BE EVALUATED}."""
    out = [_claim_a(stats, "gap"), _claim_a(stats, "acc"), _claim_b(stats), _claim_c(stats), _claim_d(stats)]
    return [c for c in out if c is not None]


# ============================================================================= summary
def _table(stats: pd.DataFrame) -> list[str]:
    lines = []
    for eps in sorted(stats["eps"].unique()):
        lines += [f"## ε = {eps:g}", "", "| method | runs | final suboptimality | test accuracy |", "|---|---|---|---|"]
        here = stats[stats["eps"] == eps]
        for method in sorted(here["method"], key=_order):
            r = here[here["method"] == method].iloc[0]
            lines.append(
                f"| {r['label']} | {r['runs']} | {_pm(r['gap_mean'], r['gap_se'])} | {_pm(r['acc_mean'], r['acc_se'])} |"
            )
        lines.append("")
    return lines


def summary(jobs: Jobs) -> str:
    """Markdown next to liu_dda Figs 1–4: a table per ε (method, runs, mean ± SE of the final
    suboptimality and test accuracy), then the Sec. 5 claims with verdicts and the numbers behind them.
    Results mixing datasets or models are refused."""
    runs = method_runs(jobs)
    _one_setting(runs)
    stats = final_stats(runs)
    lines = [
        f"# liu_dda Sec. 5: {_model_name(runs)} on {runs['dataset'].iloc[0]}",
        "",
        (
            f"Cells: mean ± standard error over runs (folds × reps) of the final suboptimality F(x̄) − F*{_epochs(runs)} "
            f'and of the test accuracy; n/a for a single run. "Beats" = better by more than {SE_MARGIN:g} '
            "combined standard errors √(se₁² + se₂²)."
        ),
        "",
    ]
    lines += _table(stats)
    lines += ["## Claims of liu_dda Sec. 5", ""]
    for claim, verdict, evidence in claims(stats):
        lines += [f"**{claim}: {verdict}**", ""] + [f"- {e}" for e in evidence] + [""]
    return "\n".join(lines)
