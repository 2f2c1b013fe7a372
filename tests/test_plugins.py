"""A plugin joins dpbench through entry points, without editing it: its method runs by name in a job
and in a joblib sweep's workers, its conf/ presets compose, and a command line's own --config-dir
is accepted; a broken plugin is refused in one line naming it. The plugin is installed the way pip
installs one: a package and its ``.dist-info`` (with ``entry_points.txt``) on the path."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
import yaml

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("plugins")]

SMALL = ["dataset.n=1000", "dataset.d=5", "reps=1", "progress=false"]
METHOD = '''
from typing import ClassVar

from dpbench.algorithms.base import Look
from dpbench.algorithms.dp_sgd import DPSGD
from dpbench.algorithms.palette import LIGHT_GREY


class ToySGD(DPSGD):
    """DP-SGD under another name: a method that comes from a plugin."""

    name: ClassVar[str] = "toy_sgd"
    label: ClassVar[str] = "Toy SGD"
    look: ClassVar[Look] = Look(LIGHT_GREY, "h")


class BareSGD(DPSGD):
    """DP-SGD with a grid of its own and no preset file."""

    name: ClassVar[str] = "bare_sgd"
    label: ClassVar[str] = "Bare SGD"
    look: ClassVar[Look] = Look(LIGHT_GREY, "H")
    tuning_grid: ClassVar[dict[str, list]] = {"learning_rate": [0.1, 0.3]}
'''


def install_plugin(site: Path, entry_points: str, *, name: str = "toy_plugin", conf: dict | None = None) -> Path:
    """Write package ``name`` (the method module above, and ``conf`` files) and its dist-info into ``site``."""
    package = site / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "method.py").write_text(METHOD)
    for relative, text in (conf or {}).items():
        (package / "conf" / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / "conf" / relative).write_text(textwrap.dedent(text))
    dist_info = site / f"{name}-0.1.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: 0.1\n")
    (dist_info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    return site


TOY_CONF = {
    "algorithm/toy_sgd.yaml": """\
        # the toy method: dp_sgd's settings under the plugin's name
        defaults:
          - dp_sgd
          - _self_
        name: toy_sgd
        """
}
TOY_ENTRY_POINTS = """\
    [dpbench.methods]
    toy_sgd = toy_plugin.method:ToySGD
    bare_sgd = toy_plugin.method:BareSGD

    [dpbench.conf]
    toy_plugin = toy_plugin
    """


def dpbench(args: list[str], cwd: Path, site: Path | None, command: str = "dpbench") -> subprocess.CompletedProcess:
    """Run ``python -m <command> args`` in ``cwd`` with the plugin ``site`` importable."""
    env = {**os.environ, "DPBENCH_CACHE": str(cwd / ".cache")}
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(site), env.get("PYTHONPATH"))))
    return subprocess.run(
        [sys.executable, "-m", command, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@pytest.fixture(scope="module")
def toy_site(tmp_path_factory) -> Path:
    return install_plugin(tmp_path_factory.mktemp("site"), TOY_ENTRY_POINTS, conf=TOY_CONF)


def test_a_plugins_method_runs_by_name_and_its_rows_say_so(toy_site, tmp_path):
    result = dpbench(["algorithm=toy_sgd", *SMALL], tmp_path, toy_site)
    assert result.returncode == 0, result.stderr[-3000:]
    (results,) = tmp_path.glob("outputs/runs/*/results.parquet")
    rows = pd.read_parquet(results)
    assert set(rows["algorithm"]) == {"toy_sgd"} and (rows["eps_spent"] <= rows["eps"] + 1e-9).all()


def test_a_plugins_method_runs_in_a_joblib_sweeps_workers(toy_site, tmp_path):
    sweep = tmp_path / "sweep"
    args = ["-m", "algorithm=toy_sgd,dp_sgd", *SMALL, "hydra/launcher=joblib", f"hydra.sweep.dir={sweep}"]
    result = dpbench(args, tmp_path, toy_site)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = pd.concat(pd.read_parquet(path) for path in sweep.glob("*/results.parquet"))
    assert set(rows["algorithm"]) == {"toy_sgd", "dp_sgd"}


def test_without_the_plugin_its_method_is_unknown(tmp_path):
    result = dpbench(["algorithm=toy_sgd", *SMALL], tmp_path, None)
    assert result.returncode == 2 and "unknown algorithm 'toy_sgd'" in result.stderr


def test_a_config_dir_on_the_command_line_adds_its_presets_and_a_missing_one_is_named(tmp_path):
    own = tmp_path / "my_conf" / "algorithm"
    own.mkdir(parents=True)
    (own / "dp_sgd_slow.yaml").write_text("defaults:\n  - dp_sgd\n  - _self_\nlearning_rate: 0.01\n")
    result = dpbench(["--config-dir", str(tmp_path / "my_conf"), "algorithm=dp_sgd_slow", *SMALL], tmp_path, None)
    assert result.returncode == 0, result.stderr[-3000:]
    (results,) = tmp_path.glob("outputs/runs/*/results.parquet")
    assert set(pd.read_parquet(results)["p_learning_rate"]) == {0.01}
    missing = dpbench([f"hydra.searchpath=[file://{tmp_path}/nowhere]", *SMALL], tmp_path, None)
    assert missing.returncode == 2
    assert missing.stderr.strip() == f"dpbench: error: hydra.searchpath: file://{tmp_path}/nowhere is not a directory"


@pytest.mark.parametrize(
    ("entry_points", "message"),
    [
        ("[dpbench.methods]\ndp_sgd = toy_plugin.method:DPSGD\n", "method name 'dp_sgd' is taken by a built-in method"),
        ("[dpbench.methods]\nbroken = toy_plugin.absent:Method\n", "failed to load: ModuleNotFoundError"),
        ("[dpbench.conf]\ntoy_plugin = toy_plugin\n", "names no package with a conf/ directory"),
    ],
    ids=["name taken", "import fails", "no conf"],
)
def test_a_broken_plugin_is_refused_in_one_line_naming_it(tmp_path, entry_points, message):
    site = install_plugin(tmp_path / "site", entry_points)
    result = dpbench(["algorithm=dp_sgd", *SMALL], tmp_path, site)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr[-3000:]
    assert "plugin toy-plugin 0.1" in lines[0] and message in lines[0]


def test_editing_a_plugin_stales_exactly_its_jobs_and_a_docstring_edit_stales_none(tmp_path):
    site = install_plugin(tmp_path / "site", TOY_ENTRY_POINTS, conf=TOY_CONF)
    sweep = tmp_path / "sweep"
    args = ["-m", "algorithm=toy_sgd,dp_sgd", *SMALL, f"hydra.sweep.dir={sweep}"]
    assert dpbench(args, tmp_path, site).returncode == 0
    identities = {
        path.parent.name: set(pd.read_parquet(path)["code_identity"]) for path in sweep.glob("*/results.parquet")
    }
    ((toy,),) = (ids for job, ids in identities.items() if "toy_sgd" in job)
    ((ours,),) = (ids for job, ids in identities.items() if "toy_sgd" not in job)
    assert toy.startswith(f"{ours}+toy_plugin.") and len(toy) == len(ours) + len("+toy_plugin.") + 12

    method = site / "toy_plugin" / "method.py"
    method.write_text(method.read_text().replace("under another name", "under another name, documented"))
    assert status(sweep, site) == {"toy_sgd": "finished", "dp_sgd": "finished"}
    method.write_text(method.read_text().replace('Look(LIGHT_GREY, "h")', 'Look(LIGHT_GREY, "p")'))
    assert status(sweep, site) == {"toy_sgd": "stale", "dp_sgd": "finished"}


def status(sweep: Path, site: Path) -> dict[str, str]:
    """``dpbench-status``'s verdict on each job of ``sweep``, by algorithm."""
    import json

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(site), os.environ.get("PYTHONPATH"))))}
    done = subprocess.run(
        [sys.executable, "-m", "dpbench.status", str(sweep), "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    jobs = json.loads(done.stdout)["jobs"]
    return {job["overrides"][0].split("=")[1]: job["status"] for job in jobs}


# a plugin module of two methods, each with a bug of its own
FAULTY = '''
from typing import ClassVar

from dpbench.algorithms.base import Look
from dpbench.algorithms.dp_sgd import DPSGD
from dpbench.algorithms.palette import LIGHT_GREY
from dpbench.privacy.events import GaussianEvent


class Overspender(DPSGD):
    """DP-SGD, then one more Gaussian release at σ = 0.01 that no budget pays for."""

    name: ClassVar[str] = "overspender"
    label: ClassVar[str] = "Overspender"
    look: ClassVar[Look] = Look(LIGHT_GREY, "8")

    def fit(self, problem, ledger, rng, tracer):
        result = super().fit(problem, ledger, rng, tracer)
        ledger.charge(GaussianEvent(0.01), label="unpaid")
        return result


class Crasher(DPSGD):
    """DP-SGD whose fit divides by zero: a bug in the plugin's own code."""

    name: ClassVar[str] = "crasher"
    label: ClassVar[str] = "Crasher"
    look: ClassVar[Look] = Look(LIGHT_GREY, "p")

    def fit(self, problem, ledger, rng, tracer):
        return 1 / 0
'''


def test_an_overspending_plugin_method_is_blamed_in_one_line_not_called_a_dpbench_bug(tmp_path):
    site = install_plugin(tmp_path / "site", "[dpbench.methods]\noverspender = toy_plugin.bad:Overspender\n")
    (site / "toy_plugin" / "bad.py").write_text(FAULTY)
    result = dpbench(["algorithm=dp_sgd", "algorithm.name=overspender", *SMALL], tmp_path, site)  # no preset: dp_sgd's
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr[-3000:]
    assert lines[0].startswith("dpbench: error: plugin toy-plugin 0.1 (entry point dpbench.methods:overspender")
    assert "method overspender overspent its privacy budget (BudgetExceeded" in lines[0]
    assert "internal error" not in result.stderr


def test_a_plugin_method_that_crashes_is_blamed_not_called_a_dpbench_bug(tmp_path):
    site = install_plugin(tmp_path / "site", "[dpbench.methods]\ncrasher = toy_plugin.bad:Crasher\n")
    (site / "toy_plugin" / "bad.py").write_text(FAULTY)
    result = dpbench(["algorithm=crasher", *SMALL], tmp_path, site)
    last = result.stderr.strip().splitlines()[-1]
    assert result.returncode == 2, result.stderr[-3000:]
    assert "ZeroDivisionError" in result.stderr and "bad.py" in result.stderr  # the traceback, for its author
    assert last.startswith("dpbench: error: plugin toy-plugin 0.1 (entry point dpbench.methods:crasher")
    assert "method crasher raised ZeroDivisionError: division by zero" in last and "a bug in the plugin" in last
    assert "internal error" not in result.stderr


def test_a_typo_in_a_plugins_entry_point_is_named_where_its_method_is_asked_for(tmp_path):
    """The class name misspelt: ``algorithm=toy_sgd`` names the plugin that failed, not an unknown method;
    a companion command says the same in one line."""
    site = install_plugin(tmp_path / "site", "[dpbench.methods]\ntoy_sgd = toy_plugin.method:ToySDG\n")
    result = dpbench(["algorithm=toy_sgd", *SMALL], tmp_path, site)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr[-3000:]
    assert "plugin toy-plugin 0.1" in lines[0] and "ToySDG" in lines[0] and "unknown algorithm" not in lines[0]
    plot = dpbench(["leaderboard", str(tmp_path)], tmp_path, site, command="dpbench.plot")
    lines = plot.stderr.strip().splitlines()
    assert plot.returncode == 2 and len(lines) == 1, plot.stderr[-3000:]
    assert lines[0].startswith("dpbench-plot: error: plugin toy-plugin 0.1")


def test_help_lists_a_plugins_presets_and_methods_with_their_source(toy_site, tmp_path, monkeypatch):
    """The source comes first, so that a narrow terminal clips the description, not where it comes from."""
    monkeypatch.setenv("COLUMNS", "80")  # help clips its lines to the terminal's width (100 at least)
    result = dpbench(["--help"], tmp_path, toy_site)
    assert result.returncode == 0, result.stderr
    preset = next(line for line in result.stdout.splitlines() if line.strip().startswith("toy_sgd "))
    assert preset.split(None, 1)[1].startswith("[from toy-plugin 0.1] ")
    method = next(line for line in result.stdout.splitlines() if line.strip().startswith("bare_sgd "))
    assert method.split(None, 1)[1].startswith("[from toy-plugin 0.1] DP-SGD with a grid of its own")


def test_help_with_a_plugin_that_fails_to_load_is_one_line_naming_it(tmp_path):
    site = install_plugin(tmp_path / "site", "[dpbench.conf]\ntoy_plugin = toy_plugn\n")
    result = dpbench(["--help"], tmp_path, site)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr[-3000:]
    assert lines[0].startswith("dpbench: error: plugin toy-plugin 0.1") and "toy_plugn" in lines[0]


def test_a_method_without_a_preset_file_composes_from_its_class(toy_site, tmp_path):
    shown = dpbench(["--cfg", "job", "algorithm=bare_sgd", "algorithm.clip=2"], tmp_path, toy_site)
    assert shown.returncode == 0, shown.stderr[-3000:]
    section = yaml.safe_load(shown.stdout)["algorithm"]
    assert section["learning_rate"] == 0.05 and section["clip"] == 2
    assert section["tuning_grid"] == {"learning_rate": [0.1, 0.3]}
    result = dpbench(["algorithm=bare_sgd", "tuning=oracle", *SMALL], tmp_path, toy_site)
    assert result.returncode == 0, result.stderr[-3000:]
    (results,) = tmp_path.glob("outputs/runs/*/results.parquet")
    rows = pd.read_parquet(results)
    assert set(rows["algorithm"]) == {"bare_sgd"} and set(rows["n_trials"]) == {2}  # the class's grid
