"""Neighbouring relations: which pairs of datasets an (ε, δ) protects, and the one sound conversion.

A run's ``privacy.neighbouring`` is one of :data:`RELATIONS`, named after dp-accounting's
``NeighboringRelation`` (:data:`DP_ACCOUNTING_NAMES`), or ``native`` (:data:`CHOICES`):

* ``add_remove`` — D′ is D with one record added or removed (the convention of Opacus, TF Privacy
  and dp-accounting). A method may use the training-set size only as the public constant n̄ the
  engine hands it (``GLMProblem.n_public``), never the size of the data it is run on;
* ``replace_one`` — D′ is D with one record replaced by any other; n is fixed and public.

Each method states, per relation, whether its sensitivities are computed for it (``native``) or
whether it reaches it by group privacy (``group_privacy``, :func:`group_privacy_budget`); the
engine refuses the others. ``privacy.neighbouring=native`` runs every method under the relation
its own paper proves (``Algorithm.paper_relation``): what the papers' figures did, and what their
presets use to reproduce them — ranks across methods then mix relations, and every row says which.
The ledger of a run composes events of one relation only.
"""

from __future__ import annotations

import math

from dpbench.errors import BudgetError
from dpbench.privacy._checks import check_delta, check_positive

#: The smallest δ′ group privacy hands an accountant (log δ′ stays far from underflow).
MIN_DELTA = 1e-300

#: The relations a run may ask for (``privacy.neighbouring``), each with its meaning.
RELATIONS: dict[str, str] = {
    "add_remove": "one record added or removed; n may change (only the public n̄ may be used)",
    "replace_one": "one record replaced by another; n fixed and public",
}

#: The values of ``privacy.neighbouring``: a relation, or ``native`` (each method's paper's).
CHOICES: tuple[str, ...] = (*RELATIONS, "native")

#: dp-accounting's ``NeighboringRelation`` member for each relation.
DP_ACCOUNTING_NAMES: dict[str, str] = {"add_remove": "ADD_OR_REMOVE_ONE", "replace_one": "REPLACE_ONE"}

#: How a method meets a requested relation (``Algorithm.relation_mode``).
MODES: dict[str, str] = {
    "native": "its sensitivities are computed for the requested relation",
    "group_privacy": "run at (ε/2, δ/(1 + e^{ε/2})) under add/remove: replace-one is a group of two add/remove steps",
}


def check_relation(relation: str) -> str:
    """``relation`` if it is one of :data:`RELATIONS`, else a ValueError naming it."""
    if relation not in RELATIONS:
        raise ValueError(f"privacy.neighbouring must be one of {', '.join(RELATIONS)}, got {relation!r}")
    return relation


def resolve(algorithm, requested: str) -> tuple[str, str | None]:
    """(relation, mode) of ``algorithm`` for ``privacy.neighbouring`` = ``requested``: the paper's
    relation and ``native`` for ``native``, else ``requested`` and ``algorithm.relation_mode`` of it
    (None: the method cannot meet it). Non-private methods get ("none", "none")."""
    if not algorithm.private:
        return "none", "none"
    if requested == "native":
        return algorithm.paper_relation, "native"
    return requested, algorithm.relation_mode(requested)


def supported(algorithm) -> list[str]:
    """The relations ``algorithm`` can meet (natively or by group privacy)."""
    return [r for r in RELATIONS if algorithm.relation_mode(r) is not None]


def group_privacy_budget(epsilon: float, delta: float) -> tuple[float, float]:
    """The add/remove budget (ε′, δ′) = (ε/2, δ/(1 + e^{ε/2})) whose mechanisms are replace-one (ε, δ)-DP.

    Replacing a record is removing it and adding another: two add/remove steps, D → D₁ → D′.
    Chaining the (ε′, δ′) inequality twice, P[M(D) ∈ S] ≤ e^{ε′}(e^{ε′}P[M(D′) ∈ S] + δ′) + δ′, so
    the mechanism is (2ε′, (1 + e^{ε′})δ′)-DP for replace-one pairs (group privacy, Dwork & Roth
    2014 Thm 2.2 for pure ε; the (ε, δ) form is this chaining), which is (ε, δ) at the values returned.
    """
    eps, d = check_positive("epsilon", epsilon), check_delta(delta)
    shrink = math.exp(-eps / 2.0)  # δ/(1 + e^{ε/2}) = δ e^{−ε/2}/(1 + e^{−ε/2}): no overflow
    d_prime = d * shrink / (1.0 + shrink)
    if d_prime < MIN_DELTA:
        largest = 2.0 * (math.log(d) - math.log(MIN_DELTA))
        raise BudgetError(
            f"privacy.eps = {eps:g} is too large for privacy.neighbouring=replace_one by group privacy: the add/remove "
            f"δ′ = δ/(1 + e^{{ε/2}}) = {d_prime:.3g} is below {MIN_DELTA:g}; use privacy.eps ≤ {math.floor(largest):d}"
        )
    return eps / 2.0, d_prime


def group_privacy_epsilon(epsilon_add_remove: float) -> float:
    """The replace-one ε of an add/remove mechanism that spent ``epsilon_add_remove`` (2ε′); its
    δ is (1 + e^{ε′})δ′ ≤ the requested δ whenever ε′ ≤ ε/2 (:func:`group_privacy_budget`)."""
    return 2.0 * epsilon_add_remove


def native_epsilon(epsilon: float) -> float:
    """The ε of a run that meets the relation natively: its ledger's spend as it is."""
    return epsilon


def run_budget(algorithm, epsilon: float, delta: float, requested: str) -> tuple[float, float, str, str]:
    """What a run's ledger is built with: (ε, δ, the relation its events are charged under, mode).

    ``native``: the requested (ε, δ) under the method's relation. ``group_privacy``: the add/remove
    budget of :func:`group_privacy_budget`; the run's reported ε is then
    :func:`group_privacy_epsilon` of the ledger's. Raises ValueError for a relation the method
    cannot meet (config refuses it first, in one line)."""
    relation, mode = resolve(algorithm, requested)
    if mode is None:
        raise ValueError(f"{algorithm.name} does not support privacy.neighbouring={requested}")
    if mode == "group_privacy":
        return (*group_privacy_budget(epsilon, delta), "add_remove", mode)
    return epsilon, delta, relation if relation in RELATIONS else "add_remove", mode
