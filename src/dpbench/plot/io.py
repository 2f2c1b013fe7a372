"""Read every ``results.parquet`` under a set of paths into one DataFrame (and, for figures that
need iteration-level data, each job's ``trace.parquet`` with it)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from dpbench.errors import DpbenchError
from dpbench.results import RESULTS_FILE, TRACE_FILE


def find_results(paths: Iterable[str | Path], name: str = RESULTS_FILE) -> list[Path]:
    """Files called ``name`` given directly or found recursively under directories."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise DpbenchError(f"no such file or directory: {path}")
        found.extend([path] if path.is_file() else sorted(path.rglob(name)))
    return found


def load_results(paths: Iterable[str | Path], name: str = RESULTS_FILE) -> pd.DataFrame:
    """All rows of all ``name`` files under ``paths`` (schemas unified across jobs)."""
    paths = list(paths)
    files = find_results(paths, name)
    if not files:
        raise DpbenchError(f"no {name} found under {', '.join(map(str, paths)) or '(no paths given)'}")
    schema = pa.unify_schemas([pq.read_schema(f) for f in files], promote_options="permissive")
    table = pads.dataset([str(f) for f in files], format="parquet", schema=schema).to_table()
    return table.to_pandas()


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

    A job without its trace is an error (a partial or foreign results file), never silently skipped.
    """
    paths = list(paths)
    files = find_results(paths, RESULTS_FILE)
    if not files:
        raise DpbenchError(f"no {RESULTS_FILE} found under {', '.join(map(str, paths)) or '(no paths given)'}")
    results, traces = [], []
    for file in files:
        trace_file = file.parent / TRACE_FILE
        if not trace_file.is_file():
            raise DpbenchError(f"{file} has no {TRACE_FILE} next to it; rerun that job")
        job = str(file.parent)
        results.append(pd.read_parquet(file).assign(job=job))
        traces.append(pd.read_parquet(trace_file).assign(job=job))
    return Jobs(pd.concat(results, ignore_index=True), pd.concat(traces, ignore_index=True))
