"""Accountants: what an event costs under RDP, zCDP, pure or approximate DP, and that cost as ε.

An accountant prices a :mod:`~dpbench.privacy.events` event as an additive cost — an RDP curve over
its orders, a zCDP ρ, or a pure ε — and converts a total cost to ε at a given δ
(:class:`~dpbench.privacy.ledger.Ledger` sums the costs of a run). The shape follows dp-accounting's
``privacy_accountant.py``: an abstract accountant, one subclass per calculus, built by name.
"""

from __future__ import annotations

import abc
import math
from typing import Any

import numpy as np

from dpbench.privacy._checks import check_count, check_delta, check_positive, check_rate
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
from dpbench.privacy.pure import amplify_pure
from dpbench.privacy.rdp import (
    CONVERSIONS,
    conversion_offsets,
    eps_from_offsets,
    orders_for,
    rdp_gaussian,
    rdp_gaussian_above_threshold,
    rdp_laplace,
    rdp_laplace_above_threshold,
    rdp_poisson_subsampled,
    rdp_poisson_subsampled_gaussian,
    rdp_pure,
    rdp_sampled_without_replacement,
    rdp_zcdp,
)
from dpbench.privacy.repeat_select import rdp_repeat_and_select
from dpbench.privacy.zcdp import zcdp_epsilon

Cost = float | np.ndarray


class UnsupportedEvent(ValueError):
    """An accountant cannot price an event."""


class Accountant(abc.ABC):
    """Prices events as additive costs (cached per event) and converts a total cost to ε."""

    name: str
    _CACHE_SIZE = 4096

    def __init__(self) -> None:
        self._cache: dict[PrivacyEvent, Cost] = {}

    def cost(self, event: PrivacyEvent) -> Cost:
        """The additive cost of one ``event`` (arrays are returned read-only, as they are shared)."""
        if event in self._cache:
            return self._cache[event]
        value = self._price(event)
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
        if len(self._cache) >= self._CACHE_SIZE:
            del self._cache[next(iter(self._cache))]
        self._cache[event] = value
        return value

    def _unsupported(self, event: object, hint: str = "") -> UnsupportedEvent:
        return UnsupportedEvent(f"the {self.name} accountant cannot price {event!r}{hint}")

    def configuration_key(self) -> tuple | None:
        """A hashable description of everything this accountant's prices and conversions depend on, equal for
        accountants that answer alike (for callers that remember answers across runs); None: not described, never
        remembered. The accountants here have no options but :class:`RDPAccountant`'s."""
        return (type(self).__name__,) if type(self) in (ZCDPAccountant, PureDPAccountant, ApproxDPAccountant) else None

    @abc.abstractmethod
    def _price(self, event: PrivacyEvent) -> Cost:
        """The cost of one event (uncached)."""

    @abc.abstractmethod
    def zero(self) -> Cost:
        """The empty total."""

    @abc.abstractmethod
    def epsilon(self, total: Cost, delta: float) -> float:
        """The ε of a total cost at the given δ."""


#: RDP prices per (gaussian_amplification, orders): see :class:`RDPAccountant`
_SHARED_PRICES: dict[tuple[str, bytes], dict[PrivacyEvent, np.ndarray]] = {}


