"""``dpbench-audit`` targets of the practical methods (``dpbench.audit_targets`` entry points): private
Frank–Wolfe's vertex selection and DP-Newton's direction, each with a control that breaks it.

The pair (add/remove, n̄ = 8 public): D has 8 rows x = 0, on which every gradient vanishes; D′ adds the record
(x = e₁, y = +1), whose Huberized-hinge gradient at θ = 0 is −e₁ (|ℓ′| = 1 = G, B = 1): the utilities of ±r·e₁
move by ±rGB/n̄, the sensitivity ``vertex_sensitivity`` claims, in opposite directions, the exponential
mechanism's worst case.
"""

from __future__ import annotations

import numpy as np

from dpbench.audit.core import Target
from dpbench.privacy.calibrate import gaussian_noise_for_budget
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.mechanisms import exponential_mechanism, gaussian_mechanism, report_noisy_max
from dpbench.problems import make_problem
from dpbench_practical.data_terms import data_hessian
from dpbench_practical.frank_wolfe import AUTHORS_MINIBATCH, PrivateFrankWolfe
from dpbench_practical.newton import DPNewton

PAIR_ROWS = 8
"""Rows of D (n̄ of both datasets)."""

STEP_DRAWS = 50_000
"""N per side of the step targets: each draw is one call of the repository's mechanism (~30 µs)."""


def _pair(dim: int, rows: int = PAIR_ROWS, loss: str = "huber_hinge"):
    """D (``rows`` zero rows) and D′ (D and the record (e₁, +1)), both with n̄ = ``rows``."""
    zeros = np.zeros((rows, dim))
    added = np.vstack([zeros, np.eye(1, dim)])
    return [make_problem(X, np.ones(X.shape[0]), loss=loss, reg=0.0, public_n=rows) for X in (zeros, added)]


def _ample_ledger() -> Ledger:
    """A ledger that can pay for every draw (its spend is not what is audited)."""
    return Ledger(1e9, 1e-5, "rdp")


def private_fw_step_target(epsilon: float = 1.0) -> Target:
    """One step of ``PrivateFrankWolfe`` (r = 1, B = 1) at θ = 0: its utilities of the 2d vertices and its
    ``vertex_sensitivity``, selected by ``exponential_mechanism`` at ε (pure ε-DP)."""
    method = PrivateFrankWolfe(radius=1.0, steps=1)
    problems = _pair(dim=1)
    theta = np.zeros(1)
    sensitivity = method.vertex_sensitivity(problems[0], 1.0, "add_remove")
    utilities = [method.utilities(p, theta) for p in problems]

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        ledger = _ample_ledger()
        return np.array(
            [
                exponential_mechanism(utilities[side], sensitivity=sensitivity, epsilon=epsilon, rng=rng, ledger=ledger)
                for _ in range(n)
            ],
            dtype=np.int64,
        )

    return Target(
        "private_fw_step",
        epsilon,
        0.0,
        sample,
        pair="n̄ = 8 rows x = 0 vs the same with (e₁, +1) added; Huberized hinge, r = 1, d = 1 (2 vertices)",
        proof="exponential mechanism (McSherry & Talwar 2007) at the utilities' sensitivity rGB/n̄ (Talwar et al. 2015)",
        max_n=STEP_DRAWS,
    )


def private_fw_authors_step(epsilon: float = 1.0, rows: int = 10_000, dim: int = 100) -> Target:
    """BROKEN: one step as the authors' code takes it — the gradient of 1000 rows drawn with replacement from n,
    report-noisy-min at Lap(Δ/ε) with Δ = rL/n, the monotone scale for n rows — on D = ``rows`` zero rows vs D
    with (e₁, +1) added. The record enters the minibatch k ~ Binomial(1000, 1/n) times; when it does, its
    utility moves by k·r/1000 = 10k noise scales and +r·e₁ wins among the 2d = 200 vertices."""
    radius = 1.0
    sensitivity = radius / rows  # noise_para = L*corner_size*sqrt(8T log(1/δ))/(n ε) at L = 1: Δ/ε₀ with Δ = r/n

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        ledger = _ample_ledger()
        copies = rng.binomial(AUTHORS_MINIBATCH, 1.0 / (rows + 1), size=n) if side else np.zeros(n, dtype=int)
        out = np.empty(n, dtype=np.int64)
        for i, k in enumerate(copies):
            gradient = np.zeros(dim)
            gradient[0] = -k / AUTHORS_MINIBATCH  # the record's Huber gradient −e₁, k times in the mean of 1000
            scores = radius * np.concatenate([gradient, -gradient])
            out[i] = report_noisy_max(
                -scores, sensitivity=sensitivity, epsilon=epsilon, rng=rng, ledger=ledger, monotonic=True
            )
        return out

    return Target(
        "control_private_fw_authors_step",
        epsilon,
        0.0,
        sample,
        pair=f"n = {rows:,} rows x = 0 vs the same with (e₁, +1) added; d = {dim}; minibatch of 1000 with replacement",
        proof="(broken) noise calibrated to n for a mean over 1000 rows",
        max_n=STEP_DRAWS,
    )


