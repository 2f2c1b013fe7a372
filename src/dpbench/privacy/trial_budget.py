"""The budget of one trial of private hyper-parameter tuning, fixed before any data is read.

``tuning=private`` runs Papernot & Steinke's repeat-and-select ("Hyperparameter tuning with Rényi
differential privacy", ICLR 2022): K ~ TNB(η, γ) (or Poisson) trials, each training the method with
a random hyper-parameter setting and releasing a noisy validation score, and only the best trial is
released. Their Thm 2 (Thm 6 for Poisson) needs each trial's RDP curve to be fixed in advance, but
the trials differ (one setting runs 4 epochs, another 1; adaptive methods stop on noisy values). So
every trial gets the same bound at one order α, fixed from public values only:

* its training runs on a ledger that is a Rényi filter at α with budget ρ_train (Feldman & Zrnic,
  NeurIPS 2021, Thm 3.1): an RDP method's charges are priced at α alone; a zCDP method's ledger
  admits ρ_z ≤ ρ_train/α (ρ-zCDP is (α, αρ)-RDP); a pure-DP method's admits ε with
  min(ε, αε²/2) ≤ ρ_train (chen_lee Lemma 2);
* its score is a Gaussian count of correct validation predictions, RDP α/(2σ²) = ρ_score.

Each trial is then (α, ρ_T)-RDP with ρ_T = ρ_train + ρ_score, i.e. a :class:`RenyiBoundEvent`, and
the whole procedure is ``RepeatAndSelectEvent(((RenyiBoundEvent(α, ρ_T), 1),), E[K], η)``, priced by
the RDP accountant on the order α (at λ = λ̂ = α in Thm 2). :func:`plan_trials` picks the α that
leaves each trial the most ρ_T under (ε, δ). Methods whose ledger composes (ε, δ) pairs (``approx``)
have no RDP curve and cannot be tuned this way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpbench.privacy._checks import check_delta, check_positive
from dpbench.privacy.accountants import (
    TUNABLE_ACCOUNTANTS,
    Accountant,
    PureDPAccountant,
    RDPAccountant,
    ZCDPAccountant,
)
from dpbench.privacy.events import RenyiBoundEvent, RepeatAndSelectEvent
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.rdp import rdp_pure
from dpbench.privacy.repeat_select import rdp_repeat_and_select
from dpbench.privacy.zcdp import zcdp_epsilon

_SAFETY = 1.0 - 1e-9  # training ledgers get a hair less than ρ_train, so rounding cannot overspend


@dataclass(frozen=True)
class TrialBudget:
    """Each trial is (``order``, ``rdp``)-RDP: ``rdp − score_rdp`` for training, ``score_rdp`` for its
    noisy score; K has mean ``mean`` and shape ``shape``; the procedure is (``epsilon``, ``delta``)-DP."""

    order: float
    rdp: float
    score_rdp: float
    mean: float
    shape: float
    epsilon: float
    delta: float

    @property
    def train_rdp(self) -> float:
        return self.rdp - self.score_rdp

    @property
    def score_noise_multiplier(self) -> float:
        """σ of the score's Gaussian per unit of sensitivity: α/(2σ²) = ρ_score."""
        return math.sqrt(self.order / (2.0 * self.score_rdp))

    def trial_event(self) -> RenyiBoundEvent:
        return RenyiBoundEvent(self.order, self.rdp)

    def event(self) -> RepeatAndSelectEvent:
        """What the tuning run releases, as the run's ledger records it."""
        return RepeatAndSelectEvent(((self.trial_event(), 1),), self.mean, self.shape)

    def accountant(self) -> RDPAccountant:
        """The run's accountant: RDP on the one order α, tight conversion."""
        return RDPAccountant(orders=np.array([self.order]), conversion="tight")


def total_epsilon(order: float, rdp: float, mean: float, shape: float, delta: float) -> float:
    """ε of repeat-and-select over trials that are (``order``, ``rdp``)-RDP, at ``delta``."""
    orders = np.array([float(order)])
    curve = rdp_repeat_and_select(orders, np.array([float(rdp)]), mean, shape)
    return RDPAccountant(orders=orders, conversion="tight").epsilon(curve, delta)


