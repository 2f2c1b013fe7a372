"""Figures of chen_lee (Figs 1–2) from the parquet results of ``experiment=chen_lee_fig1|fig2``.

Hyper-parameter values are read from each row's ``params`` (the algorithm's resolved settings),
so a point is placed by what actually ran, not by its variant's name. A point or a method's curve
shows one configuration: rows that would pool several are refused (:mod:`dpbench.plot.configs`).
"""

from __future__ import annotations

import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dpbench.errors import DpbenchError
from dpbench.plot.configs import check_one_configuration
from dpbench.plot.generic import accuracy_table, covered, metrics_vs_eps

FIG34 = "chen_lee Figs 3–4"  # a curve per method: one configuration of each per (dataset, ε)

# (variant prefix, axis label, parameter read from `params`, categorical?) — the six panels of Fig. 1
FIG1_PANELS = (
    ("alpha", "α (Armijo)", "alpha", False),
    ("beta", "β (backtracking)", "beta", False),
    ("noise", "NoisyBTLS noise", "noise", True),
    ("q", "sampling ratio q", "sampling_rate", False),
    ("budget", "budget strategy", "budget_strategy", True),
    ("zeta", "ζ (clipping decay)", "zeta", False),
)
EPS_MARKERS = ("v", "^", "o", "s", "D")


def _with_params(df: pd.DataFrame, needed: tuple[str, ...]) -> pd.DataFrame:
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise DpbenchError(f"the results lack column(s) {', '.join(missing)}; were they written by this experiment?")
    params = pd.DataFrame([json.loads(p) for p in df["params"]], index=df.index)
    # a hyper-parameter named like a results column gets "_param" (join's rsuffix, deprecated in pandas 3)
    return df.join(params.rename(columns={c: f"{c}_param" for c in params.columns.intersection(df.columns)}))


def _panel_x(rows: pd.DataFrame, param: str) -> pd.Series:
    if param == "zeta":  # without adaptive clipping the thresholds never shrink: ζ = 0
        return rows["zeta"].where(rows["adaptive_clipping"].astype(bool), 0.0)
    return rows[param]


def fig1(df: pd.DataFrame) -> Figure:
    """Test accuracy of DP-BLSGD as one hyper-parameter moves from its Sec 5.4 default (one
    marker per ε, mean ± std over folds × reps); the ``default`` point appears in every panel."""
    df = _with_params(df, ("variant", "params"))
    df = df[df["variant"].notna()]
    if df.empty:
        raise DpbenchError("no rows with a variant: run `dpbench -m experiment=chen_lee_fig1` first")
    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    for ax, (prefix, label, param, categorical) in zip(axes.ravel(), FIG1_PANELS):
        rows = df[df["variant"].str.startswith(prefix + "_") | (df["variant"] == "default")].copy()
        rows["x"] = _panel_x(rows, param)
        check_one_configuration(rows, ["eps", "x"], f"chen_lee.fig1, panel {label}")
        for marker, (eps, group) in zip(EPS_MARKERS, rows.groupby("eps")):
            stats = group.groupby("x")["test_accuracy"].agg(["mean", "std"]).reset_index()
            positions = np.arange(len(stats)) if categorical else stats["x"].astype(float)
            ax.errorbar(
                positions, stats["mean"], yerr=stats["std"].fillna(0.0), marker=marker, capsize=3, label=f"ε = {eps:g}"
            )
            if categorical:
                ax.set_xticks(positions, stats["x"].astype(str))
        if param == "sampling_rate":
            ax.set_xscale("log")
        ax.set_xlabel(label)
        ax.set_ylabel("test accuracy")
        ax.grid(True, alpha=0.3)
    axes[0][0].legend()
    fig.suptitle("DP-BLSGD hyper-parameters, logistic regression (chen_lee Fig. 1)")
    fig.tight_layout()
    return fig


