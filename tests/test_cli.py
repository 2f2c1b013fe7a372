"""End-to-end: the dpbench and dpbench-plot commands in subprocesses, as a user runs them."""

import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

SMALL = ["dataset.n=2000", "dataset.seed=1", "progress=false"]


def _results(path: Path) -> pd.DataFrame:
    return pd.read_parquet(path / "results.parquet")


@pytest.mark.slow
def test_default_run_writes_results_within_budget_then_skips_and_force_reruns_identically(cli, tmp_path):
    first = cli([], tmp_path)
    assert first.returncode == 0, first.stderr
    job = tmp_path / "outputs" / "runs" / "default"
    df = _results(job)
    last = first.stdout.strip().splitlines()[-1]  # the run's last line says what it did and where
    assert last.startswith("dpbench: dp_blsgd on synthetic_logreg, 1 run(s), test accuracy ")
    assert f"ε spent ≤ {df['eps_spent'].max():.3g} of 1" in last and last.endswith(f"; results in {job}")
    assert (df["eps_spent"] <= df["eps"]).all() and (df["eps_spent"] > 0).all()
    assert {"paper", "algorithm", "dataset", "model", "eps", "delta", "fold", "rep", "seed", "config_hash"} <= set(
        df.columns
    )
    assert (job / "trace.parquet").is_file() and (job / "run.json").is_file()
    mtime = (job / "results.parquet").stat().st_mtime_ns

    again = cli([], tmp_path)
    assert again.returncode == 0, again.stderr
    assert "skipping" in again.stdout + again.stderr
    assert (job / "results.parquet").stat().st_mtime_ns == mtime

    forced = cli(["force=true"], tmp_path)
    assert forced.returncode == 0, forced.stderr
    rerun = _results(job)
    assert (job / "results.parquet").stat().st_mtime_ns != mtime
    numbers = df.drop(columns=["wall_time_s"])
    pd.testing.assert_frame_equal(numbers, rerun.drop(columns=["wall_time_s"]))


