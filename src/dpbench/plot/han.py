"""han_pwa Figs 1–3 and their summary, from the results of ``experiment=han_fig1|han_fig2|han_fig3``.

* Fig. 1: mean objective f(x(k+1)) against the number of iterations k for the private and the
  regular subgradient methods, one panel per step-size scale (han_fig1 sweeps it: the paper gives
  no step sizes).
* Figs 2–3: mean objective ± 2 std (over the runs, as the paper's error bars) against the box
  half-width c (Fig. 2) or the number of pieces m (Fig. 3) for the four mechanisms, with the true
  optimum f* (every row carries it).
* :func:`summary`: the numbers behind each point and the paper's Sec. 5 claims checked on them
  ("the private subgradient method has the lowest expected suboptimality", its slowest growth
  in c, Fig. 1's robustness to k), each with a computed verdict.

In Figs 2–3 the y-axis is symmetric-log: the Laplace-on-solution releases leave P and their objective is orders
of magnitude above the others'.
"""

from __future__ import annotations

import json
import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dpbench.algorithms.base import Look
from dpbench.errors import DpbenchError
from dpbench.plot.configs import check_one_configuration
from dpbench.plot.style import style

__all__ = ["fig1", "fig2", "fig3", "point_stats", "summary"]

#: method key → label; the paper's four mechanisms as printed (``fidelity=paper`` where it differs), and the
#: two that differ as dpbench runs them (``fidelity=correct``: the Δ/ε scale, Alg. 1's sign flipped)
LABELS = {
    "laplace_data": "Laplace on data (Thm 16)",
    "laplace_solution": "Laplace on solution (Thm 17)",
    "laplace_solution_correct": "Laplace on solution (Thm 17; noise Δ/ε)",
    "exponential": "exponential, Metropolis (Thm 19)",
    "subgradient": "private subgradient (Alg. 2; Alg. 1 as printed)",
    "subgradient_active": "private subgradient (Alg. 2; Alg. 1 sign flipped)",
    "subgradient_nonprivate": "subgradient, non-private",
}
#: method key → style: each mechanism in its algorithm's style (:mod:`dpbench.plot.style`); a mechanism run with
#: fidelity=correct where it differs from the print is its colour, dashed
STYLES = {
    **{
        key: style(f"pwa_{key}")
        for key in ("laplace_data", "laplace_solution", "exponential", "subgradient", "subgradient_nonprivate")
    },
    "laplace_solution_correct": Look(style("pwa_laplace_solution").colour, "v", "--"),
    "subgradient_active": Look(style("pwa_subgradient").colour, "v", "--"),
}
#: method whose fidelity=correct differs from the print → the suffix of its key under fidelity=correct
CORRECT_SUFFIX = {"laplace_solution": "_correct", "subgradient": "_active"}
MECHANISMS = ("laplace_data", "laplace_solution", "exponential", "subgradient")  # the paper's four
SCALED_STYLE = Look(
    style("pwa_subgradient").colour, "P", ":"
)  # a subgradient method run with a non-default step ("<method>@<scale>")
CLAIMED_BEST = "subgradient"
AXES = {"c": ("pwa_c", "box half-width c"), "m": ("pwa_m", "number of pieces m"), "k": ("k", "iterations k")}
ROBUST_SHARE = 0.10  # Fig. 1 "robust to k": spread of the mean objective over k ≤ 10% of the mean suboptimality


# ============================================================================= data
def label(method: str) -> str:
    """The legend text of a method key (``<method>`` or ``<method>@<step scale>``)."""
    base, _, scale = method.partition("@")
    return LABELS[base] + (f", step × {scale}" if scale else "")


def _methods(stats: pd.DataFrame) -> list[str]:
    """The method keys present, in LABELS order, each step-scaled variant after its method."""
    present = set(stats["method"])
    order = {m: i for i, m in enumerate(LABELS)}
    return sorted(present, key=lambda m: (order[m.partition("@")[0]], m))


