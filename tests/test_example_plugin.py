"""examples/plugin, installed by pip as a user installs it, joins dpbench without editing it: its sweep
preset runs its method beside DP-SGD on its own dataset file under the joblib launcher, every job's ε
verifies and its rows carry the plugin's code identity; and its method and dataset join a comparison
with built-in ones on Adult, tuned for free and paid for, that ``dpbench-verify --rerun``, the
leaderboard and the report take in, where editing the plugin stales exactly its jobs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("example_plugin")]

PLUGIN = Path(__file__).resolve().parents[1] / "examples" / "plugin"


def run(
    command: list[str], cwd: Path, site: Path, timeout: int = 900, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    path = os.pathsep.join(filter(None, (str(site), os.environ.get("PYTHONPATH"))))
    env = {**os.environ, "PYTHONPATH": path, **(env or {})}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The example plugin, installed by pip into a directory of its own (put on the path by :func:`run`)."""
    site = tmp_path_factory.mktemp("site")
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(PLUGIN)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    return site


BIN = Path(sys.executable).parent


def test_the_example_plugin_installs_runs_its_sweep_and_verifies(site, tmp_path):
    sweep = tmp_path / "outputs" / "sweeps" / "example_plugin"
    done = run([str(BIN / "dpbench"), "-m", "experiment=example_plugin", "hydra/launcher=joblib"], tmp_path, site)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = pd.concat(pd.read_parquet(path) for path in sweep.glob("*/results.parquet"))
    assert set(rows["algorithm"]) == {"noisy_gd", "dp_sgd", "nonprivate"} and len(rows) == 36
    assert set(rows["dataset"]) == {"example_people"}
    private = rows[rows["algorithm"] != "nonprivate"]
    assert (private["eps_spent"] <= private["eps"] * (1 + 1e-9)).all()
    plugin_rows = rows[rows["algorithm"] == "noisy_gd"]
    assert plugin_rows["code_identity"].str.contains(r"\+dpbench_example_plugin\.[0-9a-f]{12}$").all()
    assert not rows.loc[rows["algorithm"] != "noisy_gd", "code_identity"].str.contains("plugin").any()

    verified = run([str(BIN / "dpbench-verify"), str(sweep)], tmp_path, site)
    assert verified.returncode == 0 and "all checks passed" in verified.stdout, verified.stdout[-3000:]
    status = run([str(BIN / "dpbench-status"), str(sweep), "--json"], tmp_path, site)
    assert {job["status"] for job in json.loads(status.stdout)["jobs"]} == {"finished"}


def test_its_method_and_dataset_join_a_comparison_on_adult_and_every_report_takes_them_in(site, tmp_path, shared_data):
    data = shared_data("adult_a9a/a9a.gz", "adult_a9a/a9a.t.gz")
    env_data = {"DPBENCH_DATA": str(data)}
    sweep = tmp_path / "outputs" / "sweeps" / "adhoc"
    command = [
        str(BIN / "dpbench"),
        "-m",
        "dataset=example_people,adult",
        "algorithm=noisy_gd,dp_sgd,objpert",
        "tuning=fixed,private",
        "hydra/launcher=joblib",
    ]
    done = run(command, tmp_path, site, env=env_data)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = pd.concat(pd.read_parquet(path) for path in sweep.glob("*/results.parquet"))
    assert {(a, d) for a, d in zip(rows["algorithm"], rows["dataset"])} == {
        (a, d) for a in ("noisy_gd", "dp_sgd", "objpert") for d in ("example_people", "adult")
    }
    verified = run([str(BIN / "dpbench-verify"), str(sweep), "--rerun", "2"], tmp_path, site, env=env_data)
    assert verified.returncode == 0 and "all checks passed" in verified.stdout, verified.stdout[-3000:]
    board = run([str(BIN / "dpbench-plot"), "leaderboard", str(sweep), "--out", str(tmp_path / "figs")], tmp_path, site)
    assert board.returncode == 0, board.stderr[-3000:]
    assert "| noisy_gd |" in (tmp_path / "figs" / "leaderboard.md").read_text()
    page = tmp_path / "report.html"
    report = run([str(BIN / "dpbench-report"), str(sweep), "--out", str(page)], tmp_path, site)
    assert report.returncode == 0 and "noisy_gd" in page.read_text(), report.stderr[-3000:]

    method = site / "dpbench_example_plugin" / "noisy_gd.py"
    original = method.read_text()
    method.write_text(original.replace("w = np.zeros(problem.dim)", "w = np.zeros(problem.dim) + 0.0"))
    try:
        status = run([str(BIN / "dpbench-status"), str(sweep), "--json"], tmp_path, site)
    finally:
        method.write_text(original)
    jobs = json.loads(status.stdout)["jobs"]
    stale = {job["status"] == "stale" for job in jobs if "algorithm=noisy_gd" in job["job_dir"]}
    others = {job["status"] for job in jobs if "algorithm=noisy_gd" not in job["job_dir"]}
    assert stale == {True} and others == {"finished"}, jobs