def _newton_pair(rows: int = PAIR_ROWS):
    """1-D logistic pair at θ = 0: D = ``rows`` rows x = 0 (H = 0), D′ adds (x = 1, y = +1), whose ℓ″(0) = 1/4 = β
    moves H by β/n̄, along M's only eigenvector: the direction's worst case."""
    return _pair(dim=1, rows=rows, loss="logistic")


def dp_newton_direction_target(epsilon: float = 1.0, delta: float = 1e-5) -> Target:
    """``DPNewton``'s third release at θ = 0 with a public noisy gradient g̃ = 1 and λ₀ = 1/n̄ (``add``): the
    direction M⁻¹g̃ with ``modified_inverse`` and ``data_hessian`` on each side, noised by ``gaussian_mechanism``
    at ``direction_sensitivity``; on this pair the two directions differ by exactly that Δ_dir. The claim is the
    (ε, δ) of one Gaussian release at the σ that buys ε alone."""
    method = DPNewton()
    problems = _newton_pair()
    n, beta, floor = PAIR_ROWS, problems[0].loss.smoothness, 1.0 / PAIR_ROWS
    directions = [
        float((method.modified_inverse(data_hessian(p, np.zeros(1)), floor) @ np.ones(1))[0]) for p in problems
    ]
    sensitivity = method.direction_sensitivity(1.0, n, beta, floor)
    sigma = gaussian_noise_for_budget(epsilon, delta)

    def sample(side: int, n_draws: int, rng: np.random.Generator) -> np.ndarray:
        return gaussian_mechanism(
            np.full(n_draws, directions[side]),
            sensitivity=sensitivity,
            noise_multiplier=sigma,
            rng=rng,
            ledger=_ample_ledger(),
        )

    return Target(
        "dp_newton_direction",
        epsilon,
        delta,
        sample,
        pair="1-D logistic, θ = 0, g̃ = 1, λ₀ = 1/n̄: n̄ = 8 rows x = 0 vs the same with (1, +1) added",
        proof="Sherman–Morrison bound on ‖M⁻¹ − M′⁻¹‖ (Ganesh et al. 2023), Gaussian mechanism",
    )


def dp_newton_single_noise(epsilon: float = 1.0, delta: float = 1e-5) -> Target:
    """BROKEN: the Newton step without its second noise — the noisy gradient g̃ (released at the σ of ε) and
    the direction M⁻¹g̃ computed from it, released as is — on the pair of :func:`dp_newton_direction_target`:
    the ratio of the two reveals M, which the added record changes."""
    method = DPNewton()
    problems = _newton_pair()
    floor = 1.0 / PAIR_ROWS
    inverses = [float(method.modified_inverse(data_hessian(p, np.zeros(1)), floor)[0, 0]) for p in problems]
    sigma = gaussian_noise_for_budget(epsilon, delta)

    def sample(side: int, n_draws: int, rng: np.random.Generator) -> np.ndarray:
        gradient = gaussian_mechanism(
            np.ones(n_draws), sensitivity=1.0 / PAIR_ROWS, noise_multiplier=sigma, rng=rng, ledger=_ample_ledger()
        )
        return np.round(inverses[side] * gradient / gradient * 1e6).astype(np.int64)  # the direction over g̃

    return Target(
        "control_dp_newton_single_noise",
        epsilon,
        delta,
        sample,
        pair="the pair of dp_newton_direction; released: g̃ and M⁻¹g̃ (reported as their ratio, ×10⁶)",
        proof="(broken) the direction is a function of H, released without noise",
    )
