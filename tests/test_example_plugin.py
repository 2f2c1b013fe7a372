"""examples/plugin, installed by pip as a user installs it, joins dpbench without editing it: its sweep
preset runs its method beside DP-SGD on its own dataset file under the joblib launcher, every job's ε
verifies, and its rows carry the plugin's code identity."""

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


def run(command: list[str], cwd: Path, site: Path, timeout: int = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(site), os.environ.get("PYTHONPATH"))))}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def test_the_example_plugin_installs_runs_its_sweep_and_verifies(tmp_path):
    site = tmp_path / "site"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(PLUGIN)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    bin_dir = Path(sys.executable).parent
    sweep = tmp_path / "outputs" / "sweeps" / "example_plugin"
    done = run([str(bin_dir / "dpbench"), "-m", "experiment=example_plugin", "hydra/launcher=joblib"], tmp_path, site)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = pd.concat(pd.read_parquet(path) for path in sweep.glob("*/results.parquet"))
    assert set(rows["algorithm"]) == {"noisy_gd", "dp_sgd", "nonprivate"} and len(rows) == 36
    assert set(rows["dataset"]) == {"example_people"}
    private = rows[rows["algorithm"] != "nonprivate"]
    assert (private["eps_spent"] <= private["eps"] * (1 + 1e-9)).all()
    plugin_rows = rows[rows["algorithm"] == "noisy_gd"]
    assert plugin_rows["code_identity"].str.contains(r"\+dpbench_example_plugin\.[0-9a-f]{12}$").all()
    assert not rows.loc[rows["algorithm"] != "noisy_gd", "code_identity"].str.contains("plugin").any()

    verified = run([str(bin_dir / "dpbench-verify"), str(sweep)], tmp_path, site)
    assert verified.returncode == 0 and "all checks passed" in verified.stdout, verified.stdout[-3000:]
    status = run([str(bin_dir / "dpbench-status"), str(sweep), "--json"], tmp_path, site)
    assert {job["status"] for job in json.loads(status.stdout)["jobs"]} == {"finished"}

    checked = run([str(bin_dir / "dpbench"), "check-method", "noisy_gd"], tmp_path, site)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
    assert checked.stdout.strip().splitlines()[-1] == "dpbench check-method: noisy_gd passed 8 checks"
    assert "ok    planted control: the fit plus an unpaid exact sum is caught" in checked.stdout
