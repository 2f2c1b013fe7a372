"""A job resolved once: the :class:`RunPlan` every layer below the configuration reads.

:func:`dpbench.resolve.run_plan` validates a composed config and builds the plan; the engine and the
job kinds take it instead of re-deriving what it holds from the settings. It holds the method, built
once from its hyper-parameters; how the run's ε splits between a noisy training size and the method
(:mod:`dpbench.privacy.counts`), and the settings with the method's part as ``privacy.eps``; the
columns that say what ran (:func:`~dpbench.jobs.columns.identity_columns`). From it come the run's
ledger (under the method's neighbouring relation, :mod:`dpbench.jobs.ledgers`), the provenance columns
and the trace's identity.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dpbench.jobs.columns import empty_trace, identity_columns, provenance_columns, trace_identity
from dpbench.jobs.ledgers import accountant_options, count_budget, method_config, run_ledger

if TYPE_CHECKING:
    import pandas as pd

    from dpbench.algorithms.base import Algorithm
    from dpbench.privacy.counts import CountBudget
    from dpbench.privacy.ledger import Ledger
    from dpbench.settings import RunConfig


@dataclass(frozen=True)
class RunPlan:
    """One job, resolved: ``run`` (the validated settings), ``method`` (the algorithm instance),
    ``count`` (ε_n for ñ under add/remove, the rest for the method), ``method_run`` (``run`` with the
    method's part of ε: what its ledger, tuning plan and stopping rule are built from) and ``identity``
    (the identity columns of every results row)."""

    run: RunConfig
    method: Algorithm
    count: CountBudget
    method_run: RunConfig
    identity: Mapping[str, Any]

    @property
    def kind(self) -> str:
        """The problem kind whose job runs the plan (``glm``, ``pwa``, ``bo``: :mod:`dpbench.jobs`)."""
        return self.run.kind

    def ledger(self, method: Algorithm | None = None) -> tuple[Ledger, Callable[[float], float]]:
        """A fresh ledger for one run of ``method`` (default: the plan's; a tuning trial passes its grid
        point's) on the method's part of the budget, and the map from its spend to the reported ε."""
        return run_ledger(self.method if method is None else method, self.method_run)

    def accountant_options(self, method: Algorithm | None = None) -> dict[str, Any]:
        """The options of ``method``'s accountant under this run's sampler."""
        return accountant_options(self.method if method is None else method, self.method_run)

    def provenance(self, checksum: str, scaling: str = "none", data_breaches: Sequence[str] = ()) -> dict[str, Any]:
        """The provenance columns of every results row (:func:`~dpbench.jobs.columns.provenance_columns`)."""
        return provenance_columns(self.run, self.method, checksum, scaling, data_breaches)

    def trace_identity(self) -> dict[str, Any]:
        """The columns every trace row carries besides fold, rep and iteration."""
        return trace_identity(self.run)

    def empty_trace(self) -> pd.DataFrame:
        """The trace of a job that records none."""
        return empty_trace(self.run)

    def with_params(self, params: Mapping[str, Any]) -> RunPlan:
        """The plan of the same run with hyper-parameters ``params`` changed (a tuning grid point)."""
        return make_plan(dataclasses.replace(self.run, algorithm_params={**self.run.algorithm_params, **params}))


def make_plan(run: RunConfig, method: Algorithm | None = None) -> RunPlan:
    """The plan of validated settings ``run`` (:func:`dpbench.resolve.run_plan` validates them first);
    ``method``: the instance already built from ``run``'s hyper-parameters, if any."""
    from dpbench.algorithms.registry import make_algorithm

    method = method if method is not None else make_algorithm(run.algorithm, run.algorithm_params)
    count = count_budget(method, run)
    method_run = method_config(run, count)
    return RunPlan(run, method, count, method_run, identity_columns(run, method, method_run))
