"""Random gossip of liu_dda (Sec. 3.1, Sec. 5.1): the time-varying matrix W^(t).

Sec. 5.1: the supergraph is the complete graph on n nodes; at every iteration 1 or 2 edges are
drawn uniformly at random from its n(n−1)/2 edges, their endpoints are the active nodes 𝒩^(t)
(Sec. 3.1), and W^(t) carries "Metropolis weights [33]" (Xiao, Boyd & Kim 2007) on the sampled
graph:

    w_ij = 1/(1 + max(d_i, d_j)) on a sampled edge {i, j}, w_ii = 1 − Σ_{j≠i} w_ij, 0 elsewhere,

d_i the degree of i in the SAMPLED graph (the paper does not say which degree; with the
supergraph's d_i = n − 1 an active pair would barely mix, w_ij = 1/n). An inactive node's row is
e_iᵀ (w_ii = 1), so only the rows and columns of the active nodes differ from the identity:
:func:`metropolis_weights` returns just that k × k block, :func:`metropolis_matrix` the n × n W^(t).

ι (Definition 2, Theorem 1, eq. (6)) is then the activation probability P(i ∈ 𝒩^(t)), the same
for every node and equal to the EXPECTED fraction of active nodes (:func:`activation_probability`):
exactly 2/n = 0.1 for one edge at n = 20; 1 − C(M−n+1, 2)/C(M, 2) = 0.19048 (not 0.2) for two, M =
n(n−1)/2, because the two edges share a node with probability 2(n−2)/(M−1) = 0.19048, and then
only 3 nodes are active (4 otherwise). Definition 2's "an integer number nι of nodes" therefore
holds only on average with two edges.
"""

from __future__ import annotations

import math

import numpy as np

from dpbench.privacy._checks import check_count, check_generator

__all__ = [
    "RandomGossip",
    "activation_counts",
    "activation_probability",
    "complete_graph_edges",
    "edge_schedule",
    "metropolis_block",
    "metropolis_matrix",
    "metropolis_weights",
    "sample_edges",
]


def _check_nodes(n: object) -> int:
    n = check_count("n", n)
    if n < 2:
        raise ValueError(f"gossip needs n >= 2 nodes, got n = {n}")
    return n


def _check_edge_count(n: int, n_edges: object) -> int:
    k = check_count("n_edges", n_edges)
    if k > n * (n - 1) // 2:
        raise ValueError(f"n_edges = {k} exceeds the {n * (n - 1) // 2} edges of the complete graph on n = {n} nodes")
    return k


def sample_edges(n: int, n_edges: int, rng: np.random.Generator) -> np.ndarray:
    """``n_edges`` distinct edges drawn uniformly from the complete graph on ``n`` nodes (Sec. 5.1).

    Returns an ``n_edges`` × 2 int array, one edge (i, j) with i < j per row, in draw order.
    """
    return RandomGossip(n, n_edges).sample_edges(check_generator(rng))


def edge_schedule(n: int, n_edges: int, iterations: int, rng: np.random.Generator) -> np.ndarray:
    """The gossip of ``iterations`` iterations drawn in advance: an iterations × n_edges × 2 array, row t
    the ``n_edges`` distinct uniform edges (i < j) of iteration t + 1, the law of :func:`sample_edges`.

    The gossip does not depend on the data, so it may be drawn first; the accountant then knows how
    often every node will release before anything is released (:mod:`dpbench.dda.accounting`).
    Vectorised over iterations: the j-th edge index is uniform among the M − j not yet drawn, mapped
    to them by counting the drawn indices below it (in increasing order)."""
    n = _check_nodes(n)
    k = _check_edge_count(n, n_edges)
    steps = check_count("iterations", iterations)
    rng = check_generator(rng)
    first, second = np.triu_indices(n, 1)
    picks = np.empty((steps, k), dtype=np.int64)
    for j in range(k):
        index = rng.integers(first.size - j, size=steps)
        for taken in np.sort(picks[:, :j], axis=1).T:
            index += index >= taken
        picks[:, j] = index
    return np.stack((first[picks], second[picks]), axis=-1)


def activation_counts(n: int, schedule: np.ndarray) -> np.ndarray:
    """How many iterations of ``schedule`` (iterations × n_edges × 2) each of the ``n`` nodes is active
    in (an endpoint of at least one of that iteration's edges; a node on two edges counts once)."""
    n = _check_nodes(n)
    edges = np.asarray(schedule)
    if edges.ndim != 3 or edges.shape[2] != 2 or edges.shape[0] == 0 or not np.issubdtype(edges.dtype, np.integer):
        raise ValueError(
            f"schedule must be a non-empty iterations × n_edges × 2 integer array, got shape {edges.shape}"
        )
    if edges.min() < 0 or edges.max() >= n:
        raise ValueError(f"schedule endpoints must be in [0, {n}), got {edges.min()}..{edges.max()}")
    active = np.zeros((edges.shape[0], n), dtype=bool)
    active[np.arange(edges.shape[0])[:, None], edges.reshape(edges.shape[0], -1)] = True
    return active.sum(axis=0)


