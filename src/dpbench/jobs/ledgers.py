"""The privacy ledger of one run: its budget under the method's neighbouring relation and its accountant.

Every kind of job charges a fresh :class:`~dpbench.privacy.ledger.Ledger` per run (or per block
of runs that stand for each other, :mod:`dpbench.pwa.job`) and checks its spend before anything is
written (docs/privacy.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dpbench.privacy.counts import CountBudget, no_count, split_budget
from dpbench.privacy.neighbouring import (
    group_privacy_epsilon,
    native_epsilon,
    resolve,
    run_budget,
)

if TYPE_CHECKING:
    from dpbench.privacy.accountants import Accountant
    from dpbench.privacy.ledger import Ledger
    from dpbench.settings import RunConfig


def reads_private_size(algorithm, cfg: RunConfig) -> bool:
    """Whether the run's method reads a training size that is private: a private method that reads it
    (``reads_training_size``) under add/remove, where n is a count of the data."""
    return (
        algorithm.private
        and algorithm.reads_training_size
        and resolve(algorithm, cfg.privacy.neighbouring)[0] == "add_remove"
    )


def count_budget(algorithm, cfg: RunConfig) -> CountBudget:
    """How a run's ε splits between a noisy training-set size and the method
    (:mod:`dpbench.privacy.counts`): ``privacy.count_share``·ε pays for ñ when the method reads a private
    size (:func:`reads_private_size`); otherwise the method gets the whole ε."""
    if not reads_private_size(algorithm, cfg):
        return no_count(cfg.privacy.eps)
    return split_budget(cfg.privacy.eps, cfg.privacy.count_share)


def method_config(cfg: RunConfig, budget: CountBudget) -> RunConfig:
    """``cfg`` with the method's part of the budget as ``privacy.eps``: what the method, its ledger,
    its tuning plan and its stopping rule are built from (``cfg`` itself when nothing is paid for n)."""
    if budget.method_eps == cfg.privacy.eps:
        return cfg
    return dataclasses.replace(cfg, privacy=dataclasses.replace(cfg.privacy, eps=budget.method_eps))


def run_ledger(algorithm, cfg: RunConfig) -> tuple[Ledger, Callable[[float], float]]:
    """The ledger of one private run and the map from its spend to the reported ε: the requested
    (ε, δ) under the method's relation, or — when it meets ``privacy.neighbouring=replace_one`` by
    group privacy — the add/remove budget (ε/2, δ/(1 + e^{ε/2})), whose spend ε′ is reported as 2ε′
    (:mod:`dpbench.privacy.neighbouring`)."""
    from dpbench.privacy.ledger import Ledger

    eps, delta, relation, mode = run_budget(algorithm, cfg.privacy.eps, cfg.privacy.delta, cfg.privacy.neighbouring)
    ledger = Ledger(eps, delta, run_accountant(algorithm, cfg, eps, delta), neighbouring=relation)
    return ledger, (group_privacy_epsilon if mode == "group_privacy" else native_epsilon)


def run_accountant(algorithm, cfg: RunConfig, eps: float | None = None, delta: float | None = None) -> Accountant:
    """The accountant of one private run at the ledger's (ε, δ) (default: ``cfg.privacy``'s). RDP
    ledgers convert by ``privacy.conversion`` when the releases are fixed in advance; for methods that
    stop adaptively (``adaptive_stopping``) a post-hoc minimum over orders is not a proven guarantee,
    so — whatever ``privacy.conversion`` says — they get a Rényi filter
    (:func:`~dpbench.privacy.filter.filter_accountant`)."""
    from dpbench.privacy.accountants import make_accountant
    from dpbench.privacy.filter import filter_accountant

    eps = cfg.privacy.eps if eps is None else eps
    delta = cfg.privacy.delta if delta is None else delta
    options = accountant_options(algorithm, cfg)
    if algorithm.accountant != "rdp":
        return make_accountant(algorithm.accountant, **options)
    if algorithm.adaptive_stopping:
        return filter_accountant(algorithm.planned_step(eps), eps, delta, **options)
    return make_accountant("rdp", conversion=cfg.privacy.conversion, **options)


def accountant_options(algorithm, cfg: RunConfig) -> dict[str, Any]:
    """The method's accountant options, with the subsampled Gaussian priced by chen_lee Lemma 4 under
    the secure sampler (the exact bound of Mironov, Talwar & Zhang 2019 is proven for continuous
    noise; Lemma 4 holds for any mechanism with the discrete Gaussian's smaller RDP curve)."""
    options = algorithm.accountant_options()
    if algorithm.accountant == "rdp" and cfg.privacy.sampler == "secure":
        options["gaussian_amplification"] = "lemma4"
    return options
