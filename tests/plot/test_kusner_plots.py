"""kusner_bo figures (Fig. 1 of Sec. 6 and the utility study beyond the paper) and their summary on
hand-built results rows whose numbers are known: plotted values, and statements that flip with the data."""

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from dpbench.errors import DpbenchError
from dpbench.plot import kusner
from dpbench.plot.registry import FIGURES
from dpbench.plot.style import style

SIZES = (1000, 2000, 3000, 5000, 15000)
K1 = np.round(np.arange(1, 20) * 0.05, 2)  # 0.05 … 0.95
EPS = (0.1, 0.5, 1.0, 5.0)
SPREAD = np.array([-1.5, -0.5, 0.5, 1.5])  # per-rep offsets: 4 reps, known mean and std
ALGS = ("kusner_alg1", "kusner_alg2", "kusner_alg3")


def increasing(size: int, k1: float) -> float:
    """Log likelihood rising in k1, the rise (gap 0.95 vs 0.05 = 0.9·|V|/100) growing with |V|."""
    return -5000.0 + size * k1 / 100.0


def make_study(curve=increasing, sizes=SIZES, reps=2, gain_change=lambda size: 0.5 / size, dataset="adult"):
    """Fig. 1 rows: per rep an offset ±1 that leaves the mean over reps equal to ``curve``."""
    frames = []
    for size in sizes:
        for rep, offset in zip(range(reps), (-1.0, 1.0) if reps == 2 else (0.0,)):
            frames.append(
                pd.DataFrame(
                    {
                        "algorithm": "kusner_mtgp_likelihood",
                        "dataset": dataset,
                        "target": "svm_rbf",
                        "gain": "accuracy",
                        "eps": 1.0,
                        "validation_size": size,
                        "rep": rep,
                        "n_sets": 100,
                        "k1": K1,
                        "log_likelihood": [curve(size, k) + offset for k in K1],
                        "max_abs_gain_change": gain_change(size),
                        "mean_abs_gain_change": 0.1 / size,
                        "gain_std_across_candidates": 0.05,
                        "wall_time_s": 0.1,
                        "n_candidates": 100,
                        "n_train": 2000,
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)


def default_gap(algorithm: str, eps: float) -> float:
    """gain(λ̂) − gain(λ̃): 0.05 below ε = 1, none from ε = 1 on."""
    return 0.05 if eps < 1.0 else 0.0


def make_tuning(
    algorithms=ALGS,
    eps_values=EPS,
    scale=lambda eps: 0.02 / eps,
    gap=default_gap,
    targets=(("svm_rbf", "accuracy"),),
    dataset="adult",
):
    """Alg. 1–3 rows, 4 reps per point: |ṽ − v*| = b·(1 + 0.1·SPREAD) with b = scale(ε), so its mean is b;
    gain(λ̃) = 0.84 − gap + 0.002·SPREAD; Alg. 3 has no λ̃ (NaN columns, released_index −1)."""
    frames = []
    for (target, gain), algorithm, eps in ((t, a, e) for t in targets for a in algorithms for e in eps_values):
        b = scale(eps)
        no_lambda = algorithm == "kusner_alg3"
        released = np.full(4, np.nan) if no_lambda else 0.84 - gap(algorithm, eps) + 0.002 * SPREAD
        frames.append(
            pd.DataFrame(
                {
                    "algorithm": algorithm,
                    "dataset": dataset,
                    "target": target,
                    "gain": gain,
                    "eps": eps,
                    "delta": 1e-5,
                    "eps_spent": eps,
                    "rep": range(4),
                    "n_candidates": 100,
                    "iterations": 30,
                    "validation_size": 1000,
                    "released_index": -1 if no_lambda else 7,
                    "value_released": 0.84,
                    "value_best_observed": 0.84,
                    "value_error": b * (1.0 + 0.1 * SPREAD),
                    "gain_released": released,
                    "gain_best_observed": 0.84,
                    "gain_best": 0.85,
                    "suboptimality": 0.85 - released,
                    "test_accuracy": released - 0.01,
                    "test_accuracy_best_observed": 0.83,
                    "test_accuracy_best": 0.835,
                    "laplace_scale": b,
                    "value_sensitivity": b * eps / 2,
                    "eps_release": eps / 2,
                    "wall_time_s": 0.1,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def verdict(text: str, claim: str) -> str:
    line = next(line for line in text.splitlines() if line.startswith(f"**{claim}"))
    return line.rsplit(": ", 1)[1].rstrip("*")


def finding(text: str, section: str, statement: str) -> str:
    """The text after ``**statement**…: `` in the findings under heading ``## section``."""
    block = text.split(f"## {section}\n")[1].split("\n## ", maxsplit=1)[0]
    line = next(line for line in block.splitlines() if line.startswith(f"- **{statement}"))
    return line.split("**: ", 1)[1] if "**: " in line else line.split("): ", 1)[1]


def legend(ax) -> dict[str, object]:
    handles, labels = ax.get_legend_handles_labels()
    return dict(zip(labels, handles))


# ----------------------------------------------------------------------------- registry
def test_registry_exposes_both_kusner_figures_with_the_summary():
    assert FIGURES["kusner.fig1"].draw is kusner.fig1 and FIGURES["kusner.fig1"].filename == "kusner_fig1"
    assert FIGURES["kusner.utility"].draw is kusner.utility and FIGURES["kusner.utility"].filename == "kusner_utility"
    assert FIGURES["kusner.fig1"].table is kusner.summary and FIGURES["kusner.utility"].table is kusner.summary


# ----------------------------------------------------------------------------- Fig. 1
def test_fig1_plots_relative_and_raw_log_likelihood_with_argmax_markers():
    fig = kusner.fig1(make_study())
    assert isinstance(fig, Figure)
    ax_rel, ax_raw = fig.axes
    assert ax_rel.get_yscale() == "symlog" and ax_rel.get_ylabel() == "log likelihood − max over k₁"
    assert list(legend(ax_rel)) == [f"|V| = {m}" for m in SIZES]
    for ax, shift in ((ax_rel, lambda m: increasing(m, 0.95)), (ax_raw, lambda m: 0.0)):
        line = legend(ax)["|V| = 5000"]
        np.testing.assert_allclose(line.get_xdata(), K1)
        np.testing.assert_allclose(line.get_ydata(), [increasing(5000, k) - shift(5000) for k in K1])
        stars = [ln for ln in ax.lines if ln.get_gid() == "argmax"]
        assert len(stars) == len(SIZES)
        assert all(s.get_xdata()[0] == pytest.approx(0.95) for s in stars)
    assert [s.get_ydata()[0] for s in ax_rel.lines if s.get_gid() == "argmax"] == [0.0] * len(SIZES)
    title = fig._suptitle.get_text()
    for part in ("Fig. 1", "adult", "svm_rbf", "100 pairs", "|Λ| = 100", "n_train = 2000", "2 rep(s)"):
        assert part in title


def test_fig1_marks_an_interior_argmax():
    peaked = lambda m, k: -m * (k - 0.5) ** 2 if m == 2000 else increasing(m, k)
    ax_rel = kusner.fig1(make_study(peaked)).axes[0]
    stars = {ln.get_color(): ln.get_xdata()[0] for ln in ax_rel.lines if ln.get_gid() == "argmax"}
    assert stars[legend(ax_rel)["|V| = 2000"].get_color()] == pytest.approx(0.5)
    assert sorted(stars.values()) == pytest.approx([0.5] + [0.95] * 4)


def test_summary_claims_hold_on_paper_like_curves():
    text = kusner.summary(make_study())
    assert verdict(text, "(1)") == "HOLDS" and verdict(text, "(2)") == "HOLDS" and verdict(text, "(3)") == "HOLDS"
    assert "ℓ(k₁ = 0.95) − ℓ(k₁ = 0.05)" in text
    assert f"| 15000 | 2 | 0.95 | {increasing(15000, 0.95):.6g} | {15000 * 0.9 / 100:.4g} |" in text
    assert "Spearman ρ(|V|, gap) = 1.00" in text
    assert "Alg." not in text  # no tuning rows, no tuning section


def test_summary_claim_1_fails_and_names_the_size_peaking_inside():
    peaked = lambda m, k: -m * (k - 0.5) ** 2 if m == 2000 else increasing(m, k)
    text = kusner.summary(make_study(peaked))
    assert verdict(text, "(1)") == "FAILS"
    assert "- not at k₁ = 0.95 for: |V| = 2000 (argmax k₁ = 0.5)" in text


def test_summary_claim_2_flips_when_small_sets_favour_large_k1_more():
    text = kusner.summary(make_study(lambda m, k: -5000.0 + k * 1e5 / m))
    assert verdict(text, "(1)") == "HOLDS" and verdict(text, "(2)") == "FAILS"
    assert "Spearman ρ(|V|, gap) = -1.00" in text
    assert verdict(kusner.summary(make_study(sizes=(1000,))), "(2)") == "NOT TESTABLE"


def test_summary_gain_change_check_fails_above_one_over_m():
    text = kusner.summary(make_study(gain_change=lambda m: 2.0 / m if m == 3000 else 0.5 / m))
    assert verdict(text, "(3)") == "FAILS" and "|V| = 3000: 2" in text


# ----------------------------------------------------------------------------- utility
def test_utility_draws_three_panels_and_leaves_alg3_out_of_the_lambda_panels():
    fig = kusner.utility(make_tuning())
    ax_v, ax_g, ax_t = fig.axes
    assert all(ax.get_xscale() == "log" for ax in fig.axes) and ax_v.get_yscale() == "log"
    assert "total budget" in ax_v.get_xlabel()
    assert list(legend(ax_v))[:3] == ["Alg. 1", "Alg. 2", "Alg. 3"]
    assert not any("Alg. 3" in name for name in list(legend(ax_g)) + list(legend(ax_t)))
    assert {"λ̃, Alg. 1", "λ̂ (non-private), Alg. 2", "best candidate on V"} <= set(legend(ax_g))
    error = legend(ax_v)["Alg. 1"][0]  # ErrorbarContainer: (data line, caps, bars)
    np.testing.assert_allclose(error.get_xdata(), EPS)
    np.testing.assert_allclose(error.get_ydata(), [0.02 / e for e in EPS])
    dashed = [ln for ln in ax_v.lines if ln.get_linestyle() == "--"]
    colours = [style(name).colour for name in ("kusner_alg1", "kusner_alg2", "kusner_alg3")]  # each method's own
    assert len(dashed) == 3 and [to_hex(ln.get_color()) for ln in dashed] == colours
    np.testing.assert_allclose(dashed[2].get_ydata(), [0.02 / e for e in EPS])  # Alg. 3's Laplace scale
    released = legend(ax_g)["λ̃, Alg. 2"][0].get_ydata()
    np.testing.assert_allclose(released, [0.84 - default_gap("kusner_alg2", e) for e in EPS])
    np.testing.assert_allclose(legend(ax_t)["λ̂ (non-private), Alg. 1"][0].get_ydata(), 0.83)
    assert "adult" in fig._suptitle.get_text() and "|V| = 1000" in fig._suptitle.get_text()


def test_utility_labels_lines_by_target_and_gain_when_several():
    df = make_tuning(algorithms=("kusner_alg1",), targets=(("svm_rbf", "accuracy"), ("logreg", "ramp")))
    ax_v = kusner.utility(df).axes[0]
    assert {"Alg. 1 (svm_rbf, accuracy)", "Alg. 1 (logreg, ramp)"} <= set(legend(ax_v))


def test_utility_with_alg3_only_says_there_is_no_lambda():
    fig = kusner.utility(make_tuning(algorithms=("kusner_alg3",)))
    assert "no λ̃" in fig.axes[1].texts[0].get_text() and not fig.axes[1].lines


def test_summary_tuning_statements_on_default_data():
    text = kusner.summary(make_tuning())
    assert "# kusner_bo beyond the paper" in text and "Claims of kusner_bo Sec. 6" not in text
    section = "Alg. 1: target svm_rbf, gain accuracy"
    assert finding(text, section, "λ̃ matches") == "at ε = 1, 5 (every ε ≥ 1)"
    assert finding(text, section, "value error falls") == "YES (Spearman ρ = -1.00)"
    assert finding(text, section, "smallest ε") == "ε = 5"  # 0.02/ε < 0.01 first at 5 in the grid
    assert finding(text, "Alg. 3: target svm_rbf, gain accuracy", "λ̃ matches") == "no λ̃ (Alg. 3 releases ṽ only)"
    b = 0.02 / 0.5
    se = b * 0.1 * SPREAD.std(ddof=1) / 2
    assert f"| 0.5 | 4 | {b:.4g} ± {se:.2g} | {b:.4g} ± 0 |" in text
    assert "1 … 1 (≈ 1 expected" in text


def test_summary_tuning_statements_flip_on_rigged_data():
    text = kusner.summary(make_tuning(scale=lambda e: 0.02 * e, gap=lambda a, e: 0.05 if e > 0.2 else 0.0))
    section = "Alg. 2: target svm_rbf, gain accuracy"
    assert finding(text, section, "λ̃ matches") == "at ε = 0.1"
    assert finding(text, section, "value error falls") == "NO (Spearman ρ = 1.00)"
    text = kusner.summary(make_tuning(scale=lambda e: 1.0, gap=lambda a, e: 0.05))
    assert finding(text, section, "λ̃ matches") == "at no ε in the grid"
    assert finding(text, section, "smallest ε") == "none in the grid"
    assert finding(text, section, "value error falls").startswith("NO (Spearman ρ = undefined")


def test_summary_covers_both_kinds_of_rows_together():
    text = kusner.summary(pd.concat([make_study(), make_tuning()], ignore_index=True))
    assert verdict(text, "(1)") == "HOLDS" and "## Alg. 2: target svm_rbf" in text
    with pytest.raises(ValueError, match=r"no rows of kusner_mtgp_likelihood .* or of kusner_alg1"):
        kusner.summary(make_tuning().assign(algorithm="dp_sgd"))


# ----------------------------------------------------------------------------- errors
def test_missing_rows_columns_and_mixed_settings_fail_clearly():
    with pytest.raises(ValueError, match="no rows of algorithm kusner_mtgp_likelihood"):
        kusner.fig1(make_tuning())
    with pytest.raises(ValueError, match="no rows of kusner_alg1, kusner_alg2, kusner_alg3"):
        kusner.utility(make_study())
    with pytest.raises(ValueError, match=r"lack column\(s\) n_sets, k1 needed for kusner.fig1"):
        kusner.fig1(make_study().drop(columns=["k1", "n_sets"]))
    with pytest.raises(ValueError, match=r"lack column\(s\) laplace_scale needed for kusner.utility"):
        kusner.summary(make_tuning().drop(columns="laplace_scale"))
    with pytest.raises(DpbenchError, match=r"mix dataset \(adult, rcv1\)"):  # the CLI's one-line errors
        kusner.utility(pd.concat([make_tuning(), make_tuning(dataset="rcv1")]))
    with pytest.raises(DpbenchError, match=r"mix dataset"):
        kusner.fig1(pd.concat([make_study(), make_study(dataset="rcv1")]))


# ----------------------------------------------------------------------------- CLI
def _write_sweep(df: pd.DataFrame, root, keys):
    """One job directory with a results.parquet per value of ``keys``, as the engine writes a sweep."""
    for i, (_, rows) in enumerate(df.groupby(keys)):
        (root / f"job{i}").mkdir(parents=True)
        rows.to_parquet(root / f"job{i}" / "results.parquet")
    return root


@pytest.mark.parametrize(
    "name, rows, keys",
    [
        ("kusner.fig1", make_study(), ["validation_size"]),
        ("kusner.utility", make_tuning(algorithms=ALGS[:2]), ["algorithm", "eps"]),
    ],
)
def test_cli_writes_figure_and_summary_from_a_sweep(tmp_path, cli, name, rows, keys):
    sweep = _write_sweep(rows, tmp_path / "sweep", keys)
    result = cli([name, str(sweep), "--out", str(tmp_path / "f")], tmp_path, module="dpbench.plot")
    assert result.returncode == 0, result.stderr
    assert f"{len(rows)} result rows" in result.stdout
    stem = FIGURES[name].filename
    assert (tmp_path / "f" / f"{stem}.png").stat().st_size > 10_000
    text = (tmp_path / "f" / f"{stem}.md").read_text()
    assert ("**(1)" in text) == (name == "kusner.fig1") and ("λ̃ matches" in text) == (name == "kusner.utility")
