"""The run's ε priced again by Google's dp-accounting, wherever its events are expressible there.

dpbench's events map to dp-accounting's ``DpEvent`` s (:func:`to_dp_event`): Gaussian, Laplace,
Poisson-subsampled, sampled without replacement, composed, repeat-and-select, zCDP and non-private
releases. AboveThreshold, ``RenyiBoundEvent``, ``PureDPEvent`` (a generic ε-DP release is not a
Laplace mechanism) and ``ApproxDPEvent`` have no counterpart: such a ledger is "n/a" for the check,
never passed. Two accountants price the mapped events:

* **RDP** (``RdpAccountant`` at the ledger's orders, its ``compute_epsilon``). Where every event is
  priced by the same formula as dpbench's RDP accountant and the conversion is ``tight`` (the same
  conversion), the two ε must agree to :data:`RDP_RTOL` (``expect = "equal"``). Where dpbench uses a
  looser valid bound — chen_lee Lemma 4 amplification, a generic bound for a subsampled composition or
  sampling without replacement, the ``prop1`` or ``filter`` conversion, a zCDP ledger — the reported ε
  must be ≥ dp-accounting's (``expect = "upper"``). A pure or (ε, δ) ledger's ε holds at δ = 0 or by
  basic composition; an RDP bound at δ is no lower bound on it: "n/a".
* **PLD** (``PLDAccountant``, pessimistic estimate): a near-exact upper bound on the true ε(δ), so a
  valid reported ε is ≥ it up to its discretisation excess, less than k·Δ for k composed losses at
  interval Δ (tests/privacy/test_accountant_properties.py); a reported ε below PLD − k·Δ is proven
  to under-count (a failure), one between PLD − k·Δ and PLD is not proven either way (a note; in
  practice PLD's excess is far below k·Δ). No expectation of equality.

dpbench's noise multipliers are relative to the sensitivity under the ledger's own relation, so both
accountants run under ``ADD_OR_REMOVE_ONE`` (where a Gaussian or Laplace mechanism's privacy loss is
that of σ or b relative to the sensitivity; dpbench's Poisson subsampling is an add/remove bound) and
under ``REPLACE_ONE`` for sampling without replacement (dpbench's is a replace-one bound, as
dp-accounting's). dp-accounting is optional: :func:`load` returns None when it is not installed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpbench.privacy.events import (
    ComposedEvent,
    GaussianEvent,
    LaplaceEvent,
    NonPrivateEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    RepeatAndSelectEvent,
    SampledWithoutReplacementEvent,
    ZCDPEvent,
)

#: Relative tolerance of "dp-accounting's RDP ε equals ours" when the formulas are the same.
RDP_RTOL = 1e-6
#: How to get dp-accounting when it is missing.
INSTALL_HINT = "pip install 'dpbench[verify]'"


class NotExpressible(ValueError):
    """A dpbench event has no dp-accounting counterpart (the message names it)."""


def load():
    """The ``dp_accounting`` module with its ``rdp`` and ``pld`` packages, or None when it is not installed."""
    try:
        import dp_accounting
        import dp_accounting.pld
        import dp_accounting.rdp
    except ImportError:
        return None
    return dp_accounting


def to_dp_event(dpa, event: PrivacyEvent):
    """dp-accounting's ``DpEvent`` for ``event`` (``dpa``: the module :func:`load` returned); raises
    :class:`NotExpressible` naming the first event without a counterpart."""
    match event:
        case GaussianEvent(noise_multiplier=sigma):
            return dpa.GaussianDpEvent(float(sigma))
        case LaplaceEvent(noise_multiplier=b):
            return dpa.LaplaceDpEvent(float(b))
        case ZCDPEvent(rho=rho):
            return dpa.ZCDpEvent(float(rho))
        case NonPrivateEvent():
            return dpa.NonPrivateDpEvent()
        case PoissonSampledEvent(sampling_rate=q, event=inner):
            return dpa.PoissonSampledDpEvent(float(q), to_dp_event(dpa, inner))
        case SampledWithoutReplacementEvent(sample_size=m, population=n, event=inner):
            return dpa.SampledWithoutReplacementDpEvent(int(n), int(m), to_dp_event(dpa, inner))
        case ComposedEvent(events=events):
            return dpa.ComposedDpEvent([to_dp_event(dpa, e) for e in events])
        case RepeatAndSelectEvent(trial=trial, mean=mean, shape=shape):
            inner = dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(to_dp_event(dpa, e), int(n)) for e, n in trial])
            return dpa.dp_event.RepeatAndSelectDpEvent(inner, float(mean), float(shape))
    raise NotExpressible(f"{type(event).__name__} has no dp-accounting counterpart")


def _walk(event: PrivacyEvent):
    yield event
    for inner in getattr(event, "events", ()) or ():
        yield from _walk(inner)
    if isinstance(event, (PoissonSampledEvent, SampledWithoutReplacementEvent)):
        yield from _walk(event.event)
    if isinstance(event, RepeatAndSelectEvent):
        for inner, _ in event.trial:
            yield from _walk(inner)


def priced_alike(event: PrivacyEvent, gaussian_amplification: str) -> bool:
    """Whether dpbench's RDP accountant prices ``event`` by dp-accounting's formula: Gaussian, Laplace,
    zCDP, compositions and repeat-and-select of such, and a Poisson-subsampled single Gaussian under
    ``exact`` amplification (both Mironov, Talwar & Zhang 2019). Otherwise dpbench's bound is looser."""
    match event:
        case GaussianEvent() | LaplaceEvent() | ZCDPEvent() | NonPrivateEvent():
            return True
        case ComposedEvent(events=events):
            return all(priced_alike(e, gaussian_amplification) for e in events)
        case RepeatAndSelectEvent(trial=trial):
            return all(priced_alike(e, gaussian_amplification) for e, _ in trial)
        case PoissonSampledEvent(sampling_rate=q, event=inner):
            if q == 1.0:
                return priced_alike(inner, gaussian_amplification)
            return isinstance(inner, GaussianEvent) and gaussian_amplification == "exact"
    return False


