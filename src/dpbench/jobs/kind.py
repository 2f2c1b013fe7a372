"""The protocol of a job kind (:mod:`dpbench.jobs`) and what it returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from dpbench.jobs.columns import CORE_COLUMNS, TRACE_IDENTITY_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

    from dpbench.jobs.plan import RunPlan
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

    def missing_columns(self) -> list[str]:
        """The core results columns and trace identity columns this output lacks (empty when it has them all)."""
        missing = [f"results.{c}" for c in CORE_COLUMNS if c not in self.results.columns]
        missing += [f"trace.{c}" for c in ("fold", "rep", *TRACE_IDENTITY_COLUMNS) if c not in self.trace.columns]
        return missing


class JobKind(Protocol):
    """One kind of job: it computes the runs of ``plan`` (:class:`~dpbench.jobs.plan.RunPlan`). ``store``
    holds the runs an interrupted attempt finished (:mod:`dpbench.resume`); a kind that computes its runs
    in blocks may ignore it."""

    def run(self, plan: RunPlan, store: RunStore) -> JobOutput: ...