class RDPAccountant(Accountant):
    """Rényi-DP accounting over a fixed array of orders (chen_lee Sec. 4.3); costs are RDP curves."""

    name = "rdp"

    def __init__(
        self, orders: np.ndarray | None = None, conversion: str = "tight", gaussian_amplification: str = "exact"
    ) -> None:
        """``conversion``: ``tight`` or ``prop1`` for compositions fixed in advance, ``filter`` for
        methods that choose their releases from noisy outputs and stop when the budget cannot pay
        (:func:`~dpbench.privacy.rdp.conversion_offsets`); ``orders`` default to
        :func:`~dpbench.privacy.rdp.orders_for` the conversion. ``gaussian_amplification``: how a
        Poisson-subsampled Gaussian is priced, ``exact`` (Mironov, Talwar & Zhang 2019, the tightest)
        or ``lemma4`` (chen_lee Lemma 4 on α/(2σ²), as chen_lee Sec 4.3 does for every release)."""
        super().__init__()
        if conversion not in CONVERSIONS:
            raise ValueError(f"conversion must be one of {', '.join(CONVERSIONS)}, got {conversion!r}")
        orders = orders_for(conversion) if orders is None else orders
        if gaussian_amplification not in ("exact", "lemma4"):
            raise ValueError(f"gaussian_amplification must be 'exact' or 'lemma4', got {gaussian_amplification!r}")
        self._gaussian_amplification = gaussian_amplification
        self._offsets: dict[float, np.ndarray] = {}
        alphas = np.array(orders, dtype=np.float64)
        if alphas.ndim != 1 or alphas.size == 0 or not np.all(np.isfinite(alphas) & (alphas > 1.0)):
            raise ValueError(f"orders must be a non-empty 1-D array of finite numbers > 1, got {orders!r}")
        alphas.setflags(write=False)
        self._orders = alphas
        self._conversion = conversion
        # a price depends on the event, the orders and the amplification only: accountants that share
        # those share their prices, so a job's later runs (folds, reps) and calibrations reuse the
        # curves its first run computed (the subsampled Gaussian's costs ≈ 3 ms at orders 2..512)
        self._cache = _SHARED_PRICES.setdefault((gaussian_amplification, alphas.tobytes()), {})

    @property
    def orders(self) -> np.ndarray:
        return self._orders

    def configuration_key(self) -> tuple | None:
        """Its orders, conversion and amplification (None for a subclass, which may price differently)."""
        if type(self) is not RDPAccountant:
            return None
        return (type(self).__name__, self._orders.tobytes(), self._conversion, self._gaussian_amplification)

    @property
    def conversion(self) -> str:
        return self._conversion

    @property
    def gaussian_amplification(self) -> str:
        return self._gaussian_amplification

    def _price(self, event: PrivacyEvent) -> np.ndarray:
        return self._curve(event, self._orders)

    def _curve(self, event: PrivacyEvent, orders: np.ndarray) -> np.ndarray:
        """The RDP curve of one event at arbitrary ``orders`` (Lemma 4 needs the inner curve at 2..α)."""
        match event:
            case GaussianEvent(noise_multiplier=sigma):
                return rdp_gaussian(sigma, orders)
            case LaplaceEvent(noise_multiplier=b):
                return rdp_laplace(b, orders)
            case PureDPEvent(epsilon=eps):
                return rdp_pure(eps, orders)
            case ZCDPEvent(rho=rho):
                return rdp_zcdp(rho, orders)
            case LaplaceAboveThresholdEvent(epsilon1=eps1, epsilon2=eps2):
                return rdp_laplace_above_threshold(eps1, eps2, orders)
            case GaussianAboveThresholdEvent(sigma1=s1, sigma2=s2):
                return rdp_gaussian_above_threshold(s1, s2, orders)
            case NonPrivateEvent():
                return np.full(np.shape(orders), np.inf)
            case ComposedEvent(events=events):
                return sum((self._curve(e, orders) for e in events), np.zeros(np.shape(orders)))
            case PoissonSampledEvent(sampling_rate=q, event=inner):
                if check_rate(q) == 1.0:
                    return self._curve(inner, orders)
                if isinstance(inner, GaussianEvent) and self._gaussian_amplification == "exact":
                    return rdp_poisson_subsampled_gaussian(q, inner.noise_multiplier, orders)
                return rdp_poisson_subsampled(q, lambda ls: self._curve(inner, ls), orders)
            case SampledWithoutReplacementEvent(sample_size=m, population=n, event=inner):
                q = check_count("sample_size", m) / check_count("population", n)
                if check_rate(q) == 1.0:
                    return self._curve(inner, orders)
                return rdp_sampled_without_replacement(q, lambda ls: self._curve(inner, ls), orders)
            case RenyiBoundEvent(order=order, rdp=rho):
                check_positive("order", order - 1.0)
                return np.where(np.asarray(orders) <= order, check_positive("rdp", rho), np.inf)
            case RepeatAndSelectEvent(trial=trial, mean=mean, shape=shape):
                curve = sum(
                    (check_count("count", n) * self._curve(e, orders) for e, n in trial), np.zeros(np.shape(orders))
                )
                return rdp_repeat_and_select(orders, curve, mean, shape)
        raise self._unsupported(event)

    def zero(self) -> np.ndarray:
        return np.zeros_like(self._orders)

    def epsilon(self, total: np.ndarray, delta: float) -> float:
        """:func:`~dpbench.privacy.rdp.eps_from_rdp` of ``total``, with the conversion's order-wise
        offsets computed once per δ (the ledger converts after every charge)."""
        offsets = self._offsets.get(delta)
        if offsets is None:
            offsets = self._offsets[delta] = conversion_offsets(self._orders, check_delta(delta), self._conversion)
        return eps_from_offsets(total, offsets, self._orders, delta, self._conversion)[0]


