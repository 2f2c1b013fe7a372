"""ε and δ of a run recomputed from its ledger summary alone (run.json's ``ledgers``), without Ledger code.

A :meth:`~dpbench.privacy.ledger.Ledger.summary` lists the distinct events the run was charged
with their counts (:func:`~dpbench.privacy.serialize.events_from_summary`). A fresh accountant of the
recorded kind prices each event; the costs are added here (``math.fsum``, or a plain sum of RDP
curves) and converted at the recorded δ by the accountant's definition — :func:`eps_from_rdp` with
the recorded conversion, the multi-order filter's log(|Λ|/δ)/(α − 1), ρ + 2√(ρ log 1/δ) for zCDP,
basic composition for pure and (ε, δ) ledgers. A Ledger that mis-added costs, converted with the
wrong δ or method, or a job that reported something other than its ledger's spend, disagrees with
this (tests/test_eps_recomputation.py, ``dpbench-verify``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from dpbench.privacy.accountants import RDPAccountant, make_accountant
from dpbench.privacy.events import ApproxDPEvent
from dpbench.privacy.rdp import eps_from_rdp, orders_for
from dpbench.privacy.serialize import events_from_summary
from dpbench.privacy.zcdp import zcdp_epsilon


def summary_orders(summary: Mapping[str, Any]) -> np.ndarray:
    """The RDP orders of an ``rdp`` ledger summary: those it names (a one-order filter's α*), else
    the default of its conversion (:func:`~dpbench.privacy.rdp.orders_for`)."""
    if summary.get("orders") is not None:
        return np.array(summary["orders"], dtype=np.float64)
    return orders_for(summary["conversion"])


def recompute_epsilon(summary: Mapping[str, Any]) -> float:
    """ε of the run from its ledger summary alone (module docstring). Raises ValueError for a summary
    without ``events`` or of an unknown accountant, and the accountant's error for an event it cannot price."""
    pairs = events_from_summary(summary)
    kind, delta = summary["accountant"], summary["delta"]
    if kind == "rdp":
        orders = summary_orders(summary)
        accountant = RDPAccountant(
            orders=orders, conversion=summary["conversion"], gaussian_amplification=summary["gaussian_amplification"]
        )
        total = np.zeros_like(orders)
        for event, count in pairs:
            total = total + count * accountant.cost(event)
        if summary["conversion"] == "filter":  # the multi-order filter: log(|Λ|/δ)/(α − 1), Λ fixed in advance
            return float(np.min(total + math.log(len(orders) / delta) / (orders - 1.0)))
        return eps_from_rdp(orders, total, delta, method=summary["conversion"])[0]
    if kind not in ("zcdp", "pure", "approx"):
        raise ValueError(f"unknown accountant {kind!r} in a ledger summary")
    accountant = make_accountant(kind)
    if kind == "zcdp":
        return zcdp_epsilon(math.fsum(n * accountant.cost(e) for e, n in pairs), delta)
    if kind == "pure":
        return math.fsum(n * accountant.cost(e) for e, n in pairs)
    eps = math.fsum(n * float(accountant.cost(e)[0]) for e, n in pairs)
    spent_delta = math.fsum(n * float(accountant.cost(e)[1]) for e, n in pairs)
    return eps if spent_delta <= delta else math.inf


def recompute_delta(summary: Mapping[str, Any]) -> float:
    """δ the run spent under basic composition: Σ count·δ over its (ε, δ) events (0 for pure-DP runs)."""
    return math.fsum(n * e.delta for e, n in events_from_summary(summary) if isinstance(e, ApproxDPEvent))
