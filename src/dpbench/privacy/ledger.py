"""The per-run :class:`Ledger`: sums the costs of the events a run charges and refuses any charge
that would take its ε over the run's budget; :class:`PoissonBatch` charges the releases computed on
one Poisson subsample as one amplified event."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpbench.privacy._checks import check_count, check_delta, check_positive, check_rate
from dpbench.privacy.accountants import Accountant, Cost, RDPAccountant, make_accountant
from dpbench.privacy.events import ComposedEvent, PoissonSampledEvent, PrivacyEvent
from dpbench.privacy.neighbouring import check_relation
from dpbench.privacy.rdp import orders_for
from dpbench.privacy.serialize import _event_key, event_to_json


class BudgetExceeded(Exception):
    """A charge would take the ledger's ε over its budget; the ledger was left unchanged."""

    def __init__(self, label: str, event: PrivacyEvent, count: int, budget: float, delta: float, eps_would_be: float):
        self.label, self.event, self.count = label, event, count
        self.budget, self.delta, self.eps_would_be = budget, delta, eps_would_be
        super().__init__(
            f"privacy budget exceeded by charge {label!r}: {count} x {event} would make the spend "
            f"eps = {eps_would_be:.6g} > budget eps = {budget:.6g} (delta = {delta:.3g}); nothing was charged"
        )

    def __reduce__(self):
        """Rebuilt from its fields: a job's exception crosses a process boundary in a joblib or Ray sweep."""
        return type(self), (self.label, self.event, self.count, self.budget, self.delta, self.eps_would_be)


class RelationMismatch(ValueError):
    """A charge's sensitivity was computed for another neighbouring relation than the ledger's."""


@dataclass(frozen=True)
class LedgerEntry:
    """One accepted charge: ``count`` copies of ``event``, and the ε spent after it; ``batch``
    numbers the Poisson subsample the release was computed on (None for a stand-alone charge)."""

    label: str
    event: PrivacyEvent
    count: int
    eps_after: float
    batch: int | None = None