class ZCDPAccountant(Accountant):
    """Zero-concentrated DP accounting (Bun & Steinke 2016); costs are ρ. zCDP has no subsampling amplification."""

    name = "zcdp"

    def _price(self, event: PrivacyEvent) -> float:
        match event:
            case GaussianEvent(noise_multiplier=sigma):
                return 1.0 / (2.0 * check_positive("noise_multiplier", sigma) ** 2)
            case ZCDPEvent(rho=rho):
                return check_positive("rho", rho)
            case PureDPEvent(epsilon=eps):
                return check_positive("epsilon", eps) ** 2 / 2.0
            case LaplaceEvent(noise_multiplier=b):
                return (1.0 / check_positive("noise_multiplier", b)) ** 2 / 2.0
            case GaussianAboveThresholdEvent(sigma1=s1, sigma2=s2):
                s1, s2 = check_positive("sigma1", s1), check_positive("sigma2", s2)
                return (4.0 * s1**2 + s2**2) / (2.0 * s1**2 * s2**2)  # chen_lee Thm 3 eq. (5) divided by α
            case LaplaceAboveThresholdEvent(epsilon1=eps1, epsilon2=eps2):
                return (check_positive("epsilon1", eps1) + 2.0 * check_positive("epsilon2", eps2)) ** 2 / 2.0
            case NonPrivateEvent():
                return math.inf
            case ComposedEvent(events=events):
                return math.fsum(self._price(e) for e in events)
            case PoissonSampledEvent(sampling_rate=q, event=inner):
                if check_rate(q) == 1.0:
                    return self._price(inner)
                raise self._unsupported(event, ": zCDP has no privacy amplification by subsampling; use accountant=rdp")
        raise self._unsupported(event)

    def zero(self) -> float:
        return 0.0

    def epsilon(self, total: float, delta: float) -> float:
        return zcdp_epsilon(total, delta)


class PureDPAccountant(Accountant):
    """Pure ε-DP accounting by basic composition; costs are ε and δ is not used."""

    name = "pure"

    def _price(self, event: PrivacyEvent) -> float:
        match event:
            case PureDPEvent(epsilon=eps):
                return check_positive("epsilon", eps)
            case LaplaceEvent(noise_multiplier=b):
                return 1.0 / check_positive("noise_multiplier", b)
            case LaplaceAboveThresholdEvent(epsilon1=eps1, epsilon2=eps2):
                return check_positive("epsilon1", eps1) + 2.0 * check_positive("epsilon2", eps2)
            case NonPrivateEvent():
                return math.inf
            case ComposedEvent(events=events):
                return math.fsum(self._price(e) for e in events)
            case PoissonSampledEvent(sampling_rate=q, event=inner):
                inner_eps = self._price(inner)
                if check_rate(q) == 1.0 or math.isinf(inner_eps):
                    return inner_eps
                return amplify_pure(inner_eps, q)
            case SampledWithoutReplacementEvent(sample_size=m, population=n, event=inner):
                inner_eps = self._price(inner)
                q = check_count("sample_size", m) / check_count("population", n)
                if check_rate(q) == 1.0 or math.isinf(inner_eps):
                    return inner_eps
                return amplify_pure(inner_eps, q)
            case GaussianEvent() | ZCDPEvent() | GaussianAboveThresholdEvent():
                raise self._unsupported(event, ": it is not pure-DP; use accountant=rdp (or zcdp)")
        raise self._unsupported(event)

    def zero(self) -> float:
        return 0.0

    def epsilon(self, total: float, delta: float) -> float:
        check_delta(delta)
        return float(total)


class ApproxDPAccountant(Accountant):
    """(ε, δ) accounting by basic composition (Dwork et al. 2006): costs are (ε, δ) pairs that add;
    the total is within budget when Σε ≤ ε and Σδ ≤ δ (otherwise its ε is reported as ∞)."""

    name = "approx"

    def _price(self, event: PrivacyEvent) -> np.ndarray:
        match event:
            case ApproxDPEvent(epsilon=eps, delta=delta):
                return np.array([check_positive("epsilon", eps), check_delta(delta)])
            case PureDPEvent(epsilon=eps):
                return np.array([check_positive("epsilon", eps), 0.0])
            case LaplaceEvent(noise_multiplier=b):
                return np.array([1.0 / check_positive("noise_multiplier", b), 0.0])
            case ComposedEvent(events=events):
                return sum((self._price(e) for e in events), np.zeros(2))
            case NonPrivateEvent():
                return np.array([math.inf, 0.0])
        raise self._unsupported(event, ": only (ε, δ) and pure-DP events compose here")

    def zero(self) -> np.ndarray:
        return np.zeros(2)

    def epsilon(self, total: np.ndarray, delta: float) -> float:
        check_delta(delta)
        return float(total[0]) if total[1] <= delta else math.inf


_ACCOUNTANTS: dict[str, type[Accountant]] = {
    "rdp": RDPAccountant,
    "zcdp": ZCDPAccountant,
    "pure": PureDPAccountant,
    "approx": ApproxDPAccountant,
}

#: The accountants whose ledgers have a Rényi curve (zCDP and pure ε are RDP at every order), which
#: repeat-and-select needs to price private tuning (:mod:`dpbench.privacy.trial_budget`).
TUNABLE_ACCOUNTANTS: tuple[str, ...] = ("rdp", "zcdp", "pure")


def make_accountant(name: str, **options: Any) -> Accountant:
    """Build an accountant by name ("rdp", "zcdp", "pure" or "approx"); ``options`` go to its constructor."""
    if name not in _ACCOUNTANTS:
        raise ValueError(f"unknown accountant {name!r}; valid names are {sorted(_ACCOUNTANTS)}")
    return _ACCOUNTANTS[name](**options)
