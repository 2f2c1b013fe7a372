"""The protocol of a job kind (:mod:`dpbench.jobs`) and what it returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pandas as pd

    from dpbench.config import RunConfig
    from dpbench.resume import RunStore


@dataclass
class JobOutput:
    """What a job computed: one results row per run (at least :data:`~dpbench.jobs.columns.CORE_COLUMNS`),
    the trace (at least :func:`~dpbench.jobs.columns.trace_columns`), the dataset's public description
    for run.json, and one ledger summary per run (or block of runs)."""

    results: pd.DataFrame
    trace: pd.DataFrame
    dataset_info: dict[str, Any]
    ledgers: list[dict[str, Any]] = field(default_factory=list)


class JobKind(Protocol):
    """One kind of job. ``store`` holds the runs an interrupted attempt finished (:mod:`dpbench.resume`);
    a kind that computes its runs in blocks may ignore it."""

    def run(self, cfg: RunConfig, store: RunStore) -> JobOutput: ...
