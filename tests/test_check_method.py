"""``dpbench check-method`` fails a method with one line naming its plugin and the broken check, for each
way a plugin's method can be wrong that dpbench cannot see from its class alone: an overspend, an unpaid
release (caught by the black-box audit of the whole fit), noise from an unseeded generator, and a
hyper-parameter without a constraint. The methods are planted in a plugin installed as pip installs one."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("check_method")]

PLANTED = '''
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpbench.algorithms.base import Algorithm, AuditCoverage, FitResult, Look
from dpbench.algorithms.palette import LIGHT_GREY
from dpbench.constraints import COUNT, POSITIVE
from dpbench.privacy.calibrate import calibrate_noise
from dpbench.privacy.events import GaussianEvent
from dpbench.privacy.mechanisms import GaussianRelease


@dataclass
class _Planted(Algorithm):
    """Noisy full-batch gradient descent with σ calibrated to the budget, correct unless a subclass breaks it."""

    steps: int = 10
    learning_rate: float = 1.0
    clip: float = 1.0

    label: ClassVar[str] = "planted"
    look: ClassVar[Look] = Look(LIGHT_GREY, "8")
    audit: ClassVar[AuditCoverage] = AuditCoverage(("gaussian",))
    paper: ClassVar[str] = "planted"
    parameter_constraints: ClassVar[dict] = {"steps": [COUNT], "learning_rate": [POSITIVE], "clip": [POSITIVE]}
    paid_steps: ClassVar[float] = 1.0  # the share of the steps σ is calibrated for

    def fit(self, problem, ledger, rng, tracer):
        priced = max(1, int(self.steps * self.paid_steps))
        sigma = calibrate_noise(lambda s: ledger.eps_if(GaussianEvent(s), priced), ledger.epsilon)
        release = GaussianRelease(sensitivity=self.clip, noise_multiplier=sigma, rng=rng, ledger=ledger, label="g")
        w = np.zeros(problem.dim)
        everyone = np.arange(problem.n)
        for _ in range(self.steps):
            exact = problem.clipped_gradient_sum(w, everyone, self.clip)
            w = w - self.learning_rate * self.step(release(exact), exact) / problem.n_public
        return FitResult(w=self.finish(w), n_iterations=self.steps)

    def step(self, noisy, exact):
        return noisy

    def finish(self, w):
        return w


@dataclass
class Overspender(_Planted):
    """Calibrates σ for half of its steps and takes them all."""

    name: ClassVar[str] = "overspender"
    paid_steps: ClassVar[float] = 0.5


@dataclass
class Unpaid(_Planted):
    """Pays for each noisy gradient and descends along the exact one."""

    name: ClassVar[str] = "unpaid"

    def step(self, noisy, exact):
        return exact


@dataclass
class Unseeded(_Planted):
    """Adds a jitter from a generator of its own, outside the job's noise key."""

    name: ClassVar[str] = "unseeded"

    def finish(self, w):
        return w + np.random.default_rng().normal(0.0, 1e-6, w.shape)


@dataclass
class Unconstrained(_Planted):
    """Has a hyper-parameter nothing checks."""

    momentum: float = 0.0

    name: ClassVar[str] = "unconstrained"
'''

ENTRY_POINTS = """\
    [dpbench.methods]
    planted = planted_plugin.methods
    """


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    (site / "planted_plugin").mkdir()
    (site / "planted_plugin" / "__init__.py").write_text("")
    (site / "planted_plugin" / "methods.py").write_text(PLANTED)
    dist_info = site / "planted_plugin-0.1.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: planted-plugin\nVersion: 0.1\n")
    (dist_info / "entry_points.txt").write_text(textwrap.dedent(ENTRY_POINTS))
    return site


def check_method(name: str, site: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(site), os.environ.get("PYTHONPATH"))))}
    env["DPBENCH_CACHE"] = str(cwd / ".cache")
    command = [sys.executable, "-m", "dpbench", "check-method", name]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False)


OWNER = "dpbench check-method: plugin planted-plugin 0.1 (entry point dpbench.methods:planted = planted_plugin.methods)"


@pytest.mark.parametrize(
    ("name", "failure"),
    [
        ("overspender", "fails job add_remove: overspent its privacy budget (BudgetExceeded"),
        ("unpaid", "fails audit: the fit leaks more than its ledger pays for: ε̂ ≥ "),
        ("unseeded", "fails deterministic: not deterministic: job0 run again with its noise key: "),
        ("unconstrained", "fails declared: hyper-parameter momentum has no constraint (parameter_constraints)"),
    ],
)
def test_a_planted_fault_fails_in_one_line_naming_the_plugin(site, tmp_path, name, failure):
    result = check_method(name, site, tmp_path)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1, result.stdout[-3000:] + result.stderr[-3000:]
    assert lines[0].startswith(f"{OWNER}: method {name} {failure}"), lines[0]


def test_the_correct_planted_base_passes_every_check(site, tmp_path):
    """The same fit without a planted fault (entry point of its own) passes: the failures above are the faults'."""
    (site / "planted_plugin" / "good.py").write_text(
        "from dataclasses import dataclass\nfrom typing import ClassVar\n\nfrom planted_plugin.methods import _Planted\n\n\n"
        '@dataclass\nclass Good(_Planted):\n    """The base, unbroken."""\n\n    name: ClassVar[str] = "good"\n'
    )
    entry_points = site / "planted_plugin-0.1.dist-info" / "entry_points.txt"
    original = entry_points.read_text()
    entry_points.write_text(original + "good = planted_plugin.good:Good\n")
    try:
        result = check_method("good", site, tmp_path)
    finally:
        entry_points.write_text(original)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "dpbench check-method: good passed 7 checks"


def test_a_preset_is_refused_naming_what_check_method_takes(capsys):
    from dpbench.check_method import main

    assert main(["dp_sgd_sigma4"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dpbench check-method: error: algorithm=dp_sgd_sigma4 is a preset")
    assert "dp_sgd" in err[0]


def test_a_method_without_what_its_kind_calls_fails_declared():
    """The base class has no fit: a linear-model method that defines none is named, before any job runs."""
    from dpbench.algorithms.base import Algorithm, FitResult
    from dpbench.check_method import declared
    from dpbench.constraints import COUNT

    @dataclass
    class NoFit(Algorithm):
        name: ClassVar[str] = "no_fit"
        steps: int = 3
        parameter_constraints: ClassVar[dict] = {"steps": [COUNT]}

    outcome = declared(NoFit)
    assert not outcome.ok and outcome.detail == "it defines no fit(…), which a job of its kind (glm) calls"

    class WithFit(NoFit):
        def fit(self, problem, ledger, rng, tracer):
            return FitResult(w=None, n_iterations=0)

    assert declared(WithFit).ok