def _largest_rdp(order: float, epsilon: float, delta: float, mean: float, shape: float) -> float:
    """The largest per-trial ρ at ``order`` whose total ε fits ``epsilon`` (0 when none does), by bisection."""
    if total_epsilon(order, 0.0, mean, shape, delta) > epsilon:
        return 0.0
    low, high = 0.0, max(epsilon, 1.0)
    while total_epsilon(order, high, mean, shape, delta) <= epsilon:
        low, high = high, 2.0 * high
    for _ in range(45):
        mid = 0.5 * (low + high)
        if total_epsilon(order, mid, mean, shape, delta) <= epsilon:
            low = mid
        else:
            high = mid
    return low


# candidate orders for α: a geometric grid of integers 2 … 1024 (the subsampled-Gaussian bounds need
# integer orders; each candidate costs a bisection of ~60 µs steps)
PLAN_ORDERS: np.ndarray = np.unique(np.round(np.geomspace(2.0, 1024.0, 60)))


def training_strength(rdp: float, order: float, accountant: str) -> float:
    """How much a training budget of (``order``, ``rdp``)-RDP buys in the method's own terms: ρ/α for
    RDP and zCDP ledgers (the zCDP ρ, or 1/(2σ²) of a Gaussian), the admitted ε for pure ones."""
    if accountant == "pure":
        return max(rdp, math.sqrt(2.0 * rdp / order))
    return rdp / order


def plan_trials(
    epsilon: float,
    delta: float,
    mean: float,
    shape: float,
    score_share: float,
    accountant: str = "rdp",
    orders: np.ndarray = PLAN_ORDERS,
) -> TrialBudget:
    """The per-trial budget of tuning at total (``epsilon``, ``delta``): for each order α ∈ ``orders``
    the largest ρ_T whose repeat-and-select total fits, and the α whose training share
    (1 − ``score_share``)·ρ_T buys the most (:func:`training_strength` for the method's
    ``accountant``); ``score_share`` of ρ_T pays the noisy score. Public values only. Raises
    ValueError when no order leaves a trial anything."""
    epsilon, delta = check_positive("epsilon", epsilon), check_delta(delta)
    if not 0.0 < score_share < 1.0:
        raise ValueError(f"the score's share of a trial's budget must be in (0, 1), got {score_share!r}")
    budgets = [(_largest_rdp(float(a), epsilon, delta, mean, shape), float(a)) for a in orders]
    feasible = [
        (training_strength((1.0 - score_share) * rdp, order, accountant), rdp, order)
        for rdp, order in budgets
        if rdp > 0
    ]
    if not feasible:
        raise ValueError(
            f"eps = {epsilon:g}, delta = {delta:g} cannot pay repeat-and-select with E[K] = {mean:g}: the selection "
            "alone costs more; raise privacy.eps or lower tuning.trials_mean"
        )
    _, rdp, order = max(feasible)
    return TrialBudget(order, rdp, score_share * rdp, float(mean), float(shape), epsilon, delta)


def training_ledger(budget: TrialBudget, accountant: str, options: dict, neighbouring: str) -> Ledger:
    """The ledger one trial trains on: a filter that keeps its spend within (α, ρ_train)-RDP in the
    method's own accountant (module docstring). ``options`` go to the RDP accountant."""
    rho, order = budget.train_rdp * _SAFETY, budget.order
    pricer: Accountant
    if accountant == "rdp":
        pricer = RDPAccountant(orders=np.array([order]), conversion="tight", **options)
        epsilon = pricer.epsilon(np.array([rho]), budget.delta)
    elif accountant == "zcdp":
        pricer, epsilon = ZCDPAccountant(), zcdp_epsilon(rho / order, budget.delta)
    elif accountant == "pure":
        pricer, epsilon = PureDPAccountant(), max(rho, math.sqrt(2.0 * rho / order))
    else:
        raise ValueError(
            f"a method whose ledger composes in {accountant!r} has no Rényi curve; private tuning needs one of "
            f"{', '.join(TUNABLE_ACCOUNTANTS)}"
        )
    if not epsilon > 0.0:
        raise ValueError(
            f"a trial's training budget (alpha = {order:g}, rho = {rho:.3g}) converts to eps = 0; raise privacy.eps"
        )
    return Ledger(epsilon, budget.delta, pricer, neighbouring=neighbouring)


def training_rdp(ledger: Ledger, order: float) -> float:
    """What a trial's training ledger spent, as RDP at ``order`` (the check that it stayed in ρ_train)."""
    total, name = ledger.total_cost, ledger.accountant.name
    if name == "rdp":
        return float(np.asarray(total)[0])
    if name == "zcdp":
        return order * float(total)
    if name == "pure":
        return float(rdp_pure(float(total), np.array([order]))[0]) if total > 0 else 0.0
    raise ValueError(f"no Rényi curve for a {name} ledger")
