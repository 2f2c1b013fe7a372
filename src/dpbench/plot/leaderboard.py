"""The cross-paper leaderboard: every private method ranked per dataset × ε, with confidence
intervals and a test of which differences in average rank are significant.

Per cell (dataset, ε): each method's mean test accuracy over folds × reps with a 95% Student-t
interval, and its rank among the private methods (1 = best, ties averaged). Over the cells where
every private method ran (complete blocks), the average ranks are compared by the Friedman test and
the Nemenyi critical difference CD = q_{0.05}(k, ∞)/√2 · √(k(k + 1)/(6N)) for k methods and N cells
(Demšar, "Statistical comparisons of classifiers over multiple data sets", JMLR 2006): two methods
whose average ranks differ by more than CD differ significantly at the 5% level.

Only comparable rows are ranked: the private rows must share one neighbouring relation, and each
(method, dataset, ε) one configuration (``config_hash``) — otherwise :func:`check_comparable` refuses,
naming what differs, instead of pooling them.
"""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from scipy import stats  # noqa: E402

from dpbench.errors import DpbenchError  # noqa: E402
from dpbench.plot.generic import method_by_eps_table  # noqa: E402

CELL = ["dataset", "eps"]


def check_comparable(df: pd.DataFrame) -> None:
    """Refuse rows a ranking would pool: private methods under different neighbouring relations, or a
    (method, dataset, ε) with more than one configuration."""
    private = df[df["private"].astype(bool)]
    if "neighbouring" in private.columns and private["neighbouring"].nunique() > 1:
        found = ", ".join(f"{r} ({', '.join(sorted(g['algorithm'].unique()))})" for r, g in private.groupby("neighbouring"))
        raise DpbenchError(f"the private rows mix neighbouring relations: {found}; rank one relation at a time")
    if "config_hash" in df.columns:
        configs = df.groupby(["algorithm", *CELL])["config_hash"].nunique()
        mixed = configs[configs > 1]
        if len(mixed):
            (algorithm, dataset, eps), count = next(iter(mixed.items()))
            raise DpbenchError(
                f"{len(mixed)} (method, dataset, ε) cell(s) hold more than one configuration, e.g. {algorithm} on "
                f"{dataset} at ε = {eps:g} ({count} config_hash values); a leaderboard must not pool them"
            )


def cell_statistics(df: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, ε, algorithm): n, mean test accuracy, the 95% t-interval half-width, private,
    and the rank among the private methods of the cell (1 = best, ties averaged)."""
    grouped = df.groupby([*CELL, "algorithm"])
    out = grouped.agg(n=("test_accuracy", "size"), mean=("test_accuracy", "mean"), std=("test_accuracy", "std"),
                      private=("private", "first")).reset_index()
    t = stats.t.ppf(0.975, np.maximum(out["n"] - 1, 1))
    out["ci95"] = np.where(out["n"] > 1, t * out["std"].fillna(0.0) / np.sqrt(out["n"]), np.nan)
    private = out["private"].astype(bool)
    out["rank"] = np.nan
    out.loc[private, "rank"] = out[private].groupby(CELL)["mean"].rank(ascending=False, method="average")
    return out


def rank_test(cells: pd.DataFrame, alpha: float = 0.05) -> dict:
    """Average ranks over the complete blocks (cells where every private method ran), the Friedman test
    and the Nemenyi critical difference. Keys: ``average_rank`` (Series, best first), ``blocks``,
    ``methods``, ``friedman_statistic``, ``friedman_p``, ``critical_difference`` (NaN when fewer than
    two blocks or three methods: nothing to test)."""
    private = cells[cells["private"].astype(bool)]
    table = private.pivot_table(index=CELL, columns="algorithm", values="mean")
    complete = table.dropna()
    ranks = complete.rank(axis=1, ascending=False, method="average")
    k, n_blocks = complete.shape[1], complete.shape[0]
    result = {
        "average_rank": ranks.mean().sort_values(), "blocks": n_blocks, "methods": k,
        "friedman_statistic": math.nan, "friedman_p": math.nan, "critical_difference": math.nan,
    }
    if k >= 3 and n_blocks >= 2:
        statistic, p = stats.friedmanchisquare(*(complete[c].to_numpy() for c in complete.columns))
        q = stats.studentized_range.ppf(1 - alpha, k, np.inf) / math.sqrt(2)
        result.update(friedman_statistic=float(statistic), friedman_p=float(p),
                      critical_difference=float(q * math.sqrt(k * (k + 1) / (6 * n_blocks))))
    return result


def table(df: pd.DataFrame) -> str:
    """Markdown: the overall ranking (average rank, tie group of the leader, Friedman and Nemenyi),
    then per dataset a method × ε table of mean ± 95% CI half-width (rank)."""
    check_comparable(df)
    cells = cell_statistics(df)
    test = rank_test(cells)
    lines = ["## Leaderboard", ""]
    private_rows = df[df["private"].astype(bool)]
    relation = private_rows["neighbouring"].iloc[0] if "neighbouring" in df.columns and len(private_rows) else "—"
    lines.append(f"{test['methods']} private methods, {test['blocks']} complete (dataset, ε) cells, neighbouring relation "
                 f"`{relation}`; test accuracy, mean over folds × reps.")
    lines.append("")
    average, cd = test["average_rank"], test["critical_difference"]
    best = average.iloc[0] if len(average) else math.nan
    lines += ["| # | method | average rank | within CD of the best |", "|---|---|---|---|"]
    for place, (method, value) in enumerate(average.items(), start=1):
        tied = "—" if math.isnan(cd) else ("yes" if value - best <= cd else "no")
        lines.append(f"| {place} | {method} | {value:.2f} | {tied} |")
    lines.append("")
    if math.isnan(cd):
        lines.append("Too few methods or cells for the Friedman test.")
    else:
        lines.append(f"Friedman χ² = {test['friedman_statistic']:.2f} (p = {test['friedman_p']:.2g}); Nemenyi critical "
                     f"difference at 5 %: {cd:.2f} (Demšar 2006). Methods whose average ranks differ by more are "
                     "significantly different.")
    lines.append("")
    def cell(r) -> str:
        ci = "" if math.isnan(r["ci95"]) else f" ± {r['ci95']:.3f}"
        rank = "" if math.isnan(r["rank"]) else f" (#{r['rank']:g})"
        return f"{r['mean']:.3f}{ci}{rank}"

    for dataset, here in cells.groupby("dataset"):
        lines += method_by_eps_table(dataset, here, cell)
    return "\n".join(lines)


def figure(df: pd.DataFrame) -> Figure:
    """Average rank of each private method over the complete cells (best at the top), with the
    Nemenyi critical difference drawn from the leader: methods inside the bar are not significantly
    worse than it."""
    check_comparable(df)
    test = rank_test(cell_statistics(df))
    average, cd = test["average_rank"], test["critical_difference"]
    fig, ax = plt.subplots(figsize=(6.5, 0.4 * max(len(average), 3) + 1.2))
    positions = np.arange(len(average))[::-1]
    ax.barh(positions, average.to_numpy(), color="tab:blue", alpha=0.7)
    ax.set_yticks(positions, list(average.index))
    if not math.isnan(cd) and len(average):
        best = average.iloc[0]
        ax.axvspan(best, best + cd, color="grey", alpha=0.2, label=f"within CD = {cd:.2f} of the best")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_xlim(0, max(len(average), 1) + 0.5)
    ax.set_xlabel(f"average rank over {test['blocks']} (dataset, ε) cells (1 = best)")
    ax.set_title("Leaderboard")
    fig.tight_layout()
    return fig
