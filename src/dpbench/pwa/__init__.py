"""han_pwa (Han, Topcu & Pappas 2014): differentially private minimisation of a piecewise-affine
f(x) = max_i (a_iᵀx + b_i) over a box, the offsets b being the private data.

:mod:`~dpbench.pwa.problem` generates instances and solves them exactly (LP, HiGHS);
:mod:`~dpbench.pwa.mechanisms` holds the four private mechanisms of Sec. 4 and the non-private
subgradient method, each vectorised over runs; :mod:`~dpbench.pwa.mcmc` the Metropolis sampler.
"""

from dpbench.pwa.mcmc import MetropolisResult, metropolis_box
from dpbench.pwa.mechanisms import (
    Release,
    exponential_mcmc,
    laplace_data,
    laplace_solution,
    per_step_epsilon,
    private_subgradient,
    sample_subgradient_indices,
    step_sizes,
    subgradient,
    subgradient_index_probabilities,
)
from dpbench.pwa.problem import (
    PWAProblem,
    make_problem,
    objective,
    project_box,
    solve_lp,
    solve_lp_batch,
)

__all__ = [
    "MetropolisResult",
    "PWAProblem",
    "Release",
    "exponential_mcmc",
    "laplace_data",
    "laplace_solution",
    "make_problem",
    "metropolis_box",
    "objective",
    "per_step_epsilon",
    "private_subgradient",
    "project_box",
    "sample_subgradient_indices",
    "solve_lp",
    "solve_lp_batch",
    "step_sizes",
    "subgradient",
    "subgradient_index_probabilities",
]
