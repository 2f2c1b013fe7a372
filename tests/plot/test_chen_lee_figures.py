"""chen_lee Fig. 1 and Fig. 2 presets end to end on a small synthetic stand-in, then their figures."""

import pandas as pd
import pytest

SMALL = [
    "dataset=synthetic_logreg",
    "dataset.n=2000",
    "dataset.seed=1",
    "cv.folds=2",
    "reps=1",
    "hydra/launcher=joblib",
    "progress=false",
]


@pytest.mark.slow
def test_fig1_preset_sweeps_one_parameter_at_a_time_and_renders(cli, tmp_path):
    variants = "default,alpha_0.1,beta_0.5,noise_gaussian,q_0.5,budget_must,zeta_0.1"
    result = cli(
        ["-m", "experiment=chen_lee_fig1", f"variant={variants}", f"hydra.sweep.dir={tmp_path / 's'}", *SMALL], tmp_path
    )
    assert result.returncode == 0, result.stderr[-3000:]
    df = pd.concat(map(pd.read_parquet, (tmp_path / "s").rglob("results.parquet")))
    assert len(df) == 2 * 7 * 2  # ε ∈ {0.05, 0.2} × 7 variants × 2 folds
    assert (df["eps_spent"] <= df["eps"]).all()
    by_variant = df.drop_duplicates("variant").set_index("variant")["params"]
    assert '"alpha": 0.1' in by_variant["alpha_0.1"] and '"zeta": 0.1' in by_variant["zeta_0.1"]
    plot = cli(["chen_lee.fig1", str(tmp_path / "s"), "--out", str(tmp_path / "f")], tmp_path, module="dpbench.plot")
    assert plot.returncode == 0, plot.stderr
    assert (tmp_path / "f" / "chen_lee_fig1.png").stat().st_size > 10_000
    assert (tmp_path / "f" / "chen_lee_fig1.pdf").is_file()


