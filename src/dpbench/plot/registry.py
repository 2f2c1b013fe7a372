"""Every figure ``dpbench-plot`` can draw: name → recipe (a function of the loaded data → Figure).

A recipe's ``load`` turns the results paths into what ``draw`` and ``table`` receive: by default
all results rows as one DataFrame; :func:`~dpbench.plot.io.load_jobs` for figures that also need
traces; ``None`` for analytic figures, which read no results and are drawn from ``draw(None)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from matplotlib.figure import Figure

from dpbench.plot import (
    chen_lee,
    deviations,
    generic,
    han,
    kuru,
    kusner,
    leaderboard,
    liu,
)
from dpbench.plot.io import load_jobs, load_results


@dataclass(frozen=True)
class FigureRecipe:
    """A figure; ``table``, when set, also writes a markdown table next to it; ``load`` reads the
    results paths (None: an analytic figure, no results needed)."""

    name: str
    description: str
    draw: Callable[[Any], Figure]
    filename: str
    table: Callable[[Any], str] | None = None
    load: Callable[[list[str]], Any] | None = load_results


FIGURES: dict[str, FigureRecipe] = {
    recipe.name: recipe
    for recipe in (
        FigureRecipe(
            "accuracy-vs-eps",
            "test accuracy against ε (mean ± std over folds × reps)",
            generic.accuracy_vs_eps,
            "accuracy_vs_eps",
        ),
        FigureRecipe(
            "objective-vs-eps",
            "training objective against ε (mean ± std over folds × reps)",
            generic.objective_vs_eps,
            "objective_vs_eps",
        ),
        FigureRecipe(
            "chen_lee.fig1",
            "chen_lee Fig. 1: effect of α, β, noise, q, budget strategy, ζ (experiment=chen_lee_fig1)",
            chen_lee.fig1,
            "chen_lee_fig1",
        ),
        FigureRecipe(
            "chen_lee.fig2",
            "chen_lee Fig. 2: gradient and objective evaluations against q (experiment=chen_lee_fig2)",
            chen_lee.fig2,
            "chen_lee_fig2",
        ),
        FigureRecipe(
            "chen_lee.fig3",
            "chen_lee Fig. 3: accuracy and objective against ε, logistic regression (experiment=chen_lee_fig3), + ranked table",
            chen_lee.fig3,
            "chen_lee_fig3",
            chen_lee.comparison_table,
        ),
        FigureRecipe(
            "chen_lee.fig4",
            "chen_lee Fig. 4: accuracy and objective against ε, SVM (experiment=chen_lee_fig4), + ranked table",
            chen_lee.fig3,
            "chen_lee_fig4",
            chen_lee.comparison_table,
        ),
        FigureRecipe(
            "kuru.fig1",
            "kuru_acc Fig. 1: DP-SHB rate (3.18) and bound (3.17) on a 2-D quadratic against β and T (analytic, no results)",
            kuru.fig1,
            "kuru_fig1",
            load=None,
        ),
        FigureRecipe(
            "kuru.fig2",
            "kuru_acc Fig. 2: optimal noise b_t of DP-MASG-opt against t, κ = 20 (analytic, no results)",
            kuru.fig2,
            "kuru_fig2",
            load=None,
        ),
        FigureRecipe(
            "kuru.fig3",
            "kuru_acc Fig. 3: log10(F(x_t) − F*) per method × c, a line per T, m = n (experiment=kuru_fig3), + summary with claims",
            kuru.fig3,
            "kuru_fig3",
            kuru.summary,
            load_jobs,
        ),
        FigureRecipe(
            "han.fig1",
            "han_pwa Fig. 1: objective against iterations k, private vs regular subgradient method, a panel per step size (experiment=han_fig1), + summary with claims",
            han.fig1,
            "han_fig1",
            han.summary,
        ),
        FigureRecipe(
            "han.fig2",
            "han_pwa Fig. 2: objective (mean ± 2 std) against the box half-width c, four mechanisms and f* (experiment=han_fig2), + summary with claims",
            han.fig2,
            "han_fig2",
            han.summary,
        ),
        FigureRecipe(
            "han.fig3",
            "han_pwa Fig. 3: objective (mean ± 2 std) against the number of pieces m, four mechanisms and f* (experiment=han_fig3), + summary with claims",
            han.fig3,
            "han_fig3",
            han.summary,
        ),
        FigureRecipe(
            "kuru.fig4",
            "kuru_acc Fig. 4: as Fig. 3 with batch size m = 1000 (experiment=kuru_fig4), + summary with claims",
            kuru.fig3,
            "kuru_fig4",
            kuru.summary,
            load_jobs,
        ),
        FigureRecipe(
            "liu.fig1",
            "liu_dda Fig. 1: ℓ2-SVM suboptimality and test accuracy against epochs, Alg. 1 (1, 2 edges) vs all nodes [19], ε = 0.8 (experiment=liu_fig1), + summary with claims",
            liu.fig1,
            "liu_fig1",
            liu.summary,
            load_jobs,
        ),
        FigureRecipe(
            "liu.fig2",
            "liu_dda Fig. 2: ℓ2-SVM final suboptimality and test accuracy against ε (mean ± SE) (experiment=liu_fig2), + summary with claims",
            liu.fig2,
            "liu_fig2",
            liu.summary,
            load_jobs,
        ),
        FigureRecipe(
            "liu.fig3",
            "liu_dda Fig. 3: as Fig. 1 for the ℓ1-SVM, ε = 0.4 (experiment=liu_fig3), + summary with claims",
            liu.fig1,
            "liu_fig3",
            liu.summary,
            load_jobs,
        ),
        FigureRecipe(
            "liu.fig4",
            "liu_dda Fig. 4: as Fig. 2 for the ℓ1-SVM (experiment=liu_fig4), + summary with claims",
            liu.fig2,
            "liu_fig4",
            liu.summary,
            load_jobs,
        ),
        FigureRecipe(
            "kusner.fig1",
            "kusner_bo Fig. 1: multi-task GP log likelihood against k₁(V, V′), a line per validation size (experiment=kusner_fig1), + summary with claims",
            kusner.fig1,
            "kusner_fig1",
            kusner.summary,
        ),
        FigureRecipe(
            "leaderboard",
            "every private method ranked per dataset × ε (mean ± 95% CI), average rank, Friedman test and Nemenyi critical difference; refuses mixed relations or configurations",
            leaderboard.figure,
            "leaderboard",
            leaderboard.table,
        ),
        FigureRecipe(
            "deviations",
            "why reproductions differ: each fidelity mode (paper as printed, authors' code) against fidelity=correct per method, dataset and ε, with 95% intervals, and the papers' claims per mode (experiment=deviations_<paper>)",
            deviations.figure,
            "deviations",
            deviations.table,
        ),
        FigureRecipe(
            "kusner.utility",
            "kusner_bo beyond the paper: |ṽ − max v_t|, validation and test accuracy of λ̃ against ε (experiment=kusner_utility or kusner_utility_logreg), + summary",
            kusner.utility,
            "kusner_utility",
            kusner.summary,
        ),
    )
}
