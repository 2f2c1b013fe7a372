"""dpbench's sweeper: Hydra's basic sweeper, checking each distinct composition once.

Hydra's :class:`~hydra._internal.core_plugins.basic_sweeper.BasicSweeper` composes every job's
configuration before launching a batch, to catch a composition error early, and the launcher composes it
again; in a sweep over ε values that is one needless composition per job, in the sweep's main process
(0.22 s each on the CI machine: 4 of the leaderboard's minutes, before the first job starts).
:class:`DpbenchSweeper` checks one job per *composition signature* instead: the job's overrides with the
value of every plain dotted leaf key (``privacy.eps=0.4``, ``algorithm.clip=2``) left out. Such a value
cannot change whether the job composes: dpbench's configuration is plain YAML (no typed nodes), so a
leaf value is merged as given and checked later by :mod:`dpbench.resolve`, in the job, naming the value.
Every other override keeps its value in the signature: config groups (``dataset=adult``,
``hydra/launcher=joblib``), top-level keys, keys under ``hydra.`` (Hydra's own typed configuration) and
overrides with a prefix (``+``, ``++``, ``~``). The sweep, its jobs and their results are Hydra's own;
only the early check is shared.
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
    """The first job of each composition signature in ``batch``, in the batch's order."""
    seen: dict[tuple[str, ...], Sequence[str]] = {}
    for overrides in batch:
        seen.setdefault(signature(overrides), overrides)
    return list(seen.values())


class DpbenchSweeper(BasicSweeper):
    """Hydra's basic sweeper (the same batches, launches and parameters), validating one job per
    composition signature (module docstring)."""

    def validate_batch_is_legal(self, batch: Sequence[Sequence[str]]) -> None:
        super().validate_batch_is_legal(representatives(batch))
