"""A noisy training-set size n̄ for methods run under add/remove, paid from the run's budget.

Under ``add_remove`` a neighbouring dataset has one record more or fewer, so the number of training
records n is itself a function of the private data. The GLM methods read a size — DP-SGD's rate
q = L/n̄, ObjPert's and OutPert's sensitivities 2G/(n̄μ), the normalisers of every clipped sum — and
their proofs hold for n̄ a constant fixed before the data are read. The realised fold size is not
such a constant under add/remove: using it, the bounds hold only for *zero-out* neighbours (a record
replaced by a null record of zero gradient), which keep n fixed.

So a run under add/remove first releases the count (Dwork, McSherry, Nissim & Smith 2006, the
Laplace mechanism; a count has sensitivity 1 under add/remove):

    ñ = max(1, round(n + Lap(1/ε_n))),   ε_n = ``privacy.count_share`` · ε,

and the method runs with n̄ = ñ, a public constant given the release, at the remaining budget
ε − ε_n (same δ). By basic composition (Dwork & Roth 2014, Thm 3.16) the pair (ñ, model) is
(ε_n + ε_m, δ)-DP; rounding and the floor at 1 are post-processing. ñ is published (``n_public``);
the row's ``eps_spent`` is the method's spend plus ε_n, and run.json's ledger carries the count's own
ledger (``count``) so that ``dpbench-verify`` recomputes both parts.

``privacy.count_share = 0`` keeps the realised size as n̄: the switch that measures what paying for n
costs. Such rows say ``guarantee_valid = false`` (their (ε, δ) is a zero-out guarantee, not add/remove).
Under ``replace_one`` n is fixed and public by definition: nothing is paid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpbench.privacy.mechanisms import laplace_mechanism

#: The spawn key of the count's noise stream: (seed, fold, rep, COUNT_STREAM).
COUNT_STREAM = 29


@dataclass(frozen=True)
class CountBudget:
    """The split of a run's ε between the count (``count_eps``, 0 when nothing is paid) and the
    method (``method_eps``), with ``count_eps + method_eps ≤ eps`` in floating point."""

    eps: float
    count_eps: float
    method_eps: float

    @property
    def paid(self) -> bool:
        return self.count_eps > 0.0


def split_budget(eps: float, share: float) -> CountBudget:
    """ε_n = ``share``·ε for the count and ε − ε_n for the method, the latter nudged down by an ulp
    until the two sum to at most ε in floating point (so no rounding overspends the budget)."""
    if not 0.0 <= share < 1.0:
        raise ValueError(f"privacy.count_share must be in [0, 1), got {share!r}")
    count_eps = share * eps
    method_eps = eps - count_eps
    while count_eps + method_eps > eps:
        method_eps = math.nextafter(method_eps, 0.0)
    return CountBudget(eps, count_eps, method_eps)


def no_count(eps: float) -> CountBudget:
    """The whole ε to the method: nothing paid for n (replace-one, non-private methods, share 0)."""
    return CountBudget(eps, 0.0, eps)


def noisy_count(n, epsilon: float, rng: np.random.Generator, ledger):
    """max(1, round(n + Lap(1/ε))) by the Laplace mechanism (a count has sensitivity 1 under add/remove),
    charged to ``ledger``; ``n`` may be an array of counts (independent releases, one charge: the audit's
    vectorised runs)."""
    noisy = laplace_mechanism(
        np.asarray(n, dtype=float),
        sensitivity=1.0,
        epsilon=epsilon,
        rng=rng,
        ledger=ledger,
        label="training_count",
        neighbouring="add_remove",
    )
    return np.maximum(1, np.rint(noisy)).astype(np.int64)


def release_count(n: int, epsilon: float, delta: float, rng: np.random.Generator) -> tuple[int, dict[str, Any]]:
    """(ñ, the count's ledger summary): :func:`noisy_count` of ``n`` charged to a pure-DP ledger of
    budget ε whose summary is returned for run.json (δ is the run's, unused by a pure ledger)."""
    from dpbench.privacy.ledger import Ledger

    ledger = Ledger(epsilon, delta, "pure", neighbouring="add_remove")
    return int(noisy_count(n, epsilon, rng, ledger)), ledger.summary()