@pytest.mark.parametrize(
    "args,expected",
    [
        (["privacy.eps=-1"], "privacy.eps must be finite and > 0, got -1.0"),
        (["privacy.delta=2"], "privacy.delta must be in (0, 1), got 2.0"),
        (["algorithm=nope"], "unknown algorithm 'nope'; valid choices:"),
        (["dataset=nope"], "unknown dataset 'nope'; valid choices:"),
    ],
)
def test_bad_input_exits_nonzero_with_one_line(cli, tmp_path, args, expected):
    result = cli(args + SMALL, tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert expected in lines[0]
    assert not list(tmp_path.rglob("results.parquet"))


def test_missing_dataset_file_names_file_and_url(cli, tmp_path):
    empty = tmp_path / "nodata"
    empty.mkdir()
    result = cli(["dataset=ipums_us", "data.scaling=whole_file", f"data_dir={empty}", "progress=false"], tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "IPUMS-US.dat" in lines[0] and "https://github.com/ppmlguy/DP-AGD" in lines[0]


def test_ipums_us_without_declared_ranges_is_refused_under_public_scaling(cli, tmp_path):
    result = cli(["dataset=ipums_us", "progress=false"], tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "no public feature ranges" in lines[0] and "data.scaling=whole_file" in lines[0], (
        result.stderr
    )


def test_corrupted_data_file_is_refused(cli, tmp_path, shared_data):
    corrupt = tmp_path / "data" / "ipums_br"
    corrupt.mkdir(parents=True)
    source = shared_data("ipums_br/IPUMS-BR.dat.gz") / "ipums_br" / "IPUMS-BR.dat.gz"
    import gzip

    raw = bytearray(gzip.decompress(source.read_bytes()))
    raw[1000] = ord("7") if raw[1000] != ord("7") else ord("3")
    (corrupt / "IPUMS-BR.dat").write_bytes(bytes(raw))
    result = cli(["dataset=ipums_br", f"data_dir={tmp_path / 'data'}", "progress=false"], tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "IPUMS-BR.dat" in lines[0] and "sha256" in lines[0]


@pytest.mark.slow
@pytest.mark.parametrize("launcher", ["joblib", "submitit_local"])
def test_multirun_with_launcher_then_plot(cli, tmp_path, launcher):
    sweep = tmp_path / "sweep"
    result = cli(
        [
            "-m",
            "algorithm=dp_sgd,nonprivate,majority",
            "privacy.eps=0.5,2.0",
            f"hydra/launcher={launcher}",
            f"hydra.sweep.dir={sweep}",
            *SMALL,
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    files = sorted(sweep.rglob("results.parquet"))
    assert len(files) == 6
    df = pd.concat(map(pd.read_parquet, files))
    private = df[df["private"]]
    assert (private["eps_spent"] <= private["eps"]).all()

    figs = tmp_path / "figs"
    plot = cli(["accuracy-vs-eps", str(sweep), "--out", str(figs)], tmp_path, module="dpbench.plot")
    assert plot.returncode == 0, plot.stderr
    assert (figs / "accuracy_vs_eps.png").stat().st_size > 1000
    assert (figs / "accuracy_vs_eps.pdf").stat().st_size > 1000

    # an interrupted sweep resumes: delete one job's results, rerun, only that job runs again
    victim = files[0]
    kept = {f: f.stat().st_mtime_ns for f in files[1:]}
    victim.unlink()
    again = cli(
        [
            "-m",
            "algorithm=dp_sgd,nonprivate,majority",
            "privacy.eps=0.5,2.0",
            f"hydra/launcher={launcher}",
            f"hydra.sweep.dir={sweep}",
            *SMALL,
        ],
        tmp_path,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert victim.is_file()
    assert all(f.stat().st_mtime_ns == t for f, t in kept.items())


def test_plot_without_results_fails_clearly(cli, tmp_path):
    (tmp_path / "empty").mkdir()
    result = cli(
        ["accuracy-vs-eps", str(tmp_path / "empty"), "--out", str(tmp_path / "f")], tmp_path, module="dpbench.plot"
    )
    assert result.returncode == 2
    assert "no results.parquet found" in result.stderr
    listing = cli(["--list"], tmp_path, module="dpbench.plot")
    assert listing.returncode == 0 and "accuracy-vs-eps" in listing.stdout


@pytest.mark.data
@pytest.mark.slow
def test_adult_dp_sgd_beats_majority_and_nonprivate_reaches_084(cli, tmp_path, shared_data):
    data_dir = shared_data("adult_a9a/a9a.gz", "adult_a9a/a9a.t.gz")
    common = ["dataset=adult", "privacy.eps=1.0", "cv.folds=2", "reps=2", f"data_dir={data_dir}", "progress=false"]
    dp = cli(["algorithm=dp_sgd", *common], tmp_path)
    assert dp.returncode == 0, dp.stderr
    nonprivate = cli(["algorithm=nonprivate", *common], tmp_path)
    assert nonprivate.returncode == 0, nonprivate.stderr
    runs = tmp_path / "outputs" / "runs"
    dp_df = pd.concat(map(pd.read_parquet, runs.glob("*algorithm=dp_sgd*/results.parquet")))
    np_df = pd.concat(map(pd.read_parquet, runs.glob("*algorithm=nonprivate*/results.parquet")))
    assert len(dp_df) == 4 and len(np_df) == 4
    assert (dp_df["eps_spent"] <= 1.0).all()
    assert dp_df["test_accuracy"].mean() > 0.761
    assert np_df["test_accuracy"].mean() >= 0.84
    shutil.rmtree(runs)


def test_help_documents_every_key_the_groups_presets_multirun_and_companion_commands(cli, tmp_path):
    """`dpbench --help` is dpbench's, built from conf/ (Hydra's stays as --hydra-help)."""
    from omegaconf import OmegaConf

    from dpbench.cli_help import config_keys
    from dpbench.conf_files import config_dir, group_choices
    from dpbench.resolve import TOP_LEVEL_KEYS

    result = cli(["--help"], tmp_path)
    assert result.returncode == 0 and not (tmp_path / "outputs").exists()
    text = result.stdout
    documented = {key for key, _, comment in config_keys(config_dir() / "config.yaml") if comment}
    composed = OmegaConf.load(config_dir() / "config.yaml")
    plain_keys = set(TOP_LEVEL_KEYS) - {"dataset", "algorithm", "model", "privacy", "tuning", "hydra"}
    assert plain_keys <= documented  # every top-level key has its YAML comment
    for key, _, comment in config_keys(config_dir() / "config.yaml"):
        line = next(line for line in text.splitlines() if line.startswith(f"  {key} "))
        assert comment[:40] in line, (key, line)
    assert set(composed.keys()) - {"defaults", "hydra"} <= {key.split(".")[0] for key in documented}
    for group in ("dataset", "algorithm", "model", "privacy", "tuning"):
        assert all(re.search(rf"[ *]{option} ", text) for option in group_choices(group)), group
    assert all(f"  {preset} " in text for preset in group_choices("experiment"))
    for needle in (
        "dpbench -m ",
        "dpbench-plot",
        "dpbench-status",
        "dpbench-audit",
        "dpbench -sc install=bash",
        "--hydra-help",
    ):
        assert needle in text, needle
    assert "Hydra" not in text.splitlines()[0]