class Ledger:
    """The per-run (ε, δ) privacy budget: sums event costs and refuses charges that would exceed it.

    The total cost is Σ_e n_e·cost(e) over the distinct events e charged so far (n_e copies each),
    added up in first-charge order. It depends only on these counts, not on how the copies were
    split into charges, so k charges of one copy spend bit-for-bit what one charge of k copies
    (or :meth:`max_affordable`, or :func:`~dpbench.privacy.calibrate.gaussian_noise_for_budget`)
    computed. :meth:`charge`, :meth:`can_afford` and :meth:`max_affordable` share one code path
    and always agree. The budget test is strict: spent ≤ ε, no tolerance.

    Repeated charges are paid in bulk. When the same event is charged again under the same label
    (a DP-SGD step, a kuru iteration), the ledger checks that as many copies again as the run has
    fit (or, near the end of the budget, finds with :meth:`max_affordable` how many do) — its
    *reserve* — and then accepts each repeat by decrementing it, without
    converting the total to ε: the spend is non-decreasing in the count, so every copy within the
    reserve passes the budget test the full path would run, and no copy beyond it does (it goes
    the full path and is refused). The total and ε are brought up to date when they are read; they
    depend only on the counts, so they are bit-for-bit those of charging one copy at a time. The
    repeats extend one :class:`LedgerEntry` (its ``count`` grows): entries are (event, count) runs,
    never one object per step; ``n_charges`` in :meth:`summary` still counts the calls.
    """

    def __init__(
        self, epsilon: float, delta: float, accountant: Accountant | str, neighbouring: str = "add_remove"
    ) -> None:
        self._epsilon = check_positive("epsilon", epsilon)
        self._delta = check_delta(delta)
        self._neighbouring = check_relation(neighbouring)
        self._accountant = make_accountant(accountant) if isinstance(accountant, str) else accountant
        self._events: list[PrivacyEvent] = []  # distinct events in first-charge order
        self._position: dict[PrivacyEvent, int] = {}
        self._counts: list[int] = []
        self._partial_sums: list[Cost] = []  # _partial_sums[i] = Σ_{j ≤ i} counts[j]·cost(events[j])
        self._eps_spent = 0.0
        self._entries: list[LedgerEntry] = []
        self._n_charges = 0
        self._n_batches = 0
        self._reserve = 0  # copies of the last entry's event known to fit on top of the counts
        self._unsettled = 0  # copies charged from the reserve since the sums and ε were last brought up to date
        self._version = 0  # counts each change of the sums, so that :meth:`_after` may remember its last answer
        self._last_after: tuple[tuple, tuple] | None = None

    @property
    def epsilon(self) -> float:
        return self._epsilon

    @property
    def delta(self) -> float:
        return self._delta

    @property
    def neighbouring(self) -> str:
        """The relation every charged sensitivity was computed for (:mod:`dpbench.privacy.neighbouring`)."""
        return self._neighbouring

    def check_relation(self, neighbouring: str | None) -> None:
        """Refuse a charge whose sensitivity was computed for another relation (None: the ledger's)."""
        if neighbouring is not None and neighbouring != self._neighbouring:
            raise RelationMismatch(
                f"cannot compose a {neighbouring} event into this {self._neighbouring} ledger: an (ε, δ) holds for one "
                "neighbouring relation"
            )

    @property
    def accountant(self) -> Accountant:
        return self._accountant

    @property
    def eps_spent(self) -> float:
        self._settle()
        return self._eps_spent

    @property
    def total_cost(self) -> Cost:
        """Σ_e n_e·cost(e) so far in the accountant's units (an RDP curve over its orders, ρ, ε, or
        (ε, δ)), before the conversion to ε."""
        self._settle()
        return self._partial_sums[-1] if self._partial_sums else self._accountant.zero()

    @property
    def entries(self) -> list[LedgerEntry]:
        """The accepted charges in order; repeats of one event under one label form one entry."""
        self._settle()
        return list(self._entries)

    def _settle(self) -> None:
        """Bring the sums, ε and the last entry up to date with the copies charged from the reserve."""
        if not self._unsettled:
            return
        last = self._entries[-1]
        i, _, counts, sums, eps = self._after({last.event: self._unsettled}, settled=False)
        self._counts[i:], self._partial_sums[i:], self._eps_spent = counts, sums, eps
        self._version += 1
        self._entries[-1] = dataclasses.replace(last, count=last.count + self._unsettled, eps_after=eps)
        self._unsettled = 0

    def _after(
        self, changes: dict[PrivacyEvent, int], settled: bool = True
    ) -> tuple[int, list[PrivacyEvent], list[int], list[Cost], float]:
        """The state if the counts of the events in ``changes`` moved by the given amounts: (first
        changed position i, events[i:], counts[i:], partial sums[i:], ε). Only the sums from the
        first changed position on are redone; new events go last, in the order given. The last answer is
        remembered until the sums change: a check that a charge fits, then the charge, compute it once."""
        if settled:
            self._settle()
        key = (self._version, tuple(changes.items()))
        if self._last_after is not None and self._last_after[0] == key:
            return self._last_after[1]
        answer = self._compute_after(changes)
        self._last_after = (key, answer)
        return answer

    def _compute_after(
        self, changes: dict[PrivacyEvent, int]
    ) -> tuple[int, list[PrivacyEvent], list[int], list[Cost], float]:
        known = [self._position[e] for e in changes if e in self._position]
        i = min(known, default=len(self._events))
        events = self._events[i:] + [e for e in changes if e not in self._position]
        counts = self._counts[i:] + [0] * (len(events) - len(self._events) + i)
        counts = [n + changes.get(e, 0) for e, n in zip(events, counts)]
        if min(counts, default=0) < 0:
            raise ValueError("cannot remove a charge that was never made")
        running = self._partial_sums[i - 1] if i else self._accountant.zero()
        sums = []
        for e, n in zip(events, counts):
            if n:
                running = running + n * self._accountant.cost(e)
            sums.append(running)
        return i, events, counts, sums, self._accountant.epsilon(running, self._delta)

    def _fits(self, event: PrivacyEvent, count: int) -> bool:
        return self._after({event: count})[4] <= self._epsilon

    def eps_if(self, event: PrivacyEvent, count: int = 1) -> float:
        """The ε the ledger would have spent after ``count`` more copies of ``event`` (nothing is
        charged): what :meth:`charge` would return, or the ε its BudgetExceeded would report."""
        return self._after({event: check_count("count", count)})[4]

    def _apply(self, changes: dict[PrivacyEvent, int], entry: LedgerEntry, event: PrivacyEvent, count: int) -> float:
        i, events, counts, sums, eps = self._after(changes)
        if not eps <= self._epsilon:  # also refuses NaN
            raise BudgetExceeded(entry.label, event, count, self._epsilon, self._delta, eps)
        for position, e in enumerate(events[len(self._events) - i :], start=len(self._events)):
            self._position[e] = position
        self._events[i:], self._counts[i:], self._partial_sums[i:] = events, counts, sums
        self._eps_spent = eps
        self._version += 1
        self._n_charges += 1
        if self._repeats(entry):
            run = self._entries[-1].count + count
            self._entries[-1] = dataclasses.replace(entry, count=run, eps_after=eps)
            # room for as many copies again as the run has (one conversion), or, near the end of the
            # budget, exactly as many as fit: O(log n) conversions for a run of n repeats
            self._reserve = run if self._fits(event, run) else self.max_affordable(event, run)
        else:
            self._entries.append(dataclasses.replace(entry, eps_after=eps))
            self._reserve = 0
        return eps

    def _repeats(self, entry: LedgerEntry) -> bool:
        """Whether ``entry`` (a stand-alone charge) extends the last entry: same event, same label."""
        if not self._entries or entry.batch is not None:
            return False
        last = self._entries[-1]
        return last.batch is None and last.label == entry.label and last.event == entry.event

    def pay(self, event: PrivacyEvent, count: int = 1, label: str = "", neighbouring: str | None = None) -> None:
        """:meth:`charge` without computing the ε it returns: a repeat of the last charge within the
        reserve (class docstring) is then a few integer operations."""
        count = check_count("count", count)
        self.check_relation(neighbouring)
        if count <= self._reserve:
            last = self._entries[-1]
            if last.label == label and last.event == event:  # last.batch is None whenever the reserve is > 0
                self._reserve -= count
                self._unsettled += count
                self._n_charges += 1
                return
        self._apply({event: count}, LedgerEntry(label, event, count, math.nan), event, count)

    def charge(self, event: PrivacyEvent, count: int = 1, label: str = "", neighbouring: str | None = None) -> float:
        """Charge ``count`` copies of ``event``; returns ε spent after. Raises :class:`BudgetExceeded`
        (leaving the ledger unchanged) if that ε would exceed the budget, :class:`RelationMismatch` if
        ``neighbouring`` (the relation the event's sensitivity was computed for; None = the ledger's)
        is not the ledger's."""
        self.pay(event, count, label, neighbouring)
        return self.eps_spent

    def state_key(self) -> tuple | None:
        """Everything :meth:`can_afford`, :meth:`eps_if` and :meth:`max_affordable` answer from — the budget, the
        relation, the accountant's configuration, the events charged and their counts in order — as a hashable
        value, for a caller that remembers a search over those answers; None when the accountant has no
        configuration key."""
        configuration = self._accountant.configuration_key()
        if configuration is None:
            return None
        self._settle()
        return (self._epsilon, self._delta, self._neighbouring, configuration, *zip(self._events, self._counts))

    def poisson_batch(self, sampling_rate: float) -> PoissonBatch:
        """A handle for charging every release computed on one Poisson subsample of rate q."""
        self._n_batches += 1
        return PoissonBatch(self, check_rate(sampling_rate), self._n_batches - 1)

    def can_afford(self, event: PrivacyEvent, count: int = 1) -> bool:
        """Whether ``count`` more copies of ``event`` fit in the budget."""
        return self._fits(event, check_count("count", count))

    def max_affordable(self, event: PrivacyEvent, limit: int = 10**7) -> int:
        """The largest k ≤ ``limit`` such that k more copies of ``event`` fit (0 if none does).

        Costs are non-negative and additive, so the spend is non-decreasing in k: exponential
        search for an infeasible k, then bisection.
        """
        limit = check_count("limit", limit)
        feasible, k = 0, 1
        while k <= limit and self._fits(event, k):
            feasible, k = k, 2 * k
        infeasible = min(k, limit + 1)  # limit + 1 stands for "beyond the limit", never evaluated
        while infeasible - feasible > 1:
            mid = (feasible + infeasible) // 2
            if self._fits(event, mid):
                feasible = mid
            else:
                infeasible = mid
        return feasible

    def summary(self) -> dict[str, Any]:
        """A JSON-serialisable summary of the budget and what was charged.

        ``orders``: an RDP accountant's orders when they are not the default of its conversion (a
        Rényi filter fixed at one order), else None. ``counts``: releases per event kind, as charged (the releases of a :class:`PoissonBatch` under
        their own kind). ``events``: the distinct events the spend is composed of, in first-charge
        order, each as ``{"event": event_to_json(e), "count": n}`` — a Poisson batch appears as the one
        joint event it is priced as, ``PoissonSampledEvent(q, ComposedEvent(releases))``;
        :func:`events_from_summary` reads them back, so ``eps_spent`` can be recomputed from the
        summary alone.
        """
        self._settle()
        counts: Counter[str] = Counter()
        for entry in self._entries:
            counts[_event_key(entry.event)] += entry.count
        events = [{"event": event_to_json(e), "count": n} for e, n in zip(self._events, self._counts) if n]
        return {
            "accountant": self._accountant.name,
            "conversion": getattr(self._accountant, "conversion", None),
            "gaussian_amplification": getattr(self._accountant, "gaussian_amplification", None),
            "orders": _nondefault_orders(self._accountant),
            "neighbouring": self._neighbouring,
            "epsilon": self._epsilon,
            "delta": self._delta,
            "eps_spent": self._eps_spent,
            "n_charges": self._n_charges,
            "counts": dict(counts),
            "events": events,
        }