def _runs(df: pd.DataFrame) -> pd.DataFrame:
    """The han_pwa rows with a ``method`` key (the algorithm, suffixed where ``fidelity=correct`` differs
    from the print: :data:`CORRECT_SUFFIX`) and the swept settings (k, step_scale) from params."""
    if "paper" not in df.columns or "pwa_c" not in df.columns:
        raise DpbenchError(
            "these results have no han_pwa runs (column pwa_c missing); run `dpbench -m experiment=han_fig1` first"
        )
    df = df[df["paper"] == "han_pwa"].copy()
    if df.empty:
        raise DpbenchError(
            "no han_pwa runs in these results; run `dpbench -m experiment=han_fig1|han_fig2|han_fig3` first"
        )
    params = [json.loads(p) for p in df["params"]]
    base = df["algorithm"].str.removeprefix("pwa_")
    df["method"] = [b + (CORRECT_SUFFIX.get(b, "") if f == "correct" else "") for b, f in zip(base, df["fidelity"])]
    df["k"] = [p.get("iterations", math.nan) for p in params]
    df["step_scale"] = [p.get("step_scale", math.nan) for p in params]
    scaled = df["step_scale"].notna() & (df["step_scale"] != 1.0)
    df["scaled_method"] = df["method"].where(~scaled, df["method"] + "@" + df["step_scale"].map("{:g}".format))
    for column, what in (("eps", "privacy budgets ε"), ("pwa_d", "dimensions d"), ("pwa_b_max", "b_max")):
        if df[column].nunique() > 1:
            raise DpbenchError(
                f"these results mix {what} ({', '.join(map(str, sorted(df[column].unique())))}); give one sweep per figure"
            )
    return df


def point_stats(df: pd.DataFrame, x: str) -> pd.DataFrame:
    """Per (method, x[, step_scale]): mean/std of f over runs, standard error, mean suboptimality,
    f*, share of releases inside P, and the number of runs."""
    return _point_stats(_runs(df), x)


def _point_stats(runs: pd.DataFrame, x: str) -> pd.DataFrame:
    """:func:`point_stats` of rows already prepared by :func:`_runs` (not modified); a point holding
    more than one configuration is refused (:mod:`dpbench.plot.configs`)."""
    runs = runs.copy()
    xcol = AXES[x][0]
    if x == "k":  # Fig. 1 draws a panel per step scale
        keys = ["method", xcol, "step_scale"]
    else:  # Figs 2–3: a subgradient method at another step is a curve of its own
        runs["method"] = runs["scaled_method"]
        keys = ["method", xcol]
    check_one_configuration(runs, keys, f"han_pwa, objective against {AXES[x][1]}")
    grouped = runs.groupby(keys, dropna=False)
    out = pd.DataFrame(
        {
            "mean": grouped["train_objective"].mean(),
            "std": grouped["train_objective"].std(ddof=1),
            "subopt": grouped["suboptimality"].mean(),
            "fstar": grouped["fstar"].first(),
            "inside": grouped["inside_box"].mean(),
            "runs": grouped.size(),
        }
    ).reset_index()
    out["se"] = out["std"] / np.sqrt(out["runs"])
    return out.rename(columns={xcol: "x"})


def _single_setting(runs: pd.DataFrame, swept: str) -> None:
    """A figure varies one of c, m: refuse results where the other also varies."""
    for column, name in (("pwa_c", "c"), ("pwa_m", "m")):
        if name != swept and runs[column].nunique() > 1:
            raise DpbenchError(
                f"these results vary {name} as well as {swept}; give the one sweep directory of this figure"
            )


# ============================================================================= figures
def _axis(ax, xlabel: str, symlog_y: bool) -> None:
    ax.set_xlabel(xlabel)
    ax.set_xscale("log")
    if symlog_y:
        ax.set_yscale("symlog", linthresh=1.0)
    ax.grid(True, alpha=0.3, which="both")


