"""Rényi filters: how a run that chooses its releases from noisy outputs, and stops when the budget
cannot pay, is priced.

A post-hoc minimum over Rényi orders (``tight`` or ``prop1`` on every order) is a proven (ε, δ)
guarantee only for a composition fixed in advance. For an adaptive run, dpbench uses one of two
proven rules, chosen before any data is seen and recorded in every results row (``stopping_rule``):

* **One order fixed in advance** (the default when the method announces its planned step): a filter
  that keeps Σ_t ρ_t(α*) ≤ B at one order α* makes the whole run (α*, B)-RDP (Feldman & Zrnic,
  "Individual Privacy Accounting via a Rényi Filter", NeurIPS 2021, Thm 3.1), so the tight
  conversion at α* (Balle et al. 2020 Thm 21) is valid. α* is the order at which the planned step,
  repeated as often as the budget allows, converts best: public values only (ε, δ and the method's
  hyper-parameters).
* **A union over a fixed grid of orders** (``conversion="filter"`` of
  :class:`~dpbench.privacy.accountants.RDPAccountant`, proof in
  :func:`~dpbench.privacy.rdp.conversion_offsets`): for methods that announce no plan.
"""

from __future__ import annotations

import numpy as np

from dpbench.errors import BudgetError
from dpbench.privacy.accountants import RDPAccountant
from dpbench.privacy.events import PrivacyEvent
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.rdp import DEFAULT_ORDERS, FILTER_ORDERS, eps_from_rdp


def fixed_filter_order(planned_step: PrivacyEvent, epsilon: float, delta: float, **accountant_options) -> float:
    """The order α* of a one-order Rényi filter for a run whose steps are planned as ``planned_step``:
    the order at which k copies of it, k the most the budget (ε, δ) affords under the tight post-hoc
    conversion, convert to the smallest ε. Depends on public values only. Raises
    :class:`~dpbench.errors.BudgetError` (a ValueError too) when not even one planned step fits the
    budget (nothing could be released): at very large ε a method whose per-step ρ grows as ε² (chen_lee's
    ε_iter = ε/(2·50)) overspends on its first step."""
    accountant = RDPAccountant(orders=DEFAULT_ORDERS, conversion="tight", **accountant_options)
    k = Ledger(epsilon, delta, accountant).max_affordable(planned_step)
    if k == 0:
        raise BudgetError(
            f"privacy.eps = {epsilon:g} (privacy.delta = {delta:g}) cannot pay for even one planned step of this method "
            f"({planned_step}); choose another privacy.eps"
        )
    return eps_from_rdp(DEFAULT_ORDERS, k * accountant.cost(planned_step), delta, method="tight")[1]


def filter_accountant(
    planned_step: PrivacyEvent | None, epsilon: float, delta: float, **accountant_options
) -> RDPAccountant:
    """The RDP accountant of an adaptive run: the tight conversion at the one order
    :func:`fixed_filter_order` picks from ``planned_step``, or the union filter over
    :data:`~dpbench.privacy.rdp.FILTER_ORDERS` when the method announces no plan (None)."""
    if planned_step is None:
        return RDPAccountant(orders=FILTER_ORDERS, conversion="filter", **accountant_options)
    order = fixed_filter_order(planned_step, epsilon, delta, **accountant_options)
    return RDPAccountant(orders=np.array([order]), conversion="tight", **accountant_options)


def stopping_rule(accountant: RDPAccountant | None, adaptive: bool) -> str:
    """What makes the recorded ε a guarantee, for the results' ``stopping_rule`` column:
    ``fixed_composition`` (the releases were fixed in advance; a post-hoc minimum over orders is
    valid), ``renyi_filter(alpha=<α*>)`` or ``renyi_filter_union(<|Λ|> orders)`` for adaptive RDP runs,
    ``budget_filter`` for adaptive runs under zCDP, pure or approximate DP (a filter on one additive
    budget is valid there: Rogers et al. 2016, and zCDP = RDP at every order at once)."""
    if not adaptive:
        return "fixed_composition"
    if not isinstance(accountant, RDPAccountant):
        return "budget_filter"
    if accountant.conversion == "filter":
        return f"renyi_filter_union({accountant.orders.size} orders)"
    if accountant.orders.size != 1:
        raise ValueError(
            f"an adaptive run priced by a post-hoc minimum over {accountant.orders.size} orders is not a proven filter"
        )
    return f"renyi_filter(alpha={accountant.orders[0]:g})"
