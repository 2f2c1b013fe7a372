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
from dpbench.errors import DpbenchError
from dpbench.jobs.columns import CORE_COLUMNS, TRACE_IDENTITY_COLUMNS
from dpbench.jobs.plan import make_plan

ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"
SMALL = ("algorithm=nonprivate", "dataset.n=500", "reps=3", "progress=false")


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
    """The example kind of docs/architecture.md, loaded as a module and registered for ``glm``."""
    example = re.search(r"```python\n(import math\n.*?)```", ARCHITECTURE.read_text(), flags=re.DOTALL).group(1)
    module = types.ModuleType("documented_job_kind")
    exec(compile(example, str(ARCHITECTURE), "exec"), module.__dict__)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(jobs.KINDS, "glm", f"{module.__name__}:MAJORITY_LABEL_JOB")
    return module


def test_the_documented_kind_runs_through_the_engine(documented_kind, compose_run_config, tmp_path):
    cfg = compose_run_config(*SMALL)
    results = engine.run_job(make_plan(cfg), tmp_path)
    assert list(results["rep"]) == [0, 1, 2]
    assert set(CORE_COLUMNS) <= set(results.columns)
    on_disk = pd.read_parquet(tmp_path / "results.parquet")
    assert (on_disk["config_hash"] == cfg.config_hash).all() and (on_disk["algorithm"] == "nonprivate").all()
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
    with pytest.raises(DpbenchError, match=f"the glm job kind wrote no results.{dropped}$"):
        engine.run_job(make_plan(compose_run_config(*SMALL)), tmp_path)
    assert not (tmp_path / "results.parquet").exists() and not (tmp_path / "trace.parquet").exists()