def _nondefault_orders(accountant: Accountant) -> list[float] | None:
    """An RDP accountant's orders when they are not the default for its conversion (a Rényi filter on
    one order fixed in advance), so a summary names them; None otherwise."""
    if not isinstance(accountant, RDPAccountant):
        return None
    orders = accountant.orders
    default = orders_for(accountant.conversion)
    return None if np.array_equal(orders, default) else [float(a) for a in orders]


class PoissonBatch:
    """Charges for every release computed on the same Poisson subsample B of rate q.

    The releases on B form one mechanism, so they are amplified together: the batch costs
    amp(Σ_k ε_k(α)) (chen_lee Lemma 4 applied once to the composition, Lemma 3), never
    Σ_k amp(ε_k(α)), which under-counts because amplification is superadditive
    (log(1 + q²(e^{a+b} − 1)) > log(1 + q²(e^a − 1)) + log(1 + q²(e^b − 1))). Each charge replaces
    the batch's previous composite event in the ledger by the extended one, atomically; a lone
    release is priced exactly like ``PoissonSampledEvent(q, event)``. Pass the batch as the
    ``ledger`` (with ``sampling_rate=1``) to the mechanisms that run on B.
    """

    def __init__(self, ledger: Ledger, sampling_rate: float, batch_id: int) -> None:
        self._ledger = ledger
        self._rate = sampling_rate
        self._events: tuple[PrivacyEvent, ...] = ()
        self._id = batch_id

    @property
    def events(self) -> tuple[PrivacyEvent, ...]:
        return self._events

    def _joint(self, events: tuple[PrivacyEvent, ...]) -> PrivacyEvent:
        inner = events[0] if len(events) == 1 else ComposedEvent(events)
        return inner if self._rate == 1.0 else PoissonSampledEvent(self._rate, inner)

    def _changes(self, event: PrivacyEvent, count: int) -> dict[PrivacyEvent, int]:
        new = self._joint(self._events + (event,) * count)
        if not self._events:
            return {new: 1}
        old = self._joint(self._events)
        return {old: -1, new: 1} if old != new else {}

    def can_afford(self, event: PrivacyEvent, count: int = 1) -> bool:
        """Whether ``count`` more releases of ``event`` on this batch fit in the ledger's budget."""
        changes = self._changes(event, check_count("count", count))
        return self._ledger._after(changes)[4] <= self._ledger.epsilon

    @property
    def neighbouring(self) -> str:
        return self._ledger.neighbouring

    def charge(self, event: PrivacyEvent, count: int = 1, label: str = "", neighbouring: str | None = None) -> float:
        """Charge ``count`` releases of ``event`` on this batch; raises :class:`BudgetExceeded` (and
        changes nothing) if the batch's joint cost would take the ledger over its budget, and
        :class:`RelationMismatch` as :meth:`Ledger.charge` does."""
        count = check_count("count", count)
        self._ledger.check_relation(neighbouring)
        entry = LedgerEntry(label, event, count, math.nan, batch=self._id)
        eps = self._ledger._apply(self._changes(event, count), entry, event, count)
        self._events += (event,) * count
        return eps

    def pay(self, event: PrivacyEvent, count: int = 1, label: str = "", neighbouring: str | None = None) -> None:
        """:meth:`charge` (the same call for a batch: every release on it extends its one joint event)."""
        self.charge(event, count, label, neighbouring)
