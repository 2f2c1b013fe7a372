"""Events as JSON, and back: how run.json's ledgers record what a run spent, so that
``dpbench-verify`` can re-price it.

The contract is dp-accounting's ``dp_event.py``'s: an event class, once written into a results
directory, is never removed or renamed, and a parameter added to one is optional (with a default
that prices as before), so every run.json ever written stays readable and prices the same.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any

from dpbench.privacy._checks import check_count
from dpbench.privacy.events import (
    ApproxDPEvent,
    ComposedEvent,
    GaussianAboveThresholdEvent,
    GaussianEvent,
    LaplaceAboveThresholdEvent,
    LaplaceEvent,
    NonPrivateEvent,
    PoissonSampledEvent,
    PrivacyEvent,
    PureDPEvent,
    RenyiBoundEvent,
    RepeatAndSelectEvent,
    SampledWithoutReplacementEvent,
    ZCDPEvent,
)


def _event_key(event: PrivacyEvent) -> str:
    """A readable type name, nesting subsampled events: ``PoissonSampledEvent[GaussianEvent]``."""
    if isinstance(event, PoissonSampledEvent):
        return f"PoissonSampledEvent[{_event_key(event.event)}]"
    return type(event).__name__


_EVENT_TYPES: dict[str, type[PrivacyEvent]] = {
    cls.__name__: cls
    for cls in (
        GaussianEvent,
        LaplaceEvent,
        PureDPEvent,
        ZCDPEvent,
        LaplaceAboveThresholdEvent,
        GaussianAboveThresholdEvent,
        PoissonSampledEvent,
        SampledWithoutReplacementEvent,
        NonPrivateEvent,
        ComposedEvent,
        ApproxDPEvent,
        RepeatAndSelectEvent,
        RenyiBoundEvent,
    )
}


def event_to_json(event: PrivacyEvent) -> dict[str, Any]:
    """A JSON-serialisable description of ``event``: ``{"type": <class name>, <field>: <value>, …}``.

    Nested events are described the same way (a ComposedEvent's ``events`` as a list); numbers are
    written as plain ``int``/``float`` (numpy scalars included), so JSON round-trips them exactly.
    :func:`event_from_json` is the inverse.
    """
    if type(event).__name__ not in _EVENT_TYPES or _EVENT_TYPES[type(event).__name__] is not type(event):
        raise TypeError(f"cannot describe {event!r}: not one of the event classes of dpbench.privacy.events")

    def value(v: Any) -> Any:
        if isinstance(v, PrivacyEvent):
            return event_to_json(v)
        if isinstance(v, tuple):
            return [value(x) for x in v]
        if isinstance(v, bool) or not isinstance(v, Real):
            raise TypeError(f"cannot describe the field value {v!r} of {event!r}")
        return int(v) if isinstance(v, Integral) else float(v)

    return {"type": type(event).__name__, **{f.name: value(getattr(event, f.name)) for f in dataclasses.fields(event)}}


def event_from_json(data: Mapping[str, Any]) -> PrivacyEvent:
    """The event :func:`event_to_json` described (equal to the original, so it prices the same)."""
    try:
        cls = _EVENT_TYPES[data["type"]]
    except (KeyError, TypeError):
        raise ValueError(f"not an event description (no known 'type'): {data!r}") from None
    names = [f.name for f in dataclasses.fields(cls)]
    if set(data) != {"type", *names}:
        raise ValueError(f"a {cls.__name__} description needs the fields {names}, got {sorted(set(data) - {'type'})}")

    def value(v: Any) -> Any:
        if isinstance(v, Mapping):
            return event_from_json(v)
        if isinstance(v, list):
            return tuple(value(x) for x in v)
        return v

    return cls(**{name: value(data[name]) for name in names})


def events_from_summary(summary: Mapping[str, Any]) -> list[tuple[PrivacyEvent, int]]:
    """The (event, count) pairs a :meth:`Ledger.summary` (e.g. one of run.json's ``ledgers``) lists
    under ``events``: the distinct events the ledger composed, each with its number of copies.
    Σ count·cost(event), converted at the summary's δ by an accountant of its kind (``accountant``,
    ``conversion``, ``gaussian_amplification``), is the run's ``eps_spent``. Summaries written before
    ``events`` existed only have the ``counts`` of event kinds, which do not determine ε: ValueError."""
    if "events" not in summary:
        raise ValueError("this ledger summary has no 'events' (written by an older dpbench); ε cannot be recomputed")
    return [(event_from_json(item["event"]), check_count("count", item["count"])) for item in summary["events"]]
