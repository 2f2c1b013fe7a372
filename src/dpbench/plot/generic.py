"""Generic figures over any sweep: a metric against ε, one panel per dataset.

A curve is one configuration: rows of one algorithm that differ in a hyper-parameter or another
recorded setting are separate curves, labelled by what differs (:func:`dpbench.plot.configs.curve_labels`);
rows that differ only in what the results do not record are refused. Error bars are one standard
deviation over seeds × folds × reps; non-private references (the non-private optimum and the
majority class) are drawn as horizontal lines.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.figure import Figure

from dpbench.algorithms.base import Look
from dpbench.errors import DpbenchError
from dpbench.plot.configs import check_one_configuration, curve_labels
from dpbench.plot.style import style, variant


def curve_styles(curves: pd.DataFrame) -> dict[str, Look]:
    """One style per curve (``curves``: its ``curve`` and ``algorithm`` columns) for the whole figure:
    a method's first curve (sorted labels) in the method's own style (:mod:`dpbench.plot.style`), its
    other configurations in the same colour with another line and marker. Fixed per figure, so a panel
    where a method is missing does not shift the others' styles away from the legend."""
    styles: dict[str, Look] = {}
    for algorithm, group in curves.drop_duplicates().sort_values("curve").groupby("algorithm", sort=True):
        for k, curve in enumerate(group["curve"]):
            styles[curve] = variant(str(algorithm), k)
    return styles


def with_curves(df: pd.DataFrame, figure: str) -> pd.DataFrame:
    """``df`` with a ``curve`` column, one label per configuration (:func:`~dpbench.plot.configs.curve_labels`);
    DpbenchError when one curve would still pool configurations the results do not tell apart."""
    out = df.assign(curve=curve_labels(df))
    check_one_configuration(out, ["curve", "dataset", "eps"], figure)
    return out


def metrics_vs_eps(df: pd.DataFrame, rows: list[tuple[str, str]], figure: str = "this figure") -> Figure:
    """One row of panels per (metric, label) in ``rows``, one column per dataset; a line per
    private configuration (mean ± std over seeds × folds × reps at each ε), references as horizontal
    lines; ``figure`` names the figure in a refusal."""
    for metric, _ in rows:
        if metric not in df.columns:
            raise DpbenchError(f"the results have no {metric!r} column")
    df = with_curves(df, figure)
    private = df["private"].astype(bool) if "private" in df.columns else pd.Series(True, index=df.index)
    datasets = sorted(df["dataset"].unique())
    styles = curve_styles(df.loc[private, ["curve", "algorithm"]])
    fig, axes = plt.subplots(len(rows), len(datasets), figsize=(4.4 * len(datasets), 3.4 * len(rows)), squeeze=False)
    for row, (metric, label) in zip(axes, rows):
        for ax, dataset in zip(row, datasets):
            here = df["dataset"] == dataset
            for curve, group in df[here & private].groupby("curve"):
                stats = group.groupby("eps")[metric].agg(["mean", "std"]).reset_index()
                look = styles[curve]
                ax.errorbar(
                    stats["eps"],
                    stats["mean"],
                    yerr=stats["std"].fillna(0.0),
                    marker=look.marker,
                    ls=look.line,
                    capsize=3,
                    color=look.colour,
                    label=curve,
                )
            for (curve, algorithm), group in df[here & ~private].groupby(["curve", "algorithm"]):
                look = style(str(algorithm))
                value = group[metric].mean()
                if pd.notna(value):
                    ax.axhline(value, linestyle=look.line, color=look.colour, label=curve)
            ax.set_xscale("log")
            ax.set_xlabel("ε")
            ax.set_ylabel(label)
            ax.set_title(dataset if covered(df[here & private]).all() else f"{dataset} (not covered by its ε)")
            ax.grid(True, which="both", alpha=0.3)
    handles, labels = [], []
    for ax in axes.ravel():
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.tight_layout()
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    return fig