def _errorbar(ax, group: pd.DataFrame, method: str) -> None:
    look = STYLES.get(method, SCALED_STYLE)
    ax.errorbar(
        group["x"],
        group["mean"],
        yerr=2 * group["std"],
        color=look.colour,
        marker=look.marker,
        ls=look.line,
        ms=4,
        capsize=2,
        label=label(method),
    )


def fig1(df: pd.DataFrame) -> Figure:
    """han_pwa Fig. 1: mean f(x(k+1)) ± 2 std against k, a panel per step-size scale, f* dashed."""
    runs = _runs(df)
    _single_setting(runs, "k")
    stats = _point_stats(runs, "k")
    stats = stats[stats["method"].str.startswith("subgradient")]
    if stats.empty:
        raise DpbenchError("no subgradient runs in these results; run `dpbench -m experiment=han_fig1` first")
    scales = sorted(stats["step_scale"].dropna().unique(), reverse=True)
    fig, axes = plt.subplots(1, len(scales), figsize=(4.6 * len(scales), 4.0), sharey=True, squeeze=False)
    for ax, scale in zip(axes[0], scales):
        here = stats[np.isclose(stats["step_scale"], scale)]
        for method, group in here.groupby("method"):
            _errorbar(ax, group.sort_values("x"), method)
        ax.axhline(runs["fstar"].iloc[0], color="m", ls="--", label="true optimum f*")
        ax.set_title(f"step α = {scale:g}·R/(G√k)", fontsize=10)
        _axis(ax, "iterations k", symlog_y=False)
    axes[0][0].set_ylabel("objective f (mean ± 2 std)")
    axes[0][-1].legend(fontsize=8, loc="best")
    fig.suptitle(_title(runs, "han_pwa Fig. 1"))
    fig.tight_layout()
    return fig


def _versus(df: pd.DataFrame, x: str, name: str) -> Figure:
    runs = _runs(df)
    _single_setting(runs, x)
    stats = _point_stats(runs, x)
    fig, ax = plt.subplots(figsize=(7.0, 4.8))
    for method in _methods(stats):
        group = stats[stats["method"] == method].sort_values("x")
        if group.empty:
            continue
        _errorbar(ax, group, method)
    optimum = stats.groupby("x")["fstar"].first().sort_index()
    ax.plot(optimum.index, optimum.values, "m--", label="true optimum f*")
    _axis(ax, AXES[x][1], symlog_y=True)
    ax.set_ylim(bottom=min(optimum.min(), stats["mean"].min()) - 1.0)  # error bars may be cut off below
    ax.set_ylabel("objective f (mean ± 2 std)")
    ax.legend(fontsize=8, loc="best")
    ax.set_title(_title(runs, name), fontsize=10)
    fig.tight_layout()
    return fig


def fig2(df: pd.DataFrame) -> Figure:
    """han_pwa Fig. 2: mean objective ± 2 std against c for every mechanism, and f*."""
    return _versus(df, "c", "han_pwa Fig. 2")


def fig3(df: pd.DataFrame) -> Figure:
    """han_pwa Fig. 3: mean objective ± 2 std against m for every mechanism, and f*."""
    return _versus(df, "m", "han_pwa Fig. 3")


def _title(runs: pd.DataFrame, name: str) -> str:
    fixed = [
        f"{label} = {runs[col].iloc[0]:g}"
        for col, label in (("pwa_m", "m"), ("pwa_c", "c"))
        if runs[col].nunique() == 1
    ]
    fixed += [
        f"d = {runs['pwa_d'].iloc[0]:g}",
        f"b_max = {runs['pwa_b_max'].iloc[0]:g}",
        f"ε = {runs['eps'].iloc[0]:g}",
    ]
    reps = runs.groupby(["algorithm", "params", "pwa_c", "pwa_m"]).size().max()
    return f"{name}: {', '.join(fixed)}, {reps} runs per point"


