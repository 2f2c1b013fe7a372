"""Read the results (and, for figures that need iteration-level data, the traces) under a set of
paths into one DataFrame each, through :func:`dpbench.results.load`: each file on its own, never as
hive partitions, a ``job`` column naming the job's directory (the given path joined with ``job_dir``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dpbench.errors import DpbenchError
from dpbench.results import RESULTS_FILE, TRACE_FILE, load


def _load(path: Path, table: str) -> pd.DataFrame:
    """:func:`~dpbench.results.load` of one path, with ``job``: the path's job directory as given."""
    frame = load(path, table)
    root = path.parent if path.is_file() else path
    return frame.assign(job=[str(root / job_dir) for job_dir in frame["job_dir"]])


def load_results(paths: Iterable[str | Path]) -> pd.DataFrame:
    """All rows of every ``results.parquet`` under ``paths`` (files or directories searched recursively)."""
    paths = [Path(p) for p in paths]
    if not paths:
        raise DpbenchError(f"no {RESULTS_FILE} found (no paths given)")
    return pd.concat([_load(path, "results") for path in paths], ignore_index=True)


@dataclass(frozen=True)
class Jobs:
    """The results and the traces of a set of jobs, both tagged with a ``job`` column (the job's
    directory), so a trace row joins its run's results row on (job, fold, rep)."""

    results: pd.DataFrame
    traces: pd.DataFrame

    def __len__(self) -> int:
        return len(self.results)


def load_jobs(paths: Iterable[str | Path]) -> Jobs:
    """Every ``results.parquet`` under ``paths`` and the ``trace.parquet`` written next to it.

    A job without its trace is an error (a partial or foreign results file), never silently skipped;
    the traces of jobs without results (still running) are left out."""
    paths = [Path(p) for p in paths]
    results = load_results(paths)
    traces = pd.concat([_load(_trace_path(path), "trace") for path in paths], ignore_index=True)
    missing = sorted(set(results["job"]) - set(traces["job"]))
    if missing:
        raise DpbenchError(f"{Path(missing[0]) / RESULTS_FILE} has no {TRACE_FILE} next to it; rerun that job")
    return Jobs(results, traces[traces["job"].isin(set(results["job"]))].reset_index(drop=True))


def _trace_path(path: Path) -> Path:
    """Where the traces of ``path`` are: the trace next to a results file, or the directory itself."""
    if not path.is_file():
        return path
    trace = path.parent / TRACE_FILE
    if not trace.is_file():
        raise DpbenchError(f"{path} has no {TRACE_FILE} next to it; rerun that job")
    return trace