def accuracy_table(df: pd.DataFrame, figure: str = "this table") -> str:
    """Markdown: per dataset and ε, every configuration's test accuracy (mean ± std over seeds × folds
    × reps; a row per curve of :func:`metrics_vs_eps`) and its rank among the private ones whose
    guarantee holds (#1 = best mean); references, and rows their ε does not cover
    (``guarantee_valid = False``, :func:`uncovered_note` says why), are listed unranked. When the
    private methods ran under different neighbouring relations (``privacy.neighbouring=native``, or rows
    from before one relation per run), the table opens by saying which ran under which."""
    lines = relations_note(df) + uncovered_note(df)
    df = df.assign(covered=covered(df))
    for dataset, here in with_curves(df, figure).groupby("dataset"):
        stats = (
            here.groupby(["curve", "eps"])
            .agg(
                mean=("test_accuracy", "mean"),
                std=("test_accuracy", "std"),
                private=("private", "first"),
                covered=("covered", "all"),
            )
            .reset_index()
        )
        ranked = stats[stats["private"].astype(bool) & stats["covered"]]
        stats["rank"] = ranked.groupby("eps")["mean"].rank(ascending=False, method="min")

        def cell(r) -> str:
            rank = "" if pd.isna(r["rank"]) else f" (#{int(r['rank'])})"
            return f"{r['mean']:.3f} ± {0.0 if pd.isna(r['std']) else r['std']:.3f}{rank}"

        lines += method_by_eps_table(dataset, stats, cell)
    return "\n".join(lines)


def method_by_eps_table(dataset: str, stats: pd.DataFrame, cell) -> list[str]:
    """Markdown lines of one dataset's table: a row per ``curve`` of ``stats``, a column per ε,
    each cell ``cell(row of stats)`` ("—" where the configuration did not run at that ε)."""
    epsilons = sorted(stats["eps"].unique())
    lines = [
        f"### {dataset}",
        "",
        "| method | " + " | ".join(f"ε = {e:g}" for e in epsilons) + " |",
        "|---" * (len(epsilons) + 1) + "|",
    ]
    for curve, group in stats.groupby("curve"):
        by_eps = group.set_index("eps")
        cells = [cell(by_eps.loc[e]) if e in by_eps.index else "—" for e in epsilons]
        lines.append(f"| {curve} | " + " | ".join(cells) + " |")
    return lines + [""]


def covered(df: pd.DataFrame) -> pd.Series:
    """Whether each row's (ε, δ) covers it (``guarantee_valid``; True for rows written before the column)."""
    if "guarantee_valid" not in df.columns:
        return pd.Series(True, index=df.index)
    return df["guarantee_valid"].astype(bool)


def uncovered_note(df: pd.DataFrame) -> list[str]:
    """A markdown paragraph naming the private rows their ε does not cover, with the reason each row gives
    (``guarantee_note``), when there are any: they are shown, never ranked; [] otherwise."""
    private = df[df["private"].astype(bool) & ~covered(df)]
    if private.empty:
        return []
    notes = private["guarantee_note"] if "guarantee_note" in private.columns else pd.Series("", index=private.index)
    parts = []
    for (dataset, note), rows in private.assign(note=notes.fillna("")).groupby(["dataset", "note"]):
        why = note.removeprefix(f"{dataset}: ")
        reason = f" ({why})" if why else ""
        parts.append(f"{dataset}: {', '.join(sorted(rows['algorithm'].unique()))}{reason}")
    return [
        f"**Not ranked: rows their ε does not cover** (`guarantee_valid = false`): {'; '.join(parts)}.",
        "",
    ]


def relations_note(df: pd.DataFrame) -> list[str]:
    """A markdown paragraph naming each neighbouring relation and its private methods, when the rows
    mix relations (so that ranks across them are read as such); [] otherwise."""
    if "neighbouring" not in df.columns:
        return []
    by_relation = df[df["private"].astype(bool)].groupby("neighbouring")["algorithm"].unique()
    if len(by_relation) < 2:
        return []
    parts = "; ".join(f"`{relation}`: {', '.join(sorted(methods))}" for relation, methods in by_relation.items())
    return [
        f"**The ranks mix neighbouring relations** (each method at its own relation's ε, column `neighbouring`): {parts}.",
        "",
    ]


def accuracy_vs_eps(df: pd.DataFrame) -> Figure:
    """Test accuracy against ε, one panel per dataset, one line per private configuration."""
    return metrics_vs_eps(df, [("test_accuracy", "test accuracy")], "accuracy-vs-eps")


def objective_vs_eps(df: pd.DataFrame) -> Figure:
    """Training objective against ε, one panel per dataset, one line per private configuration."""
    return metrics_vs_eps(df, [("train_objective", "training objective")], "objective-vs-eps")
