"""The engine knows no kind of job. Every algorithm's problem_kind has a registered job
kind; the smallest kind of docs/architecture.md (run from the page itself) goes through
``engine.run_job`` untouched; an output without the core columns is refused before any file is written."""

from __future__ import annotations

import re
import sys
import types
from pathlib import Path

import pandas as pd
import pytest

from dpbench import engine, jobs
from dpbench.algorithms.registry import ALGORITHMS, algorithm_class
from dpbench.errors import ConfigError, DpbenchError
from dpbench.jobs.columns import CORE_COLUMNS, TRACE_IDENTITY_COLUMNS
from dpbench.jobs.plan import make_plan

ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
SMALL = ("algorithm=majority", "dataset.n=500", "reps=3", "progress=false")


def test_every_algorithm_has_a_job_kind():
    kinds = {algorithm_class(name).problem_kind for name in ALGORITHMS}
    assert kinds <= set(jobs.KINDS), kinds - set(jobs.KINDS)
    for kind in kinds:
        assert callable(jobs.job_kind(kind).run)


def test_the_engine_names_no_kind():
    source = Path(engine.__file__).read_text()
    assert "problem_kind ==" not in source
    assert not re.search(r"\b(glm|pwa|bo)\b", re.sub(r'""".*?"""', "", source, flags=re.DOTALL))


@pytest.fixture
def documented_kind(monkeypatch):
    """The example kind of docs/architecture.md, loaded as a module and registered as its page says, under
    its own name ``majority_label``, which the majority baseline then runs."""
    page = ARCHITECTURE.read_text()
    example = re.search(r"```python\n(import math\n.*?)```", page, flags=re.DOTALL).group(1)
    registration = re.search(r"```python\n(from dpbench.jobs import KINDS, Kind\n.*?)```", page, flags=re.DOTALL).group(
        1
    )
    module = types.ModuleType("documented_job_kind")
    exec(compile(example, str(ARCHITECTURE), "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(jobs.KINDS, "majority_label", None)  # the registration below fills it; undone after the test
    exec(compile(registration.replace("your_package.majority_label", module.__name__), str(ARCHITECTURE), "exec"), {})
    monkeypatch.setattr(algorithm_class("majority"), "problem_kind", "majority_label")
    return module


def test_the_documented_kind_runs_through_the_engine(documented_kind, compose_run_config, tmp_path):
    cfg = compose_run_config(*SMALL)
    assert cfg.kind == "majority_label"
    results = engine.run_job(make_plan(cfg), tmp_path)
    assert list(results["rep"]) == [0, 1, 2]
    assert set(CORE_COLUMNS) <= set(results.columns)
    on_disk = pd.read_parquet(tmp_path / "results.parquet")
    assert (on_disk["config_hash"] == cfg.config_hash).all() and (on_disk["algorithm"] == "majority").all()
    trace = pd.read_parquet(tmp_path / "trace.parquet")
    assert {"fold", "rep", *TRACE_IDENTITY_COLUMNS} <= set(trace.columns) and trace.empty
    assert (tmp_path / "run.json").is_file()


@pytest.mark.parametrize("dropped", ["eps_spent", "config_hash", "neighbouring"])
def test_an_output_without_a_core_column_is_refused(
    documented_kind, compose_run_config, tmp_path, monkeypatch, dropped
):
    real_run = documented_kind.MajorityLabelJob.run

    def run_without(self, cfg, store):
        output = real_run(self, cfg, store)
        output.results = output.results.drop(columns=dropped)
        return output

    monkeypatch.setattr(documented_kind.MajorityLabelJob, "run", run_without)
    with pytest.raises(DpbenchError, match=f"the majority_label job kind wrote no results.{dropped}$"):
        engine.run_job(make_plan(compose_run_config(*SMALL)), tmp_path)
    assert not (tmp_path / "results.parquet").exists() and not (tmp_path / "trace.parquet").exists()


def test_a_method_of_a_kind_no_job_runs_is_refused_by_configuration(compose_run_config, monkeypatch):
    monkeypatch.setattr(algorithm_class("majority"), "problem_kind", "unregistered")
    with pytest.raises(
        ConfigError, match="algorithm=majority runs problem_kind='unregistered', which no job kind runs"
    ):
        compose_run_config(*SMALL)
