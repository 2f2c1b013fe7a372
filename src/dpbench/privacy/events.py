"""Privacy events: descriptions of what a mechanism released, independent of how it is accounted.

Mechanisms build events and charge them to a :class:`~dpbench.privacy.ledger.Ledger`;
accountants (RDP, zCDP, pure ε) decide what an event costs. The split follows Google's
``dp-accounting`` (``DpEvent`` / ``PrivacyAccountant``). All events are frozen and hashable so
accountants can cache their cost curves.
"""

from __future__ import annotations

from dataclasses import dataclass


class PrivacyEvent:
    """Marker base class for every event."""


@dataclass(frozen=True)
class GaussianEvent(PrivacyEvent):
    """Gaussian mechanism with noise std = ``noise_multiplier`` × L2 sensitivity."""

    noise_multiplier: float


@dataclass(frozen=True)
class LaplaceEvent(PrivacyEvent):
    """Laplace mechanism with scale b = ``noise_multiplier`` × L1 sensitivity (pure ε = 1/noise_multiplier)."""

    noise_multiplier: float


@dataclass(frozen=True)
class PureDPEvent(PrivacyEvent):
    """Any ε-DP release (exponential mechanism, report-noisy-max, …)."""

    epsilon: float


@dataclass(frozen=True)
class ZCDPEvent(PrivacyEvent):
    """Any ρ-zCDP release."""

    rho: float


@dataclass(frozen=True)
class LaplaceAboveThresholdEvent(PrivacyEvent):
    """AboveThreshold with Laplace noise: threshold noise Lap(Δ/ε₁), query noise Lap(Δ/ε₂).

    ε-DP with ε = ε₁ + 2ε₂ (Lemma 5 of chen_lee uses ε₁ = ε/2, ε₂ = ε/4); RDP by chen_lee Thm 2, eq. (4).
    """

    epsilon1: float
    epsilon2: float


@dataclass(frozen=True)
class GaussianAboveThresholdEvent(PrivacyEvent):
    """AboveThreshold with Gaussian noise: threshold std Δσ₁, query std Δσ₂ (chen_lee Thm 3, eq. (5))."""

    sigma1: float
    sigma2: float


@dataclass(frozen=True)
class PoissonSampledEvent(PrivacyEvent):
    """``event`` run on a Poisson subsample that keeps each record independently with rate q."""

    sampling_rate: float
    event: PrivacyEvent


@dataclass(frozen=True)
class SampledWithoutReplacementEvent(PrivacyEvent):
    """``event`` run on exactly ``sample_size`` of ``population`` records drawn without replacement,
    for replace-one neighbours (kuru_acc Sec 2.2: datasets at Hamming distance 1). Priced by the pure
    accountant, ln(1 + (m/n)(e^ε − 1)) (kuru_acc eq. 3.3; Balle, Barthe & Gaboardi 2018, Thm 9), and by
    the RDP accountant (Wang, Balle & Kasiviswanathan 2019, Thm 9: ``rdp_sampled_without_replacement``)."""

    sample_size: int
    population: int
    event: PrivacyEvent


@dataclass(frozen=True)
class NonPrivateEvent(PrivacyEvent):
    """A release with no privacy guarantee (non-private reference baselines): costs ε = ∞."""


@dataclass(frozen=True)
class ComposedEvent(PrivacyEvent):
    """Several releases made on the same data (costs add: chen_lee Lemma 3). Subsampled as a
    whole (``PoissonSampledEvent(q, ComposedEvent(...))``) it describes every release computed
    on one Poisson subsample, which must be amplified together, not one by one."""

    events: tuple[PrivacyEvent, ...]


@dataclass(frozen=True)
class RenyiBoundEvent(PrivacyEvent):
    """Any mechanism proven (``order``, ``rdp``)-RDP at one order α, hence at every order ≤ α (RDP is
    non-decreasing in the order) and unknown above it: a run whose ledger was a Rényi filter at α with
    budget ``rdp`` (Feldman & Zrnic 2021 Thm 3.1), e.g. one trial of private hyper-parameter tuning
    (:mod:`dpbench.privacy.trial_budget`). Priced by the RDP accountant only."""

    order: float
    rdp: float


@dataclass(frozen=True)
class RepeatAndSelectEvent(PrivacyEvent):
    """A trial — the composition of ``trial``'s (event, count) pairs, e.g. one training run and its
    noisy score — repeated a random number K of times with only the best trial released, K drawn from
    a law of mean ``mean`` and shape ``shape`` (truncated negative binomial; 0 logarithmic, 1 geometric,
    ∞ Poisson). Priced by the RDP accountant (:func:`~dpbench.privacy.repeat_select.rdp_repeat_and_select`,
    Papernot & Steinke 2022); dp-accounting's ``RepeatAndSelectDpEvent``."""

    trial: tuple[tuple[PrivacyEvent, int], ...]
    mean: float
    shape: float


@dataclass(frozen=True)
class ApproxDPEvent(PrivacyEvent):
    """A release whose only known guarantee is (ε, δ)-DP (e.g. objective perturbation, Kifer,
    Smith & Thakurta 2012 Thm 2); priced by basic composition of (ε, δ) pairs."""

    epsilon: float
    delta: float
