"""Figures of kusner_bo (Kusner, Gardner, Garnett & Weinberger, "Differentially private Bayesian
optimization", ICML 2015) and their summary, from the runs of ``experiment=kusner_fig1`` and
``experiment=kusner_utility`` / ``kusner_utility_logreg``.

* :func:`fig1` — Sec. 6, Fig. 1: the log marginal likelihood of the multi-task GP
  k₁(V, V′) ⊗ k₂(λ, λ′), summed over the ``n_sets`` pairs (V_i, V_i′), against k₁ = 0.05 … 0.95, a
  line per validation size |V| (mean over reps). The curves of different sizes live on very different
  scales, so panel (a) plots each curve minus its maximum over k₁ (0 at its argmax, marked ★; a
  symmetric-log axis, linear within ±1) and panel (b) the raw values, as the paper does.
* :func:`utility` — beyond the paper, which only bounds it: against the run's total ε, mean ± standard
  error over reps of (a) the value error |ṽ − v*| with v* = max_t v_t (dashed: the mean Laplace scale b
  of ṽ; E|Lap(b)| = b, so the two should coincide), (b) the validation gain of λ̃ against that of the
  non-private choice λ̂ = argmax_t v_t and of the best candidate on V, (c) the test accuracy of λ̃
  against that of λ̂. Alg. 3 releases no λ̃, so it appears in (a) only.
* :func:`summary` — the markdown written next to either figure: tables and statements computed from
  the rows present (Fig. 1 rows, tuning rows or both), never from numbers of a particular run.
"""

from __future__ import annotations

import math
from collections import Counter

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from scipy.stats import spearmanr

from dpbench.algorithms.registry import ALGORITHMS
from dpbench.errors import DpbenchError
from dpbench.plot.configs import check_one_configuration
from dpbench.plot.style import variant

__all__ = ["KusnerResultsError", "fig1", "summary", "utility"]

STUDY = "kusner_mtgp_likelihood"
LABELS = {method: ALGORITHMS[method].label for method in ("kusner_alg1", "kusner_alg2", "kusner_alg3")}
STUDY_COLUMNS = (
    "dataset",
    "target",
    "validation_size",
    "rep",
    "n_sets",
    "k1",
    "log_likelihood",
    "max_abs_gain_change",
    "mean_abs_gain_change",
    "gain_std_across_candidates",
    "n_candidates",
    "n_train",
)
STUDY_SETTING = ("dataset", "target", "n_sets", "n_candidates", "n_train")  # one value per Fig. 1
METRICS = (
    "value_error",
    "laplace_scale",
    "gain_released",
    "gain_best_observed",
    "gain_best",
    "test_accuracy",
    "test_accuracy_best_observed",
)
TUNING_COLUMNS = ("dataset", "target", "gain", "eps", "rep", "validation_size") + METRICS
SERIES = ["target", "gain", "algorithm"]  # a line of :func:`utility`
SE_MARGIN = 2.0  # λ̃ "matches" λ̂ when their mean validation-gain difference is at most this many SEs
VALUE_TOLERANCE = 0.01  # ṽ "within one accuracy point" of v*
EPS_LABEL = "ε (the run's total budget; Alg. 1–2: ε/2 for λ̃ and ε/2 for ṽ, Alg. 3: ε for ṽ)"


class KusnerResultsError(DpbenchError, ValueError):
    """The results cannot draw a kusner_bo figure (rows or columns missing, settings mixed); the
    command line prints it as a one-line error."""