# ============================================================================= summary
def _verdict(outcomes: list[bool]) -> str:
    if not outcomes:
        return "NOT TESTABLE"
    return "HOLDS" if all(outcomes) else "FAILS"


def _lowest_claim(stats: pd.DataFrame, xname: str, best: str = CLAIMED_BEST) -> tuple[str, str, list[str]]:
    """Is the private subgradient method (``best``: Alg. 1 as printed, or ``subgradient_active``) the
    mechanism of least mean suboptimality at every point, among the four? Each line names the winner
    and the gap to the runner-up in standard errors."""
    candidates = [m for m in MECHANISMS if m != CLAIMED_BEST] + [best]
    lines, outcomes = [], []
    for x, at_x in stats[stats["method"].isin(candidates)].groupby("x"):
        here = at_x.sort_values("subopt")
        if best not in set(here["method"]) or len(here) < len(candidates):
            lines.append(f"{xname} = {x:g}: not every mechanism was run")
            continue
        first, second = here.iloc[0], here.iloc[1]
        z = (second["subopt"] - first["subopt"]) / math.hypot(first["se"], second["se"])
        outcomes.append(first["method"] == best)
        lines.append(
            f"{xname} = {x:g}: lowest {label(first['method'])} {first['subopt']:.4g}, next {label(second['method'])} "
            f"{second['subopt']:.4g} ({z:.1f} standard errors apart)"
        )
    claim = "the private subgradient method has the lowest expected suboptimality (among the four mechanisms)"
    if best != CLAIMED_BEST:
        claim += f" — as {label(best)} (for information)"
    return claim, _verdict(outcomes), lines


def _growth_claim(stats: pd.DataFrame) -> tuple[str, str, list[str]]:
    """Fig. 2: the private subgradient method's suboptimality grows least from the smallest to the largest c."""
    growth = {}
    for method in [m for m in _methods(stats) if m in MECHANISMS or m.startswith("subgradient")]:
        rows = stats[stats["method"] == method].sort_values("x")
        if len(rows) >= 2:
            growth[method] = (rows["subopt"].iloc[-1] - rows["subopt"].iloc[0], rows["x"].iloc[0], rows["x"].iloc[-1])
    lines = [
        f"{label(m)}: suboptimality grows by {g:.4g} from c = {a:g} to c = {b:g}" for m, (g, a, b) in growth.items()
    ]
    judged = {m: g for m, g in growth.items() if m in MECHANISMS}  # the verdict compares the paper's four
    testable = CLAIMED_BEST in judged and len(judged) > 1
    holds = testable and min(judged, key=lambda m: judged[m][0]) == CLAIMED_BEST
    return (
        (
            "as c grows, the private subgradient method's suboptimality grows slowest (among the four; variants listed "
            "for information)"
        ),
        _verdict([holds]) if testable else "NOT TESTABLE",
        lines,
    )


