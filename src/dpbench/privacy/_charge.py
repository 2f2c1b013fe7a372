"""How a mechanism charges its ledger (shared by :mod:`mechanisms` and :mod:`sparse_vector`)."""

from __future__ import annotations

from dpbench.privacy._checks import check_rate
from dpbench.privacy.events import PoissonSampledEvent, PrivacyEvent


def charge(ledger, event: PrivacyEvent, sampling_rate: float, label: str, neighbouring: str | None = None) -> None:
    """Charge one ``event`` to ``ledger``, wrapped in a PoissonSampledEvent when ``sampling_rate`` < 1;
    ``neighbouring``: the relation the release's sensitivity was computed for (None: the ledger's)."""
    q = check_rate(sampling_rate)
    ledger.pay(event if q == 1.0 else PoissonSampledEvent(q, event), label=label, neighbouring=neighbouring)