# ============================================================================= data
def _require(df: pd.DataFrame, columns, what: str, hint: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise KusnerResultsError(f"the results lack column(s) {', '.join(missing)} needed for {what}; {hint}")


def _one_setting(rows: pd.DataFrame, columns, hint: str) -> None:
    """Refuse rows mixing values of ``columns``: one figure shows one sweep."""
    for column in columns:
        if rows[column].nunique(dropna=False) > 1:
            values = ", ".join(map(str, sorted(rows[column].unique())))
            raise KusnerResultsError(f"these results mix {column} ({values}); {hint}")


def _study_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The Fig. 1 rows (algorithm kusner_mtgp_likelihood) of one setting, columns checked, one
    configuration per validation size (:mod:`dpbench.plot.configs`)."""
    hint = "run `dpbench -m experiment=kusner_fig1` and plot its sweep directory"
    _require(df, ("algorithm",), "kusner.fig1", hint)
    rows = df[df["algorithm"] == STUDY]
    if rows.empty:
        raise KusnerResultsError(f"no rows of algorithm {STUDY} (the Fig. 1 study) in these results; {hint}")
    _require(rows, STUDY_COLUMNS, "kusner.fig1", hint)
    _one_setting(rows, STUDY_SETTING, "give one kusner_fig1 sweep per figure")
    check_one_configuration(rows, ["validation_size"], "kusner.fig1")
    return rows


def _tuning_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of Algorithms 1–3 of one dataset and validation size, columns checked, one
    configuration per line and ε (:mod:`dpbench.plot.configs`)."""
    hint = "run `dpbench -m experiment=kusner_utility` (or kusner_utility_logreg) and plot its sweep directory"
    _require(df, ("algorithm",), "kusner.utility", hint)
    rows = df[df["algorithm"].isin(LABELS)]
    if rows.empty:
        raise KusnerResultsError(f"no rows of {', '.join(LABELS)} in these results; {hint}")
    _require(rows, TUNING_COLUMNS, "kusner.utility", hint)
    _one_setting(rows, ("dataset", "validation_size"), "give one dataset and validation size per figure")
    check_one_configuration(rows, [*SERIES, "eps"], "kusner.utility")
    return rows


def _curves(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (validation_size, k1) of the Fig. 1 rows: the log likelihood averaged over reps
    (``log_likelihood``), minus its maximum over k₁ for that size (``relative``, ≤ 0), and ``reps``."""
    grouped = rows.groupby(["validation_size", "k1"])
    out = pd.DataFrame({"log_likelihood": grouped["log_likelihood"].mean(), "reps": grouped.size()}).reset_index()
    out["relative"] = out["log_likelihood"] - out.groupby("validation_size")["log_likelihood"].transform("max")
    return out.sort_values(["validation_size", "k1"], ignore_index=True)


def _size_stats(rows: pd.DataFrame) -> pd.DataFrame:
    """Per validation size of the Fig. 1 rows: reps, the argmax over k₁ of the mean log likelihood and
    its maximum, the smallest and largest k₁ and the gap ℓ(largest) − ℓ(smallest), the largest
    |f_V − f_V′| over reps, and the means over reps of mean |f_V − f_V′| and of the std of f_V over
    candidates."""
    curves = _curves(rows)
    records = []
    for size, here in curves.groupby("validation_size"):
        best = here.loc[here["log_likelihood"].idxmax()]
        low, high = here.iloc[0], here.iloc[-1]  # sorted by k1
        runs = rows[rows["validation_size"] == size]
        records.append(
            {
                "validation_size": int(size),
                "reps": int(here["reps"].max()),
                "argmax_k1": float(best["k1"]),
                "max_log_likelihood": float(best["log_likelihood"]),
                "k1_low": float(low["k1"]),
                "k1_high": float(high["k1"]),
                "gap": float(high["log_likelihood"] - low["log_likelihood"]),
                "max_abs_gain_change": float(runs["max_abs_gain_change"].max()),
                "mean_abs_gain_change": float(runs["mean_abs_gain_change"].mean()),
                "gain_std": float(runs["gain_std_across_candidates"].mean()),
            }
        )
    return pd.DataFrame(records)


def _tuning_stats(rows: pd.DataFrame) -> pd.DataFrame:
    """Per (target, gain, algorithm, eps) of the Alg. 1–3 rows: ``reps``, ``<metric>_mean`` and
    ``<metric>_se`` (std ddof 1 / √(non-NaN reps); NaN for one rep) of each of METRICS and of
    ``choice_gap`` = gain_best_observed − gain_released (per rep), and the line's ``label``."""
    rows = rows.assign(choice_gap=rows["gain_best_observed"] - rows["gain_released"])
    metrics = [*METRICS, "choice_gap"]
    grouped = rows.groupby([*SERIES, "eps"])
    means, stds, counts = grouped[metrics].mean(), grouped[metrics].std(ddof=1), grouped[metrics].count()
    out = pd.concat([means.add_suffix("_mean"), (stds / np.sqrt(counts)).add_suffix("_se")], axis=1)
    out.insert(0, "reps", grouped.size())
    out = out.reset_index()
    several = rows.groupby(["target", "gain"]).ngroups > 1
    out["label"] = [
        LABELS[a] + (f" ({t}, {g})" if several else "") for t, g, a in zip(out["target"], out["gain"], out["algorithm"])
    ]
    return out.sort_values([*SERIES, "eps"], ignore_index=True)


def _series(stats: pd.DataFrame) -> list[tuple[tuple, pd.DataFrame]]:
    """The lines of :func:`utility`: (target, gain, algorithm) → its rows sorted by ε."""
    return [(key, here.sort_values("eps")) for key, here in stats.groupby(SERIES, sort=True)]


# ============================================================================= figures
def _study_title(rows: pd.DataFrame) -> str:
    first = rows.iloc[0]
    reps = rows.groupby("validation_size")["rep"].nunique()
    n = f"{reps.min()}" if reps.min() == reps.max() else f"{reps.min()}–{reps.max()}"
    return (
        f"kusner_bo Fig. 1: {first['dataset']}, target {first['target']}, {int(first['n_sets'])} pairs (V, V′), "
        f"|Λ| = {int(first['n_candidates'])} candidates, n_train = {int(first['n_train'])}, {n} rep(s)"
    )


def fig1(df: pd.DataFrame) -> Figure:
    """kusner_bo Fig. 1 (Sec. 6): multi-task GP log likelihood against k₁(V, V′), a line per validation
    size (mean over reps). (a) each curve minus its maximum over k₁ (symmetric-log y; ★ at the argmax),
    since the sizes' likelihoods differ in scale; (b) the raw log likelihood.

    Raises KusnerResultsError (a ValueError) without kusner_mtgp_likelihood rows, with missing columns,
    or when the rows mix datasets, targets, n_sets, n_candidates or n_train."""
    rows = _study_rows(df)
    curves = _curves(rows)
    sizes = sorted(curves["validation_size"].unique())
    cmap = plt.get_cmap("viridis")
    fig, (ax_rel, ax_raw) = plt.subplots(1, 2, figsize=(11.0, 4.4))
    for i, size in enumerate(sizes):
        here = curves[curves["validation_size"] == size]
        colour = cmap(0.9 * i / max(1, len(sizes) - 1))
        best = here.loc[here["log_likelihood"].idxmax()]
        for ax, column in ((ax_rel, "relative"), (ax_raw, "log_likelihood")):
            ax.plot(
                here["k1"].to_numpy(float),
                here[column].to_numpy(float),
                color=colour,
                marker="o",
                ms=3,
                label=f"|V| = {int(size)}",
            )
            ax.plot([best["k1"]], [best[column]], color=colour, marker="*", ms=14, mec="black", ls="none", gid="argmax")
    ax_rel.set_yscale("symlog", linthresh=1.0)
    ax_rel.set_ylabel("log likelihood − max over k₁")
    ax_rel.set_title("(a) each curve minus its maximum over k₁ (★ argmax)", fontsize=10)
    ax_raw.set_ylabel("log likelihood Σᵢ log p(F_Vᵢ, F_Vᵢ′ | k₁)")
    ax_raw.set_title("(b) log likelihood (as in the paper)", fontsize=10)
    for ax in (ax_rel, ax_raw):
        ax.set_xlabel("k₁(V, V′)")
        ax.grid(True, alpha=0.3, which="both")
        ax.legend(fontsize=8)
    fig.suptitle(_study_title(rows), fontsize=10)
    fig.tight_layout()
    return fig


def _errorbar(ax, here: pd.DataFrame, metric: str, colour, marker: str, label: str, **style) -> None:
    ax.errorbar(
        here["eps"].to_numpy(float),
        here[f"{metric}_mean"].to_numpy(float),
        yerr=here[f"{metric}_se"].fillna(0.0).to_numpy(float),
        color=colour,
        marker=marker,
        ms=5,
        capsize=3,
        label=label,
        **style,
    )


def _tuning_title(rows: pd.DataFrame, stats: pd.DataFrame) -> str:
    combos = stats[["target", "gain"]].drop_duplicates()
    what = f", target {combos['target'].iloc[0]}, gain {combos['gain'].iloc[0]}" if len(combos) == 1 else ""
    reps = stats["reps"]
    n = f"{reps.min()}" if reps.min() == reps.max() else f"{reps.min()}–{reps.max()}"
    return (
        f"kusner_bo beyond the paper: private tuning on {rows['dataset'].iloc[0]}{what}, "
        f"|V| = {int(rows['validation_size'].iloc[0])}, {n} reps per point (mean ± SE)"
    )


def utility(df: pd.DataFrame) -> Figure:
    """Utility of kusner_bo Algorithms 1–3 against the run's total ε (log x), mean ± SE over reps, a
    line per algorithm (and per target and gain when the rows hold several):
    (a) |ṽ − max_t v_t| (log y) with the mean Laplace scale b of ṽ dashed in the same colour
    (E|Lap(b)| = b, a check visible on the plot); (b) validation gain of λ̃ against the non-private
    λ̂ = argmax_t v_t (black dashed, the line's marker) and the best candidate on V (grey dotted);
    (c) test accuracy of λ̃ against that of λ̂. Alg. 3 releases no λ̃ and is left out of (b) and (c).

    Raises KusnerResultsError (a ValueError) without Alg. 1–3 rows, with missing columns, or when the
    rows mix datasets or validation sizes."""
    rows = _tuning_rows(df)
    stats = _tuning_stats(rows)
    fig, (ax_v, ax_g, ax_t) = plt.subplots(1, 3, figsize=(16.0, 4.6))
    drawn_best: set = set()
    drawn: Counter[str] = Counter()
    for (target, gain, algorithm), here in _series(stats):
        look = variant(algorithm, drawn[algorithm])  # the method's style (dpbench.plot.style); its other series vary it
        drawn[algorithm] += 1
        colour, marker, name = look.colour, look.marker, here["label"].iloc[0]
        _errorbar(ax_v, here, "value_error", colour, marker, name)
        ax_v.plot(here["eps"].to_numpy(float), here["laplace_scale_mean"].to_numpy(float), color=colour, ls="--")
        if here["gain_released_mean"].isna().all():
            continue
        _errorbar(ax_g, here, "gain_released", colour, marker, f"λ̃, {name}")
        _errorbar(ax_g, here, "gain_best_observed", "black", marker, f"λ̂ (non-private), {name}", ls="--", mfc="none")
        if (target, gain) not in drawn_best:
            drawn_best.add((target, gain))
            best = stats[(stats["target"] == target) & (stats["gain"] == gain)].groupby("eps")["gain_best_mean"].mean()
            suffix = "" if len(stats[["target", "gain"]].drop_duplicates()) == 1 else f" ({target}, {gain})"
            ax_g.plot(
                best.index.to_numpy(float),
                best.to_numpy(float),
                color="grey",
                ls=":",
                lw=2,
                label=f"best candidate on V{suffix}",
            )
        _errorbar(ax_t, here, "test_accuracy", colour, marker, f"λ̃, {name}")
        _errorbar(
            ax_t, here, "test_accuracy_best_observed", "black", marker, f"λ̂ (non-private), {name}", ls="--", mfc="none"
        )
    handles, labels = ax_v.get_legend_handles_labels()
    handles.append(Line2D([], [], color="grey", ls="--"))
    labels.append("dashed: mean Laplace scale b of ṽ (= E|Lap(b)|)")
    ax_v.legend(handles, labels, fontsize=7)
    ax_v.set_yscale("log")
    ax_v.set_ylabel("|ṽ − max_t v_t| (mean ± SE)")
    ax_v.set_title("(a) error of the released value ṽ", fontsize=10)
    ax_g.set_ylabel("validation gain on V (mean ± SE)")
    ax_g.set_title("(b) validation gain of λ̃", fontsize=10)
    ax_t.set_ylabel("test accuracy (mean ± SE)")
    ax_t.set_title("(c) test accuracy of λ̃", fontsize=10)
    for ax in (ax_g, ax_t):
        if ax.lines:
            ax.legend(fontsize=7)
        else:
            ax.text(0.5, 0.5, "no λ̃ in these runs\n(Alg. 3 releases ṽ only)", transform=ax.transAxes, ha="center")
    for ax in (ax_v, ax_g, ax_t):
        ax.set_xscale("log")
        ax.set_xlabel(EPS_LABEL, fontsize=8)
        ax.grid(True, alpha=0.3, which="both")
    fig.suptitle(_tuning_title(rows, stats), fontsize=10)
    fig.tight_layout()
    return fig


# ============================================================================= summary
def _spearman(x, y) -> float:
    """Spearman rank correlation; NaN when either side is constant or has fewer than two values."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(spearmanr(x, y)[0])


def _fmt_rho(rho: float) -> str:
    return "undefined (constant)" if math.isnan(rho) else f"{rho:.2f}"


def _pm(mean: float, se: float) -> str:
    if pd.isna(mean):
        return "—"
    return f"{mean:.4g} ± " + ("n/a" if pd.isna(se) else f"{se:.2g}")


def _eps_list(values) -> str:
    return ", ".join(f"{e:g}" for e in values)


def _study_claims(stats: pd.DataFrame) -> list[tuple[str, str, list[str]]]:
    """Sec. 6's claim (1) that the largest k₁ is most likely, for every size; (2) that larger validation
    sets favour large k₁ more strongly (Spearman ρ(|V|, ℓ(largest k₁) − ℓ(smallest k₁)) > 0); and the
    check (3) |f_V − f_V′| ≤ 1/|V| (gains are means over V of per-row scores in [0, 1])."""
    top = stats["k1_high"].max()
    misses = stats[~np.isclose(stats["argmax_k1"], top)]
    evidence = [f"|V| = {r.validation_size}: argmax k₁ = {r.argmax_k1:g}" for r in stats.itertuples()]
    if not misses.empty:
        where = "; ".join(f"|V| = {r.validation_size} (argmax k₁ = {r.argmax_k1:g})" for r in misses.itertuples())
        evidence.append(f"not at k₁ = {top:g} for: {where}")
    out = [
        (
            f"(1) the largest value k₁ = {top:g} is most likely, for every validation size",
            "HOLDS" if misses.empty else "FAILS",
            evidence,
        )
    ]

    low, high = stats["k1_low"].min(), stats["k1_high"].max()
    claim = (
        f"(2) larger validation sets favour large k₁ more strongly (ℓ(k₁ = {high:g}) − ℓ(k₁ = {low:g}) grows with |V|)"
    )
    if len(stats) < 2:
        out.append((claim, "NOT TESTABLE", ["one validation size only"]))
    else:
        rho = _spearman(stats["validation_size"], stats["gap"])
        out.append(
            (
                claim,
                "HOLDS" if rho > 0 else "FAILS",
                [
                    ", ".join(f"|V| = {r.validation_size}: {r.gap:.4g}" for r in stats.itertuples()),
                    f"Spearman ρ(|V|, gap) = {_fmt_rho(rho)}",
                ],
            )
        )

    ratio = stats["max_abs_gain_change"] * stats["validation_size"]
    out.append(
        (
            "(3) check: a neighbour V′ moves every gain by at most 1/|V| (|V| · max |f_V − f_V′| ≤ 1)",
            "HOLDS" if bool((ratio <= 1.0 + 1e-9).all()) else "FAILS",
            [", ".join(f"|V| = {m}: {x:.3g}" for m, x in zip(stats["validation_size"], ratio))],
        )
    )
    return out


def _study_summary(rows: pd.DataFrame) -> list[str]:
    stats = _size_stats(rows)
    low, high = stats["k1_low"].min(), stats["k1_high"].max()
    lines = [
        f"# {_study_title(rows)}",
        "",
        (
            "ℓ(k₁) = Σᵢ log p([F_Vᵢ; F_Vᵢ′] | k₁), the multi-task GP log marginal likelihood summed over the pairs, "
            "averaged over reps. Fig. 1's panel (a) plots ℓ(k₁) − max over k₁ per size. |Δf| = |f_V − f_V′| over "
            "pairs and candidates."
        ),
        "",
        (
            f"| \\|V\\| | reps | argmax k₁ | max ℓ | ℓ(k₁ = {high:g}) − ℓ(k₁ = {low:g}) | max \\|Δf\\| | "
            "\\|V\\| · max \\|Δf\\| | mean \\|Δf\\| | std of f_V over candidates |"
        ),
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in stats.itertuples():
        lines.append(
            f"| {r.validation_size} | {r.reps} | {r.argmax_k1:g} | {r.max_log_likelihood:.6g} | {r.gap:.4g} | "
            f"{r.max_abs_gain_change:.3g} | {r.max_abs_gain_change * r.validation_size:.3g} | "
            f"{r.mean_abs_gain_change:.3g} | {r.gain_std:.3g} |"
        )
    lines += ["", "## Claims of kusner_bo Sec. 6 (Fig. 1)", ""]
    for claim, verdict, evidence in _study_claims(stats):
        lines += [f"**{claim}: {verdict}**", ""] + [f"- {e}" for e in evidence] + [""]
    return lines


def _findings(here: pd.DataFrame) -> list[str]:
    """Statements on one line of :func:`utility` (rows sorted by ε)."""
    lines = []
    if here["gain_released_mean"].isna().all():
        lines.append("- **λ̃ matches the non-private choice**: no λ̃ (Alg. 3 releases ṽ only)")
    else:
        gap, se = here["choice_gap_mean"], here["choice_gap_se"]
        matches = here.loc[gap <= SE_MARGIN * se, "eps"].tolist()
        text = f"at ε = {_eps_list(matches)}" if matches else "at no ε in the grid"
        tail = here.loc[~(gap <= SE_MARGIN * se), "eps"]
        if matches and (tail.empty or tail.max() < min(matches)):
            text += f" (every ε ≥ {min(matches):g})"
        lines.append(f"- **λ̃ matches the non-private choice** (mean gain(λ̂) − gain(λ̃) ≤ {SE_MARGIN:g} SE): {text}")
    rho = _spearman(here["eps"], here["value_error_mean"])
    if len(here) < 2:
        falls = "NOT TESTABLE (one ε)"
    else:
        falls = ("YES" if rho < 0 else "NO") + f" (Spearman ρ = {_fmt_rho(rho)})"
    lines.append(f"- **value error falls with ε**: {falls}")
    close = here.loc[here["value_error_mean"] < VALUE_TOLERANCE, "eps"]
    lines.append(
        f"- **smallest ε with mean |ṽ − v*| < {VALUE_TOLERANCE:g}**: "
        + (f"ε = {close.min():g}" if not close.empty else "none in the grid")
    )
    ratio = here["value_error_mean"] / here["laplace_scale_mean"]
    lines.append(
        f"- mean |ṽ − v*| / mean Laplace scale b over ε: {ratio.min():.3g} … {ratio.max():.3g} "
        "(≈ 1 expected: E|Lap(b)| = b)"
    )
    return lines


def _tuning_summary(rows: pd.DataFrame) -> list[str]:
    stats = _tuning_stats(rows)
    lines = [
        f"# {_tuning_title(rows, stats)}",
        "",
        (
            "Cells: mean ± standard error over reps (n/a for one rep; — where undefined: Alg. 3 releases no λ̃). "
            "ε is the run's total budget. v* = max_t v_t (non-private), λ̂ = argmax_t v_t (non-private), λ̃ the "
            f"released hyper-parameter; λ̃ matches λ̂ when mean gain(λ̂) − gain(λ̃) ≤ {SE_MARGIN:g} SE of that "
            "per-rep difference."
        ),
        "",
    ]
    for (target, gain, algorithm), here in _series(stats):
        lines += [
            f"## {LABELS[algorithm]}: target {target}, gain {gain}",
            "",
            (
                "| ε | reps | \\|ṽ − v*\\| | Laplace scale b | gain(λ̃) | gain(λ̂) | gain(λ̂) − gain(λ̃) | "
                "test acc. λ̃ | test acc. λ̂ |"
            ),
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for _, r in here.iterrows():
            cells = [
                _pm(r[f"{m}_mean"], r[f"{m}_se"])
                for m in (
                    "value_error",
                    "laplace_scale",
                    "gain_released",
                    "gain_best_observed",
                    "choice_gap",
                    "test_accuracy",
                    "test_accuracy_best_observed",
                )
            ]
            lines.append(f"| {r['eps']:g} | {r['reps']} | " + " | ".join(cells) + " |")
        lines += [""] + _findings(here) + [""]
    return lines


def summary(df: pd.DataFrame) -> str:
    """Markdown next to :func:`fig1` and :func:`utility`, for whatever the rows hold: for Fig. 1 rows a
    table per validation size (argmax k₁, the likelihood gap between the largest and smallest k₁,
    |f_V − f_V′|) and Sec. 6's claims with computed verdicts; for Alg. 1–3 rows a table per
    (target, gain, algorithm) × ε and computed statements (at which ε λ̃ matches the non-private λ̂,
    whether |ṽ − v*| falls with ε, the smallest ε where it is below VALUE_TOLERANCE).

    Raises KusnerResultsError (a ValueError) when there are neither kind of rows."""
    _require(
        df, ("algorithm",), "a kusner_bo summary", "were these written by experiment=kusner_fig1 or kusner_utility?"
    )
    has_study, has_tuning = (df["algorithm"] == STUDY).any(), df["algorithm"].isin(LABELS).any()
    if not (has_study or has_tuning):
        raise KusnerResultsError(
            f"no rows of {STUDY} (Fig. 1) or of {', '.join(LABELS)} in these results; run "
            "`dpbench -m experiment=kusner_fig1` or `experiment=kusner_utility` first"
        )
    lines = _study_summary(_study_rows(df)) if has_study else []
    lines += _tuning_summary(_tuning_rows(df)) if has_tuning else []
    return "\n".join(lines)