def _fig1_claims(stats: pd.DataFrame) -> list[tuple[str, str, list[str]]]:
    out = []
    lines, outcomes = [], []
    for scale, here in stats.groupby("step_scale"):
        for method in ("subgradient", "subgradient_active"):
            rows = here[here["method"] == method].sort_values("x")
            if len(rows) < 2:
                continue
            spread = rows["mean"].max() - rows["mean"].min()
            robust = spread <= ROBUST_SHARE * rows["subopt"].mean()
            if np.isclose(scale, 1.0) and method == "subgradient":
                outcomes.append(bool(robust))
            lines.append(
                f"step scale {scale:g}, {LABELS[method]}: mean f from {rows['mean'].min():.4g} to {rows['mean'].max():.4g} "
                f"over k = {rows['x'].min():g}..{rows['x'].max():g} (spread {spread:.3g} vs mean suboptimality "
                f"{rows['subopt'].mean():.3g}: {'robust' if robust else 'not robust'})"
                + ("" if np.isclose(scale, 1.0) and method == "subgradient" else " (for information)")
            )
    out.append(
        (
            (
                f"the private subgradient method's objective is robust to k (spread over k ≤ {ROBUST_SHARE:.0%} of "
                "its mean suboptimality; judged at the default step, Alg. 1 as printed)"
            ),
            _verdict(outcomes),
            lines,
        )
    )
    lines, outcomes = [], []
    for scale, here in stats.groupby("step_scale"):
        rows = here[here["method"] == "subgradient_nonprivate"].sort_values("x")
        if len(rows) < 2:
            continue
        decreases = bool(rows["mean"].iloc[-1] < rows["mean"].iloc[0])
        outcomes.append(decreases)
        lines.append(
            f"step scale {scale:g}: f = {rows['mean'].iloc[0]:.4g} at k = {rows['x'].iloc[0]:g}, "
            f"{rows['mean'].iloc[-1]:.4g} at k = {rows['x'].iloc[-1]:g}"
        )
    out.append(("the regular subgradient method's objective decreases as k grows", _verdict(outcomes), lines))
    return out


def _table(stats: pd.DataFrame, xname: str, with_scale: bool) -> list[str]:
    lines = []
    groups = stats.groupby("step_scale") if with_scale else [(None, stats)]
    for scale, here in groups:
        if scale is not None:
            lines += [f"### step α = {scale:g}·R/(G√k)", ""]
        xs = sorted(here["x"].unique())
        lines += ["| method | " + " | ".join(f"{xname} = {x:g}" for x in xs) + " |", "|---" * (len(xs) + 1) + "|"]
        for method in _methods(here):
            rows = here[here["method"] == method].set_index("x")
            if rows.empty:
                continue
            cells = [
                f"{rows.loc[x, 'mean']:.4g} ± {2 * rows.loc[x, 'std']:.3g}" if x in rows.index else "not run"
                for x in xs
            ]
            lines.append(f"| {label(method)} | " + " | ".join(cells) + " |")
        optimum = here.groupby("x")["fstar"].first()
        lines += ["| true optimum f* | " + " | ".join(f"{optimum[x]:.4g}" for x in xs) + " |", ""]
    return lines


def summary(df: pd.DataFrame) -> str:
    """Markdown next to each figure: mean objective ± 2 std per method and point, f*, then the
    paper's claims with computed verdicts and the numbers behind them."""
    runs = _runs(df)
    swept = [name for col, name in (("pwa_c", "c"), ("pwa_m", "m")) if runs[col].nunique() > 1]
    x = swept[0] if len(swept) == 1 else "k"
    stats = _point_stats(runs, x)
    title = {"k": "Fig. 1", "c": "Fig. 2", "m": "Fig. 3"}[x]
    lines = [
        f"# han_pwa {title}: {_title(runs, 'objective f')}",
        "",
        "Cells: mean of f over the runs ± 2 std (the paper's error bars). Suboptimality = f − f*.",
        "",
    ]
    lines += _table(stats, x, with_scale=(x == "k"))
    inside = stats[stats["method"] == "laplace_solution"]
    if not inside.empty:
        lines += [
            (
                f"Laplace on solution: share of releases inside P {inside['inside'].min():.3g}..{inside['inside'].max():.3g} "
                "(no projection, as in the paper)."
            ),
            "",
        ]
    claims = (
        _fig1_claims(stats) if x == "k" else [_lowest_claim(stats, x)] + ([_growth_claim(stats)] if x == "c" else [])
    )
    if x != "k":
        variants = [m for m in _methods(stats) if m.startswith("subgradient") and m != CLAIMED_BEST]
        claims += [_lowest_claim(stats, x, best=m) for m in variants]
    lines += ["## Claims of han_pwa Sec. 5", ""]
    for claim, verdict, evidence in claims:
        lines += [f"**{claim}: {verdict}**", ""] + [f"- {e}" for e in evidence] + [""]
    return "\n".join(lines)
