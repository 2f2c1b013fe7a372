"""dpbench's sweeper: Hydra's basic sweeper, checking every override of a batch once.

Hydra's :class:`~hydra._internal.core_plugins.basic_sweeper.BasicSweeper` composes every job's
configuration before launching a batch, to catch a composition error early, and the launcher composes it
again; that is one needless composition per job, in the sweep's main process, before the first job starts
(0.2 s each on the CI machine: 2 minutes for the leaderboard's 576 jobs). :class:`DpbenchSweeper`
composes a few jobs that together use every override of the batch instead (:func:`representatives`),
each override reduced to its *composition signature*: a plain dotted leaf key without its value
(``privacy.eps=0.4`` → ``privacy.eps=``, ``algorithm.clip=2`` → ``algorithm.clip=``). Such a value
cannot change whether a job composes: dpbench's configuration is plain YAML (no typed nodes), so a leaf
value is merged as given and checked later by :mod:`dpbench.resolve`, in the job, naming the value.
Every other override keeps its value: config groups (``dataset=adult``, ``hydra/launcher=joblib``),
top-level keys, keys under ``hydra.`` (Hydra's own typed configuration) and overrides with a prefix
(``+``, ``++``, ``~``). So a misspelt option, an unknown key or a key an option lacks (a sweep's jobs all
carry the same keys, so each option is composed with every key) stops the sweep before any job starts;
only an error that needs two options together (one option's defaults list removing a group another
overrides, which no shipped configuration does) surfaces when its first job composes, in the launcher:
the jobs finished by then are kept, and a rerun skips them. The sweep, its jobs and their results are
Hydra's own; only the early check is shared.

The jobs are also launched in another order: those that train the most models first
(:func:`most_fits_first`: ``tuning=oracle`` trains every grid point with the whole budget, ``tuning=private``
its trials, any other job one model a run), the rest in Hydra's order. A launcher hands the next job to the
first free worker, so the long jobs no longer start last and leave the other cores idle at the end (in the
leaderboard preset, 150 s of one idle core). No result depends on the order: each job's seeds, noise and
output folder come from its own overrides.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hydra._internal.core_plugins.basic_sweeper import BasicSweeper

PLAIN_LEAF = re.compile(r"^(?P<key>[A-Za-z_][\w-]*(?:\.[\w-]+)+)=")
"""``a.b=…`` without a prefix: a value in a plain YAML node, which composes whatever it is."""


def signature(overrides: Sequence[str]) -> tuple[str, ...]:
    """What decides whether a job composes: its overrides, a plain dotted leaf reduced to its key."""
    kept = []
    for override in overrides:
        match = PLAIN_LEAF.match(override)
        if match is not None and not match["key"].startswith("hydra."):
            kept.append(match["key"] + "=")
        else:
            kept.append(override)
    return tuple(kept)


def representatives(batch: Sequence[Sequence[str]]) -> list[Sequence[str]]:
    """Jobs of ``batch`` that together use every override of its jobs' signatures: each job, in the batch's
    order, whose signature has an override no job kept before it has (a sweep over four datasets and sixteen
    algorithms, 64 signatures, keeps 19 jobs)."""
    kept: list[Sequence[str]] = []
    covered: set[str] = set()
    for overrides in batch:
        overrides_signature = signature(overrides)
        if not covered.issuperset(overrides_signature):
            kept.append(overrides)
            covered.update(overrides_signature)
    return kept


MODELS_TRAINED = {"tuning=oracle": 0, "tuning=private": 1}
"""The rank of a job by how many models it trains (fewer ranks higher); every other job ranks 2."""


def most_fits_first(jobs: Sequence[Sequence[str]]) -> list[Sequence[str]]:
    """``jobs`` (each a list of overrides) with ``tuning=oracle`` jobs first, then ``tuning=private`` ones, then the
    rest, each group in its given order."""
    return sorted(jobs, key=lambda overrides: min((MODELS_TRAINED.get(o, 2) for o in overrides), default=2))


class DpbenchSweeper(BasicSweeper):
    """Hydra's basic sweeper (the same jobs, batches of the same size, the same parameters), launching the jobs
    that train the most models first and validating the jobs that use every override once (module docstring)."""

    @staticmethod
    def split_arguments(overrides, max_batch_size: int | None) -> list[list[list[str]]]:
        """Hydra's jobs of ``overrides``, ordered by :func:`most_fits_first`, in batches of ``max_batch_size``."""
        (jobs,) = BasicSweeper.split_arguments(overrides, None)
        return [list(chunk) for chunk in BasicSweeper.split_overrides_to_chunks(most_fits_first(jobs), max_batch_size)]

    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        super().validate_batch_is_legal(representatives(batch))
