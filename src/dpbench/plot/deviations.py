"""Why a reproduction differs: every fidelity mode of a method against ``correct``, and which
of the paper's claims hold in which mode. ``dpbench-plot deviations DIR`` on sweeps of the
``experiment=deviations_<paper>`` presets writes docs/results/deviations.{png,md}.

A *point* is one setting of a method — paper, method, dataset, model, ε, δ, relation and every
hyper-parameter but ``fidelity`` (and, for han_pwa, the instance's m, d and c). Its *headline* is the
mean test accuracy over folds × reps; for han_pwa the mean f(x) − f* (its claims are on that mean, and
a release may leave P or land on f*); for other points measured by their suboptimality (kuru_acc's,
which have no test set), the mean log₁₀(F(x_T) − F*). Per point and mode: the mean with a 95 % Student-t interval; per mode other than
``correct``: the difference from ``correct`` with a 95 % Welch interval, and whether the mode's ε is a
guarantee (``guarantee_valid``). A mode's changes are listed from its declaration
(:class:`~dpbench.algorithms.base.FidelityMode`). The paper's claims (where a recipe checks them,
:data:`CLAIMS`) are checked on the rows of each mode: the mode's rows for the methods that have it,
``correct`` rows for the others.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from scipy import stats

from dpbench.errors import DpbenchError
from dpbench.plot import chen_lee, kuru
from dpbench.plot.style import variant

POINT = ["paper", "algorithm", "dataset", "model", "eps", "delta", "neighbouring"]
INSTANCE = ["pwa_m", "pwa_d", "pwa_c"]
"""Columns of the problem instance a sweep varies under one dataset name (han_pwa's m, d and c): part of a point."""
CLAIMS: dict[str, Callable[[pd.DataFrame], list[str]]] = {"chen_lee": chen_lee.claims, "kuru_acc": kuru.claim_lines}
"""paper → the markdown lines checking its claims on one mode's rows."""


def _headline(df: pd.DataFrame) -> tuple[pd.Series, str]:
    """(value per row, its name) of one point's rows: test accuracy, or log₁₀ suboptimality where
    every accuracy is NaN."""
    if "test_accuracy" in df.columns and df["test_accuracy"].notna().any():
        return df["test_accuracy"], "test accuracy"
    if (
        "pwa_c" in df.columns and df["pwa_c"].notna().all()
    ):  # han_pwa: claims on E[f − f*]; releases may leave P or hit f*
        return df["suboptimality"], "mean f(x) − f*"
    if "suboptimality" in df.columns and df["suboptimality"].notna().any():
        return np.log10(df["suboptimality"].clip(lower=1e-300)), "log₁₀(F(x_T) − F*)"
    raise DpbenchError("the results have neither test accuracy nor suboptimality to compare the modes on")


def _point_columns(df: pd.DataFrame) -> list[str]:
    params = sorted(c for c in df.columns if c.startswith("p_") and c != "p_fidelity")
    return [c for c in POINT + INSTANCE if c in df.columns] + params


def _mean_ci(values: pd.Series) -> tuple[float, float, int]:
    v = values.dropna().to_numpy(dtype=float)
    if v.size < 2:
        return (float(v.mean()) if v.size else math.nan), math.nan, int(v.size)
    return float(v.mean()), float(stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size)), int(v.size)


def _welch(a: pd.Series, b: pd.Series) -> tuple[float, float]:
    """mean(a) − mean(b) and the half-width of its 95 % Welch interval."""
    a, b = a.dropna().to_numpy(dtype=float), b.dropna().to_numpy(dtype=float)
    if a.size < 2 or b.size < 2:
        return float(a.mean() - b.mean()) if a.size and b.size else math.nan, math.nan
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = math.sqrt(va + vb)
    if se == 0.0:
        return float(a.mean() - b.mean()), 0.0
    dof = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    return float(a.mean() - b.mean()), float(stats.t.ppf(0.975, dof) * se)