@pytest.mark.slow
def test_fig2_preset_counts_evaluations_and_renders(cli, tmp_path):
    result = cli(
        [
            "-m",
            "experiment=chen_lee_fig2",
            "algorithm.sampling_rate=0.05,0.5",
            f"hydra.sweep.dir={tmp_path / 's'}",
            *SMALL,
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    df = pd.concat(map(pd.read_parquet, (tmp_path / "s").rglob("results.parquet")))
    assert set(df["eps"]) == {0.4}
    assert (df["grad_evals"] > 0).all() and (df["obj_evals"] > 0).all()
    plot = cli(["chen_lee.fig2", str(tmp_path / "s"), "--out", str(tmp_path / "f")], tmp_path, module="dpbench.plot")
    assert plot.returncode == 0, plot.stderr
    assert (tmp_path / "f" / "chen_lee_fig2.png").stat().st_size > 10_000


def test_fig1_without_variants_fails_clearly(cli, tmp_path):
    pd.DataFrame({"variant": [None], "params": ["{}"], "eps": [1.0], "test_accuracy": [0.5]}).to_parquet(
        tmp_path / "results.parquet"
    )
    plot = cli(["chen_lee.fig1", str(tmp_path), "--out", str(tmp_path / "f")], tmp_path, module="dpbench.plot")
    assert plot.returncode == 2
    assert "experiment=chen_lee_fig1" in plot.stderr


@pytest.mark.slow
def test_fig4_preset_uses_huber_only_for_smooth_baselines_and_writes_a_ranked_table(cli, tmp_path):
    result = cli(
        [
            "-m",
            "experiment=chen_lee_fig4",
            "algorithm=dp_blsgd,objpert,majority",
            "privacy.eps=0.5,2.0",
            f"hydra.sweep.dir={tmp_path / 's'}",
            *SMALL,
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    df = pd.concat(map(pd.read_parquet, (tmp_path / "s").rglob("results.parquet")))
    assert dict(df.groupby("algorithm")["loss"].first()) == {
        "dp_blsgd": "hinge",
        "objpert": "huber_hinge",
        "majority": "hinge",
    }
    plot = cli(["chen_lee.fig4", str(tmp_path / "s"), "--out", str(tmp_path / "f")], tmp_path, module="dpbench.plot")
    assert plot.returncode == 0, plot.stderr
    table = (tmp_path / "f" / "chen_lee_fig4.md").read_text()
    assert "### synthetic_logreg" in table and "(#1)" in table and "| majority |" in table
    assert (tmp_path / "f" / "chen_lee_fig4.png").stat().st_size > 10_000


def test_accuracy_table_ranks_private_methods_only():
    from dpbench.plot.generic import accuracy_table

    df = pd.DataFrame(
        {
            "dataset": ["d"] * 6,
            "algorithm": ["a", "a", "b", "b", "nonprivate", "nonprivate"],
            "eps": [1.0] * 6,
            "test_accuracy": [0.8, 0.9, 0.6, 0.7, 0.95, 0.95],
            "private": [True, True, True, True, False, False],
        }
    )
    table = accuracy_table(df)
    assert "| a | 0.850 ± 0.071 (#1) |" in table
    assert "| b | 0.650 ± 0.071 (#2) |" in table
    assert "| nonprivate | 0.950 ± 0.000 |" in table
    assert "mix neighbouring relations" not in table
    one = accuracy_table(df.assign(neighbouring=["add_remove"] * 4 + ["none"] * 2))
    assert "mix neighbouring relations" not in one
    mixed = accuracy_table(df.assign(neighbouring=["add_remove"] * 2 + ["replace_one"] * 2 + ["none"] * 2))
    assert mixed.startswith(
        "**The ranks mix neighbouring relations** (each method at its own relation's ε, "
        "column `neighbouring`): `add_remove`: a; `replace_one`: b."
    )


def _runs(accuracies):
    """One results row per (dataset, ε, algorithm) with the given mean accuracy (two reps around it)."""
    rows = []
    for (dataset, eps, algorithm), acc in accuracies.items():
        for delta in (-0.001, 0.001):
            rows.append(
                {
                    "dataset": dataset,
                    "eps": eps,
                    "algorithm": algorithm,
                    "test_accuracy": acc + delta,
                    "private": algorithm != "majority",
                }
            )
    return pd.DataFrame(rows)


def test_comparison_table_checks_the_papers_claims_from_the_numbers():
    from dpbench.plot.chen_lee import comparison_table

    acc = {}
    for eps in (0.05, 0.1, 0.4):
        acc.update(
            {
                ("bank", eps, "dp_blsgd"): 0.80,
                ("bank", eps, "dp_blgd"): 0.85,
                ("bank", eps, "dp_agd"): 0.82,
                ("bank", eps, "outpert_rsgd"): 0.90,
                ("bank", eps, "objpert"): 0.70,
                ("bank", eps, "dp_sgd"): 0.88,
                ("bank", eps, "majority"): 0.75,
            }
        )
    table = comparison_table(_runs(acc))
    assert "dp_blsgd beats dp_agd in 0 of 3 settings: fails" in table
    assert "dp_blgd beats dp_agd in 3 of 3 settings: holds" in table
    assert "outpert_rsgd is first at 3 of 3 ε: holds" in table
    assert "objpert #6/6, 0.700 (weak)" in table and "dp_sgd #2/6, 0.880 (not weak)" in table

    acc[("bank", 0.4, "dp_blsgd")] = 0.95  # now DP-BLSGD wins once and OutPert-RSGD loses once
    table = comparison_table(_runs(acc))
    assert "dp_blsgd beats dp_agd in 1 of 3 settings: holds in part" in table
    assert "outpert_rsgd is first at 2 of 3 ε: holds in part" in table


def test_the_claims_rank_a_method_only_against_its_own_neighbouring_relation():
    """Under privacy.neighbouring=native OutPert-RSGD and ObjPert hold their ε for replace-one
    neighbours, the others for add/remove: ranked together, OutPert-RSGD (0.90) was first among all
    six; among the replace-one methods (itself, ObjPert) it still is, and the claim says whom it ranks
    among. ObjPert is ranked among the replace-one methods, DP-SGD among the add/remove ones."""
    from dpbench.plot.chen_lee import comparison_table

    acc = {
        ("bank", eps, name): value
        for eps in (0.05, 0.1)
        for name, value in (
            ("dp_blsgd", 0.80),
            ("dp_blgd", 0.85),
            ("dp_agd", 0.82),
            ("outpert_rsgd", 0.90),
            ("objpert", 0.70),
            ("dp_sgd", 0.88),
            ("majority", 0.75),
        )
    }
    runs = _runs(acc)
    relation = {"outpert_rsgd": "replace_one", "objpert": "replace_one", "majority": "none"}
    table = comparison_table(runs.assign(neighbouring=[relation.get(a, "add_remove") for a in runs["algorithm"]]))
    assert '"outpert_rsgd wins on bank"** (rank among the private replace_one methods, 1 = best)' in table
    assert "outpert_rsgd is first at 2 of 2 ε: holds" in table
    assert (
        '"objpert are weak at small ε"** (at the two smallest ε of each dataset: rank among the private replace_one'
        in table
    )
    assert "objpert #2/2, 0.700 (weak)" in table and "dp_sgd #1/4, 0.880 (not weak)" in table


def test_rows_their_epsilon_does_not_cover_are_shown_unranked_and_left_out_of_the_claims():
    """A dataset whose feature ranges were read off its own file (guarantee_valid = False) keeps its numbers
    in the table, without ranks, under a note giving the rows' reason; the claims are checked without it."""
    from dpbench.plot.chen_lee import comparison_table

    acc = {
        (dataset, eps, name): value
        for dataset in ("bank", "ipums_br")
        for eps in (0.05, 0.1)
        for name, value in (("dp_blsgd", 0.80), ("dp_agd", 0.82), ("dp_blgd", 0.85), ("majority", 0.5))
    }
    acc[("ipums_br", 0.1, "dp_blsgd")] = 0.99  # would win once, were ipums_br counted
    runs = _runs(acc)
    uncovered = runs["dataset"] == "ipums_br"
    runs = runs.assign(
        guarantee_valid=~uncovered,
        guarantee_note=uncovered.map({True: "ipums_br: feature ranges not from a public source", False: ""}),
    )
    table = comparison_table(runs)
    assert (
        "**Not ranked: rows their ε does not cover** (`guarantee_valid = false`): ipums_br: dp_agd, dp_blgd, "
        "dp_blsgd (feature ranges not from a public source)." in table
    )
    assert "| dp_blsgd | 0.800 ± 0.001 (#3) | 0.800 ± 0.001 (#3) |" in table  # bank: ranked
    assert "| dp_blsgd | 0.800 ± 0.001 | 0.990 ± 0.001 |" in table  # ipums_br: shown, unranked
    assert "dp_blsgd beats dp_agd in 0 of 2 settings: fails" in table
    assert "ipums_br ε" not in table.split("## chen_lee's claims")[1]


def test_an_algorithm_keeps_its_colour_in_a_panel_where_another_is_missing():
    """A method absent from one dataset's panel (a partial sweep) must not shift the other methods'
    colours away from the legend's: every line of one algorithm has one colour across the figure."""
    from matplotlib.colors import to_hex

    from dpbench.plot.generic import metrics_vs_eps

    rows = [
        {"dataset": d, "algorithm": a, "eps": e, "test_accuracy": 0.7, "private": True}
        for d in ("bank", "ipums_br")
        for a in ("dp_agd", "dp_blgd", "dp_sgd")
        for e in (0.1, 1.0)
        if not (d == "ipums_br" and a == "dp_agd")
    ]
    fig = metrics_vs_eps(pd.DataFrame(rows), [("test_accuracy", "test accuracy")])
    colours: dict[str, set] = {}
    for ax in fig.axes:
        for container in ax.containers:
            line = container.lines[0]
            colours.setdefault(container.get_label(), set()).add(to_hex(line.get_color()))
    assert set(colours) == {"dp_agd", "dp_blgd", "dp_sgd"} and all(len(c) == 1 for c in colours.values())
    assert len({next(iter(c)) for c in colours.values()}) == 3
