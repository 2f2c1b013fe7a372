"""liu_dda (Liu, Johansson & Shi 2024): differentially private distributed dual averaging.

:mod:`~dpbench.dda.gossip` samples the edges and Metropolis gossip matrices of Sec. 3.1/5.1;
:mod:`~dpbench.dda.prox` solves step (6) in closed form; :mod:`~dpbench.dda.noise` calibrates σ
and states the (ε, δ) of Theorem 1; :mod:`~dpbench.dda.simulator` runs Algorithm 1 over n nodes; :mod:`~dpbench.dda.accounting` prices
its releases with the RDP accountant (any T, small δ) for a stated threat model.
"""

from dpbench.dda.accounting import release_event, releases_per_sample, sigma_for_budget
from dpbench.dda.gossip import (
    RandomGossip,
    activation_counts,
    activation_probability,
    complete_graph_edges,
    edge_schedule,
    metropolis_matrix,
    metropolis_weights,
    sample_edges,
)
from dpbench.dda.noise import (
    check_iteration_condition,
    per_step_epsilon,
    proof_guarantee,
    remark31_epsilon,
    sec5_sigma,
    theorem1_delta,
    theorem1_sigma,
)
from dpbench.dda.prox import (
    REGULARISERS,
    dual_averaging_step,
    prox_l1,
    prox_l2,
    soft_threshold,
)
from dpbench.dda.simulator import (
    SCHEDULES,
    DDAResult,
    DDASimulator,
    Schedule,
    noisy_subgradients,
    run_dda,
    split_rows,
)

__all__ = [
    "REGULARISERS",
    "SCHEDULES",
    "DDAResult",
    "DDASimulator",
    "RandomGossip",
    "Schedule",
    "activation_counts",
    "activation_probability",
    "check_iteration_condition",
    "complete_graph_edges",
    "dual_averaging_step",
    "edge_schedule",
    "metropolis_matrix",
    "metropolis_weights",
    "noisy_subgradients",
    "per_step_epsilon",
    "proof_guarantee",
    "prox_l1",
    "prox_l2",
    "release_event",
    "releases_per_sample",
    "remark31_epsilon",
    "run_dda",
    "sample_edges",
    "sec5_sigma",
    "sigma_for_budget",
    "soft_threshold",
    "split_rows",
    "theorem1_delta",
    "theorem1_sigma",
]