def effects(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (point, mode other than correct) that also ran in ``correct``: both means with
    their intervals, the difference with its Welch interval, and whether the mode's ε is a guarantee."""
    if "fidelity" not in df.columns:
        raise DpbenchError(
            "the results have no fidelity column: run a deviations preset (experiment=deviations_<paper>)"
        )
    df = df[df["private"].astype(bool)] if "private" in df.columns else df
    rows = []
    for point, group in df.groupby(_point_columns(df), dropna=False, sort=True):
        value, name = _headline(group)  # per point: sweeps of several papers measure different things
        by_mode = dict(tuple(group.assign(_value=value).groupby("fidelity")))
        if "correct" not in by_mode:
            continue
        base_mean, base_ci, base_n = _mean_ci(by_mode["correct"]["_value"])
        for mode, rows_of_mode in sorted(by_mode.items()):
            if mode == "correct":
                continue
            mean, ci, n = _mean_ci(rows_of_mode["_value"])
            diff, diff_ci = _welch(rows_of_mode["_value"], by_mode["correct"]["_value"])
            rows.append(
                {
                    **dict(zip(_point_columns(df), point)),
                    "mode": mode,
                    "metric": name,
                    "correct": base_mean,
                    "correct_ci": base_ci,
                    "value": mean,
                    "value_ci": ci,
                    "runs": min(n, base_n),
                    "difference": diff,
                    "difference_ci": diff_ci,
                    "significant": bool(not math.isnan(diff_ci) and abs(diff) > diff_ci),
                    "guarantee": bool(rows_of_mode["guarantee_valid"].astype(bool).all())
                    if "guarantee_valid" in rows_of_mode
                    else True,
                    "note": "; ".join(
                        sorted(set(rows_of_mode.get("guarantee_note", pd.Series([""])).astype(str)) - {""})
                    ),
                }
            )
    if not rows:
        raise DpbenchError("no point ran both in fidelity=correct and in another mode: nothing to compare")
    return pd.DataFrame(rows)


def mode_rows(df: pd.DataFrame, mode: str) -> pd.DataFrame:
    """The rows of ``mode`` for the methods that ran in it, the ``correct`` rows of the others."""
    has_mode = set(df.loc[df["fidelity"] == mode, "algorithm"])
    keep = (df["fidelity"] == mode) | ((df["fidelity"] == "correct") & ~df["algorithm"].isin(has_mode))
    return df[keep]


def figure(df: pd.DataFrame) -> Figure:
    """A panel per (paper, dataset, metric) with each mode's difference from ``correct`` and its 95 %
    Welch interval: against ε, a line per (method, mode), where the points span several ε; else one
    row per (method, mode, setting), the settings named by the hyper-parameters that vary. A dashed
    line marks no difference."""
    found = effects(df)
    panels = sorted(found.groupby(["paper", "dataset", "metric"]).groups)
    heights = [
        max(3.6, 0.13 * len(found[(found["paper"] == p) & (found["dataset"] == d)]))
        if found.loc[(found["paper"] == p) & (found["dataset"] == d), "eps"].nunique() == 1
        else 3.6
        for p, d, _ in panels
    ]
    fig, axes = plt.subplots(
        len(panels), 1, figsize=(7.5, sum(heights)), squeeze=False, gridspec_kw={"height_ratios": heights}
    )
    for ax, (paper, dataset, metric) in zip(axes[:, 0], panels):
        here = found[(found["paper"] == paper) & (found["dataset"] == dataset)]
        if here["eps"].nunique() > 1:
            _against_eps(ax, here)
            ax.axhline(0.0, color="0.4", ls="--", lw=1)
            ax.set_ylabel(f"Δ {metric}\n(mode − correct)")
        else:
            _forest(ax, here)
            ax.axvline(0.0, color="0.4", ls="--", lw=1)
            ax.set_xlabel(f"Δ {metric} (mode − correct), ε = {here['eps'].iloc[0]:g}")
        ax.set_title(f"{paper}: {dataset}")
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


def _against_eps(ax, here: pd.DataFrame) -> None:
    """A line per (method, mode, setting): points of different hyper-parameters are never pooled."""
    rows = pd.concat([group.assign(setting=_settings(group)) for _, group in here.groupby("algorithm")])
    for k, ((algorithm, mode, setting), points) in enumerate(rows.groupby(["algorithm", "mode", "setting"])):
        look = variant(str(algorithm), k)
        line = points.sort_values("eps")
        ax.errorbar(
            line["eps"],
            line["difference"],
            yerr=line["difference_ci"].fillna(0.0),
            marker=look.marker,
            ls=look.line,
            color=look.colour,
            capsize=3,
            label=" ".join(filter(None, (algorithm, mode, setting))),
        )
    ax.set_xscale("log")
    ax.set_xlabel("ε")
    ax.legend(fontsize=7)


def _shown(value) -> str:
    """A hyper-parameter's value in a label: ``null`` for a missing one (e.g. batch_size = all rows)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "null"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _settings(rows: pd.DataFrame) -> pd.Series:
    """Per row, the model, instance and hyper-parameters that vary among ``rows`` (one method's points), as
    ``name=value``."""
    varying = [
        c
        for c in sorted(rows.columns)
        if (c.startswith("p_") or c in INSTANCE or c == "model") and rows[c].map(_shown).nunique() > 1
    ]
    return (
        rows.apply(lambda r: " ".join(f"{c.removeprefix('p_')}={_shown(r[c])}" for c in varying), axis=1)
        if len(rows)
        else pd.Series(dtype=str)
    )


def _forest(ax, here: pd.DataFrame) -> None:
    rows = pd.concat([group.assign(setting=_settings(group)) for _, group in here.groupby("algorithm")])
    rows = rows.sort_values(["algorithm", "mode", "setting"]).reset_index(drop=True)
    for y, row in rows.iterrows():
        look = variant(str(row["algorithm"]), 0 if row["mode"] == "authors_code" else 1)
        ax.errorbar(
            row["difference"],
            y,
            xerr=0.0 if math.isnan(row["difference_ci"]) else row["difference_ci"],
            marker=look.marker,
            color=look.colour,
            capsize=3,
            ls="none",
        )
    ax.set_yticks(
        range(len(rows)), [f"{r['algorithm']} {r['mode']} {r['setting']}" for _, r in rows.iterrows()], fontsize=5.5
    )
    ax.set_ylim(len(rows) - 0.5, -0.5)  # first row on top, no empty margin


def _fmt(value: float, ci: float) -> str:
    if math.isnan(value):
        return "—"
    return f"{value:.3f}" if math.isnan(ci) else f"{value:.3f} ± {ci:.3f}"


def _declared_changes(algorithm: str, mode: str) -> list[str]:
    from dpbench.algorithms.registry import ALGORITHMS

    declared = ALGORITHMS[algorithm].fidelity_modes.get(mode) if algorithm in ALGORITHMS else None
    return list(declared.changes) if declared else ["(not declared by this version of dpbench)"]


def table(df: pd.DataFrame) -> str:
    """The markdown of docs/results/deviations.md: per method and mode, its changes, then every
    point's effect; then, per paper with at least two private methods in the rows, its claims
    checked in each mode."""
    found = effects(df)
    intro = (
        "Each mode is compared with `fidelity=correct` at the same point (mean ± 95 % interval over folds × reps; "
        "difference ± 95 % Welch interval; **bold** where the interval excludes 0). A mode whose ε is not a "
        "guarantee is marked **not private**: its rows are labelled `guarantee_valid = false` and no ranking uses them."
    )
    lines = [
        "# Deviations: the methods as printed and as their authors' code runs them, against dpbench's",
        "",
        intro,
        "",
    ]
    for (paper, algorithm, mode), group in found.groupby(["paper", "algorithm", "mode"], sort=True):
        guarantee = (
            "Its ε is a guarantee." if group["guarantee"].all() else f"**Not private**: {group['note'].iloc[0]}."
        )
        lines += [f"## {paper}: {algorithm}, fidelity={mode}", "", guarantee, "", "What it changes:", ""]
        lines += [f"- {change}" for change in _declared_changes(str(algorithm), str(mode))]
        metric = group["metric"].iloc[0]
        lines += [
            "",
            f"| dataset | ε | setting | {metric}: correct | {mode} | difference | runs |",
            "|---|---|---|---|---|---|---|",
        ]
        for _, row in group.assign(setting=_settings(group)).sort_values(["dataset", "eps", "setting"]).iterrows():
            diff = _fmt(row["difference"], row["difference_ci"])
            lines.append(
                f"| {row['dataset']} | {row['eps']:g} | {row['setting'] or '—'} | "
                f"{_fmt(row['correct'], row['correct_ci'])} | {_fmt(row['value'], row['value_ci'])} | "
                f"{f'**{diff}**' if row['significant'] else diff} | {row['runs']} |"
            )
        lines.append("")
    for paper, check in CLAIMS.items():
        rows = df[df["paper"].isin((paper, "baseline"))] if "paper" in df.columns else df.iloc[0:0]  # + majority class
        if (
            rows.loc[rows["private"].astype(bool) & (rows["paper"] == paper), "algorithm"].nunique() < 2
        ):  # they compare its methods
            continue
        for mode in ["correct", *sorted(set(rows["fidelity"]) - {"correct"})]:
            lines += [f"## {paper}'s claims, fidelity={mode}", ""]
            lines += check(mode_rows(rows, mode))
    return "\n".join(lines).rstrip() + "\n"