def complete_graph_edges(n: int) -> np.ndarray:
    """All n(n−1)/2 edges (i, j), i < j, of the complete graph: with Metropolis weights every entry of
    W is 1/n, the fixed all-nodes-active gossip of the baseline (liu_dda ref. [19])."""
    n = _check_nodes(n)
    return np.column_stack(np.triu_indices(n, 1))


def activation_probability(n: int, n_edges: int) -> float:
    """ι = P(node i is an endpoint of one of ``n_edges`` uniform distinct edges) = 1 − C(M−n+1, k)/C(M, k),
    M = n(n−1)/2: the expected fraction of active nodes (module docstring)."""
    n = _check_nodes(n)
    k = _check_edge_count(n, n_edges)
    m = n * (n - 1) // 2
    total = math.comb(m, k)
    return (total - math.comb(m - (n - 1), k)) / total  # one correctly rounded division


def _check_edges(n: int, edges: object) -> np.ndarray:
    e = np.asarray(edges)
    if e.ndim != 2 or e.shape[1] != 2 or e.shape[0] == 0 or not np.issubdtype(e.dtype, np.integer):
        raise ValueError(f"edges must be a non-empty k × 2 integer array, got shape {e.shape} and dtype {e.dtype}")
    if e.min() < 0 or e.max() >= n:
        raise ValueError(f"edge endpoints must be in [0, {n}), got {e.min()}..{e.max()}")
    if np.any(e[:, 0] == e[:, 1]):
        raise ValueError(f"edges must join two different nodes, got a self-loop at node {e[e[:, 0] == e[:, 1]][0, 0]}")
    lo, hi = e.min(axis=1), e.max(axis=1)
    if np.unique(lo * n + hi).size != e.shape[0]:
        raise ValueError("edges must be distinct, got a repeated edge")
    return e


def metropolis_block(edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(active, w) for edges already known to be valid (unchecked, for hot loops; :func:`metropolis_weights`
    validates first)."""
    active = np.unique(edges)
    local = np.searchsorted(active, edges)
    degree = np.bincount(local.ravel(), minlength=active.size)
    weight = 1.0 / (1.0 + np.maximum(degree[local[:, 0]], degree[local[:, 1]]))
    w = np.zeros((active.size, active.size))
    w[local[:, 0], local[:, 1]] = weight
    w[local[:, 1], local[:, 0]] = weight
    w[np.diag_indices(active.size)] = 1.0 - w.sum(axis=1)
    return active, w


def metropolis_weights(n: int, edges) -> tuple[np.ndarray, np.ndarray]:
    """The active block of W^(t): (active, w), ``active`` the sorted endpoints of ``edges`` and ``w``
    the k × k matrix of Metropolis weights among them (module docstring). W^(t) equals ``w`` on
    rows/columns ``active`` and the identity elsewhere; ``w`` is symmetric and doubly stochastic."""
    return metropolis_block(_check_edges(_check_nodes(n), edges))


def metropolis_matrix(n: int, edges) -> np.ndarray:
    """The n × n gossip matrix W^(t) with Metropolis weights on ``edges`` (identity rows for inactive nodes)."""
    active, w = metropolis_weights(n, edges)
    full = np.eye(n)
    full[np.ix_(active, active)] = w
    return full


class RandomGossip:
    """The gossip of one iteration of Algorithm 1 as the simulator draws it: ``n_edges`` uniform
    distinct edges of the complete graph on ``n`` nodes (the edge list is tabulated once), then
    their Metropolis block (:func:`metropolis_weights`)."""

    def __init__(self, n: int, n_edges: int) -> None:
        self.n = _check_nodes(n)
        self.n_edges = _check_edge_count(self.n, n_edges)
        self._first, self._second = np.triu_indices(self.n, 1)

    def sample_edges(self, rng: np.random.Generator) -> np.ndarray:
        """``n_edges`` × 2 edges (i < j), uniform without replacement among the n(n−1)/2."""
        pick = rng.choice(self._first.size, size=self.n_edges, replace=False)
        return np.column_stack((self._first[pick], self._second[pick]))

    def draw(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(𝒩^(t), w): the sorted active nodes and the k × k block of W^(t) among them."""
        return metropolis_block(self.sample_edges(rng))