def fig2(df: pd.DataFrame) -> Figure:
    """Per-example gradient and objective evaluations of a whole run against the sampling ratio q
    (mean ± std over folds × reps), on log axes."""
    df = _with_params(df, ("params", "grad_evals", "obj_evals"))
    if "sampling_rate" not in df.columns or df["sampling_rate"].isna().all():
        raise DpbenchError("no rows with a sampling_rate: run `dpbench -m experiment=chen_lee_fig2` first")
    df = df[df["sampling_rate"].notna()]
    check_one_configuration(df, ["sampling_rate"], "chen_lee.fig2")
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for column, label, marker in (
        ("grad_evals", "gradient evaluations", "o"),
        ("obj_evals", "objective evaluations", "s"),
    ):
        stats = df.groupby("sampling_rate")[column].agg(["mean", "std"]).reset_index()
        ax.errorbar(
            stats["sampling_rate"], stats["mean"], yerr=stats["std"].fillna(0.0), marker=marker, capsize=3, label=label
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("sampling ratio q")
    ax.set_ylabel("per-example evaluations per run")
    eps = ", ".join(f"{e:g}" for e in sorted(df["eps"].unique()))
    ax.set_title(f"DP-BLSGD evaluations, ε = {eps} (chen_lee Fig. 2)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    return fig


def fig3(df: pd.DataFrame) -> Figure:
    """chen_lee Fig. 3 / Fig. 4: test accuracy (top) and training objective (bottom) against ε, one
    column per dataset, majority and non-private as reference lines (mean ± std over folds × reps).
    A method with more than one configuration at a (dataset, ε) is refused: the figure has a line per method."""
    check_one_configuration(df, ["algorithm", "dataset", "eps"], FIG34)
    return metrics_vs_eps(df, [("test_accuracy", "test accuracy"), ("train_objective", "objective")], FIG34)


def comparison_table(df: pd.DataFrame) -> str:
    """The ranked accuracy table of Figs 3–4 (:func:`~dpbench.plot.generic.accuracy_table`) followed
    by chen_lee's claims of Sec 5.6, each checked against the runs their ε covers with the numbers behind
    it. A method with more than one configuration at a (dataset, ε) is refused: the claims compare methods."""
    check_one_configuration(df, ["algorithm", "dataset", "eps"], FIG34)
    lines = [accuracy_table(df, FIG34), "## chen_lee's claims, checked against these runs", ""]
    if not covered(df).all():
        lines += ["Only rows their ε covers are checked (the datasets named above as not ranked are left out).", ""]
    return "\n".join([*lines, *claims(df[covered(df)])]) + "\n"


def claims(df: pd.DataFrame) -> list[str]:
    """Markdown lines checking chen_lee's claims of Sec 5.6 on ``df`` (one configuration per method,
    dataset and ε): DP-BLSGD and DP-BLGD outperform DP-AGD; OutPert-RSGD wins on Bank; ObjPert and
    DP-SGD are weak at small ε. A method is ranked only against the private methods of its own
    neighbouring relation: under ``privacy.neighbouring=native`` OutPert-RSGD and ObjPert hold their
    ε for replace-one neighbours, a weaker guarantee than the same ε under add/remove."""
    means = df.groupby(["dataset", "eps", "algorithm"])["test_accuracy"].mean()
    private = df[df["private"].astype(bool)]
    weak = ("objpert", "dp_sgd")
    by_relation = {}
    for name in weak:
        by_relation.setdefault(relation_of(private, name), []).append(name)
    return [
        *claim_beats(means, ("dp_blsgd", "dp_blgd"), "dp_agd"),
        *_claim_wins(*relation_ranks(private, "outpert_rsgd"), means, "outpert_rsgd", "bank"),
        *(
            line
            for names in by_relation.values()
            for line in claim_weak_at_small_eps(*relation_ranks(private, names[0]), means, tuple(names))
        ),
    ]


def relation_of(private: pd.DataFrame, algorithm: str) -> str | None:
    """The neighbouring relation ``algorithm``'s rows hold their ε for (None: no such rows or column)."""
    if "neighbouring" not in private.columns:
        return None
    relations = private.loc[private["algorithm"] == algorithm, "neighbouring"].unique()
    return str(relations[0]) if len(relations) else None


def relation_ranks(private: pd.DataFrame, algorithm: str) -> tuple[pd.Series, str]:
    """Mean test accuracy ranks (1 = best, per dataset and ε) among the private methods of
    ``algorithm``'s neighbouring relation, and the phrase naming whom they rank among."""
    relation = relation_of(private, algorithm)
    mixed = relation is not None and private["neighbouring"].nunique() > 1
    rows = private[private["neighbouring"] == relation] if mixed else private
    ranks = rows.groupby(["dataset", "eps", "algorithm"])["test_accuracy"].mean()
    among = f"the private {relation} methods" if mixed else "the private methods"
    return ranks.groupby(level=["dataset", "eps"]).rank(ascending=False, method="min"), among


def _settings(means: pd.Series, *algorithms: str) -> list[tuple[str, float]]:
    """(dataset, ε) pairs where every one of ``algorithms`` was run."""
    have = means.reset_index().groupby(["dataset", "eps"])["algorithm"].agg(set)
    return [key for key, names in have.items() if set(algorithms) <= names]


def claim_beats(means: pd.Series, winners: tuple[str, ...], loser: str) -> list[str]:
    """Markdown lines checking "``winners`` outperform ``loser``" on ``means`` (indexed by dataset, ε,
    algorithm): per winner, the settings it wins and the ones it loses, with the numbers."""
    lines = [f'**"{" and ".join(winners)} outperform {loser}"** (mean test accuracy, per dataset and ε):', ""]
    for winner in winners:
        settings = _settings(means, winner, loser)
        if not settings:
            lines.append(f"- {winner}: not run alongside {loser}")
            continue
        won = [(d, e) for d, e in settings if means[(d, e, winner)] > means[(d, e, loser)]]
        lost = ", ".join(
            f"{d} ε = {e:g} ({means[(d, e, winner)]:.3f} vs {means[(d, e, loser)]:.3f})"
            for d, e in settings
            if (d, e) not in won
        )
        verdict = "holds" if len(won) == len(settings) else ("fails" if not won else "holds in part")
        lines.append(
            f"- {winner} beats {loser} in {len(won)} of {len(settings)} settings: {verdict}"
            + (f"; not at {lost}" if lost else "")
        )
    return lines + [""]


def _claim_wins(ranks: pd.Series, among: str, means: pd.Series, algorithm: str, dataset: str) -> list[str]:
    lines = [f'**"{algorithm} wins on {dataset}"** (rank among {among}, 1 = best):', ""]
    if dataset not in ranks.index.get_level_values("dataset"):
        return lines + [f"- {dataset} not run", ""]
    here = ranks.xs(dataset, level="dataset")
    if algorithm not in here.index.get_level_values("algorithm"):
        return lines + [f"- {algorithm} not run on {dataset}", ""]
    cells = []
    for eps, group in here.groupby(level="eps"):
        best = group.idxmin()[-1]
        mine = group.get((eps, algorithm))
        cells.append((eps, mine, best, means[(dataset, eps, best)]))
    first = [e for e, mine, _, _ in cells if mine == 1]
    verdict = "holds" if len(first) == len(cells) else ("fails" if not first else "holds in part")
    detail = "; ".join(
        f"ε = {e:g}: #{int(mine) if pd.notna(mine) else '—'} (best {best} {acc:.3f})" for e, mine, best, acc in cells
    )
    return lines + [f"- {algorithm} is first at {len(first)} of {len(cells)} ε: {verdict}. {detail}", ""]


def claim_weak_at_small_eps(ranks: pd.Series, among: str, means: pd.Series, algorithms: tuple[str, ...]) -> list[str]:
    """Markdown lines checking "``algorithms`` are weak at small ε": at each dataset's two smallest ε,
    rank among ``among`` (``ranks``) and accuracy against the majority class (``means``)."""
    lines = [
        (
            f'**"{" and ".join(algorithms)} are weak at small ε"** (at the two smallest ε of each '
            f"dataset: rank among {among}, and accuracy against the majority class):"
        ),
        "",
    ]
    for dataset, here in ranks.groupby(level="dataset"):
        for eps in sorted(here.index.get_level_values("eps").unique())[:2]:
            group = here.xs(eps, level="eps").droplevel("dataset")
            majority = means.get((dataset, eps, "majority"), float("nan"))
            parts = []
            for name in algorithms:
                if name not in group.index:
                    parts.append(f"{name} not run")
                    continue
                weak = group[name] > len(group) / 2 or means[(dataset, eps, name)] <= majority
                parts.append(
                    f"{name} #{int(group[name])}/{len(group)}, {means[(dataset, eps, name)]:.3f}"
                    f" ({'weak' if weak else 'not weak'})"
                )
            lines.append(f"- {dataset} ε = {eps:g} (majority {majority:.3f}): " + "; ".join(parts))
    return lines + [""]