def composed_losses(event: PrivacyEvent) -> int:
    """How many privacy losses one ``event`` composes in a PLD (a subsampled mechanism is one)."""
    if isinstance(event, ComposedEvent):
        return sum(composed_losses(e) for e in event.events)
    return 1


@dataclass(frozen=True)
class Independent:
    """dp-accounting's ε of one ledger at its δ. ``rdp_eps`` is None when n/a (``rdp_note`` says why);
    ``rdp_expect`` is ``equal`` or ``upper`` (module docstring). ``pld_eps`` likewise, with the
    discretisation allowance ``pld_allowance`` (k·Δ)."""

    rdp_eps: float | None
    rdp_expect: str | None
    rdp_note: str
    pld_eps: float | None
    pld_allowance: float
    pld_note: str


def _relation(dpa, pairs) -> Any:
    wor = any(isinstance(e, SampledWithoutReplacementEvent) for event, _ in pairs for e in _walk(event))
    return dpa.NeighboringRelation.REPLACE_ONE if wor else dpa.NeighboringRelation.ADD_OR_REMOVE_ONE


def _rdp(dpa, summary: Mapping[str, Any], pairs, mapped, relation) -> tuple[float | None, str | None, str]:
    from dpbench.privacy.rdp import DEFAULT_ORDERS
    from dpbench.privacy.recompute import summary_orders

    kind = summary["accountant"]
    if kind in ("pure", "approx"):
        return None, None, f"{kind} ledger: its ε is not an RDP bound at δ"
    orders = summary_orders(summary) if kind == "rdp" else DEFAULT_ORDERS
    total = np.zeros(len(orders))
    for dp_event, (_, count) in zip(mapped, pairs):
        accountant = dpa.rdp.RdpAccountant(orders=[float(a) for a in orders], neighboring_relation=relation)
        if not accountant.supports(dp_event):
            return None, None, f"dp-accounting's RDP accountant does not support {type(dp_event).__name__} here"
        accountant.compose(dp_event)
        curve = (
            accountant.rdp if hasattr(accountant, "rdp") else accountant._rdp
        )  # _rdp where a release lacks the property
        total = total + count * np.asarray(curve, dtype=np.float64)
    eps = float(dpa.rdp.rdp_privacy_accountant.compute_epsilon(orders, total, summary["delta"])[0])
    alike = (
        kind == "rdp"
        and summary["conversion"] == "tight"
        and all(priced_alike(e, summary.get("gaussian_amplification") or "exact") for e, _ in pairs)
    )
    return eps, ("equal" if alike else "upper"), ""


def _pld(dpa, summary: Mapping[str, Any], pairs, mapped, relation, reported: float) -> tuple[float | None, float, str]:
    if relation != dpa.NeighboringRelation.ADD_OR_REMOVE_ONE:
        return None, 0.0, "dp-accounting's PLD accountant has no sampling without replacement"
    losses = sum(count * composed_losses(event) for event, count in pairs)
    scale = reported if math.isfinite(reported) and reported > 0 else 1.0
    interval = min(1e-3, max(1e-4, 0.005 * scale / losses))
    accountant = dpa.pld.PLDAccountant(neighboring_relation=relation, value_discretization_interval=interval)
    for dp_event, (_, count) in zip(mapped, pairs):
        if not accountant.supports(dp_event):
            return None, 0.0, f"dp-accounting's PLD accountant does not support {type(dp_event).__name__} here"
        accountant.compose(dp_event, count)
    return float(accountant.get_epsilon(summary["delta"])), losses * interval, ""


def independent_epsilon(dpa, summary: Mapping[str, Any], reported: float) -> Independent:
    """dp-accounting's RDP and PLD ε of the ledger ``summary`` at its δ (``reported``: the ledger-level
    ε the run reported, which sets the PLD's discretisation)."""
    from dpbench.privacy.serialize import events_from_summary

    pairs = events_from_summary(summary)
    try:
        mapped = [to_dp_event(dpa, event) for event, _ in pairs]
    except NotExpressible as exc:
        return Independent(None, None, str(exc), None, 0.0, str(exc))
    if not pairs:
        return Independent(None, None, "no events", None, 0.0, "no events")
    relation = _relation(dpa, pairs)
    rdp_eps, expect, rdp_note = _rdp(dpa, summary, pairs, mapped, relation)
    pld_eps, allowance, pld_note = _pld(dpa, summary, pairs, mapped, relation, reported)
    return Independent(rdp_eps, expect, rdp_note, pld_eps, allowance, pld_note)
