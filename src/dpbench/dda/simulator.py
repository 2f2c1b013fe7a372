"""Algorithm 1 of liu_dda (differentially private distributed dual averaging), vectorised over nodes.

n nodes each hold q rows of the data (:func:`split_rows`); the loss is the hinge loss of the SVM of
Sec. 5, eq. (27), and h is (μ/2)‖x‖² ("l2", Sec. 5.2) or φ‖x‖₁ ("l1", Sec. 5.3), d(x) = ½‖x‖².
One iteration t (:meth:`DDASimulator.step`, Alg. 1 lines 5–12):

1. draw the gossip: ``n_edges`` uniform edges of the complete graph, active nodes 𝒩^(t) their
   endpoints, W^(t) Metropolis weights (:mod:`dpbench.dda.gossip`); with ``all_nodes`` every node is
   active and W = 11ᵀ/n (the complete graph's Metropolis weights), the baseline of ref. [19], ι = 1;
2. each active node i draws ξ uniformly from its q rows and releases ζ_i = ĝ_i + ν_i, ĝ_i ∈ ∂ℓ(x_i; ξ)
   with ℓ(x; (a, y)) = max(0, 1 − y aᵀx), so ĝ_i = −y·a if y aᵀx_i < 1 and 0 otherwise, and
   ν_i ~ N(0, σ²I) (line 6–7; nothing is drawn when σ = 0). With ``clip`` = L, ĝ_i is scaled by
   min(1, L/‖a‖) so that ‖ĝ_i‖ ≤ L (Assumption 3) holds whatever the data — the sensitivity 2L
   the noise is calibrated for; on rows with ‖a‖ ≤ L nothing changes;
3. z_i ← Σ_j w_ij (z_j + a_t η_j ζ_j) for active i (eq. (5)), η_j = 1 iff j is active (Sec. 3.2),
   so only active neighbours contribute; x_i ← eq. (6) with ι·A_{t+1} and γ_{t+1} (lines 9–10);
4. inactive nodes keep z_i and x_i (line 12).

The output (line 2) is x̃_i^(T) = A_T⁻¹ Σ_{t=1..T} a_t x_i^(t), the iterates x^(1), …, x^(T) (x^(T+1),
computed by iteration T, is not part of it). It is accumulated lazily: x_i only changes when i is
active, so when i becomes active at iteration t the simulator adds (A_t − A_{s−1})·x_i for the run
τ = s..t over which x_i was constant. One iteration costs O(|𝒩^(t)| × m), not O(n × m).

Data: a dense array or any scipy.sparse matrix (turned into CSR, never densified: a step reads
only the chosen rows). The simulator does no privacy accounting: σ comes from
:mod:`dpbench.dda.noise`, the ledger is the caller's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from numbers import Real

import numpy as np
import scipy.sparse as sp

from dpbench.dda.gossip import (
    RandomGossip,
    activation_counts,
    activation_probability,
    complete_graph_edges,
    metropolis_block,
    metropolis_weights,
)
from dpbench.dda.prox import REGULARISERS, dual_averaging_step
from dpbench.privacy._checks import check_count, check_generator, check_positive
from dpbench.problems.products import row_norms

__all__ = ["SCHEDULES", "DDAResult", "DDASimulator", "Schedule", "noisy_subgradients", "run_dda", "split_rows"]


@dataclass(frozen=True)
class Schedule:
    """The weights a_t of eq. (5) and γ_t of eq. (6), each a callable of an integer array t ≥ 1
    returning an array of that shape or a scalar. a_t > 0 and γ_t ≥ 0, both non-decreasing
    (Sec. 3.2; γ_t = 0 is allowed for h = l2, as in Corollary 3.2)."""

    a: Callable[[np.ndarray], object]
    gamma: Callable[[np.ndarray], object]

    def tables(self, horizon: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(a, A, γ) for t = 0..horizon, A_t = Σ_{τ≤t} a_τ, with a_0 = A_0 = γ_0 = 0 (Sec. 3.2)."""
        t = np.arange(1, check_count("horizon", horizon) + 1)
        a = np.broadcast_to(np.asarray(self.a(t), dtype=np.float64), t.shape)
        gamma = np.broadcast_to(np.asarray(self.gamma(t), dtype=np.float64), t.shape)
        if not (np.all(np.isfinite(a)) and np.all(a > 0) and np.all(np.diff(a) >= 0)):
            raise ValueError("schedule a_t must be finite, > 0 and non-decreasing")
        if not (np.all(np.isfinite(gamma)) and np.all(gamma >= 0) and np.all(np.diff(gamma) >= 0)):
            raise ValueError("schedule gamma_t must be finite, >= 0 and non-decreasing")
        zero = np.zeros(1)
        return np.concatenate((zero, a)), np.concatenate((zero, np.cumsum(a))), np.concatenate((zero, gamma))


SCHEDULES: dict[str, Schedule] = {
    "l2": Schedule(a=lambda t: t, gamma=lambda t: 20.0),  # Sec. 5.2: a_t = t, γ_t = 20
    "l1": Schedule(a=lambda t: 1.0, gamma=lambda t: 0.01 * np.sqrt(t)),  # Sec. 5.3: a_t = 1, γ_t = 0.01√t
}


def split_rows(n_rows: int, n_nodes: int, rng: np.random.Generator) -> np.ndarray:
    """A seeded even split of ``n_rows`` rows into ``n_nodes`` local datasets of q = ⌊n_rows/n_nodes⌋
    rows each (Sec. 5.1, "randomly assign the data samples evenly"): an n_nodes × q array of row
    indices, row i holding D_i. The n_rows mod n_nodes leftover rows (fewer than n_nodes) are left
    out, so every node has the same q that Theorem 1 assumes."""
    rows, nodes = check_count("n_rows", n_rows), check_count("n_nodes", n_nodes)
    if rows < nodes:
        raise ValueError(f"cannot split n_rows = {rows} rows among n_nodes = {nodes} nodes (q would be 0)")
    q = rows // nodes
    return check_generator(rng).permutation(rows)[: nodes * q].reshape(nodes, q)


def _check_features(features) -> np.ndarray | sp.csr_array | sp.csr_matrix:
    if sp.issparse(features):
        csr = features if features.format == "csr" else features.tocsr()
    else:
        csr = np.asarray(features)
    if csr.ndim != 2 or csr.shape[0] == 0 or csr.shape[1] == 0:
        raise ValueError(f"features must be a non-empty 2-D matrix, got shape {csr.shape}")
    if not (np.issubdtype(csr.dtype, np.floating) or np.issubdtype(csr.dtype, np.integer)):
        raise ValueError(f"features must be real numbers, got dtype {csr.dtype}")
    return csr


def _check_labels(labels, n_rows: int) -> np.ndarray:
    y = np.asarray(labels)
    if y.shape != (n_rows,):
        raise ValueError(f"labels must have shape ({n_rows},) to match the features, got {y.shape}")
    if not np.all((y == 1) | (y == -1)):
        raise ValueError(f"labels must be -1 or +1, got values {np.unique(y)[:5].tolist()}")
    return y.astype(np.float64)


def _check_sigma(sigma: object) -> float:
    """σ ≥ 0 (σ = 0: the non-private method)."""
    if isinstance(sigma, Real) and not isinstance(sigma, bool) and sigma == 0:
        return 0.0
    return check_positive("sigma", sigma)


def _row_scales(features, clip: float | None) -> np.ndarray | None:
    """min(1, clip/‖a_r‖) for every row r (1 for a zero row); None without a clip."""
    if clip is None:
        return None
    return clip / np.maximum(row_norms(features), clip)


def _release(
    features, labels: np.ndarray, rows: np.ndarray, x: np.ndarray, sigma: float, rng, out=None, row_scales=None
) -> np.ndarray:
    """ζ = ĝ + ν for k nodes at once (row i: sample ``rows[i]`` at iterate ``x[i]``), into ``out`` if
    given (k × m float64, C-contiguous), ĝ scaled by ``row_scales[rows]`` when given; unchecked."""
    k = x.shape[0]
    zeta = np.empty(x.shape) if out is None else out
    if sigma > 0:
        rng.standard_normal(out=zeta)
        zeta *= sigma
    else:
        zeta.fill(0.0)
    y = labels[rows]
    if sp.issparse(features):
        starts = features.indptr[rows]
        lengths = features.indptr[rows + 1] - starts
        owner = np.repeat(np.arange(k), lengths)
        pos = np.arange(owner.size) + np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
        cols, vals = features.indices[pos], features.data[pos].astype(np.float64)
        margins = y * np.bincount(owner, weights=vals * x[owner, cols], minlength=k)
        scale = np.where(margins < 1.0, -y, 0.0)
        if row_scales is not None:
            scale *= row_scales[rows]
        np.add.at(zeta, (owner, cols), scale[owner] * vals)  # CSR may repeat a column: add, never assign
    else:
        a = np.asarray(features[rows], dtype=np.float64)
        margins = y * np.einsum("ij,ij->i", a, x)
        scale = np.where(margins < 1.0, -y, 0.0)
        if row_scales is not None:
            scale *= row_scales[rows]
        zeta += scale[:, None] * a
    return zeta


def noisy_subgradients(
    features, labels, rows, x, *, sigma: float, rng: np.random.Generator, clip: float | None = None
) -> np.ndarray:
    """The releases ζ_i = ĝ_i + ν_i of Alg. 1 line 7 for k nodes: ĝ_i = −y·a (a, y = row ``rows[i]``)
    if y aᵀx_i < 1, else 0 (hinge subgradient, eq. (27)), times min(1, clip/‖a‖) when ``clip`` is
    given; ν_i ~ N(0, σ²I). Returns k × m."""
    feats = _check_features(features)
    y = _check_labels(labels, feats.shape[0])
    idx = np.asarray(rows)
    if (
        idx.ndim != 1
        or not np.issubdtype(idx.dtype, np.integer)
        or idx.size == 0
        or idx.min() < 0
        or idx.max() >= feats.shape[0]
    ):
        raise ValueError(f"rows must be a non-empty 1-D array of row indices in [0, {feats.shape[0]})")
    xs = np.asarray(x, dtype=np.float64)
    if xs.shape != (idx.size, feats.shape[1]):
        raise ValueError(f"x must have shape ({idx.size}, {feats.shape[1]}), one iterate per row, got {xs.shape}")
    clip = None if clip is None else check_positive("clip", clip)
    return _release(feats, y, idx, xs, _check_sigma(sigma), check_generator(rng), row_scales=_row_scales(feats, clip))


def _check_node_rows(node_rows, n_rows: int) -> np.ndarray:
    idx = np.asarray(node_rows)
    if idx.ndim != 2 or not np.issubdtype(idx.dtype, np.integer) or idx.shape[0] < 2 or idx.shape[1] < 1:
        raise ValueError(
            f"node_rows must be an n × q integer array with n >= 2 nodes and q >= 1, got shape {idx.shape}"
        )
    if idx.min() < 0 or idx.max() >= n_rows:
        raise ValueError(f"node_rows must index rows in [0, {n_rows}), got {idx.min()}..{idx.max()}")
    if np.unique(idx).size != idx.size:
        raise ValueError("node_rows repeats a row: the local datasets D_i must be disjoint")
    return idx


class DDASimulator:
    """The state of Algorithm 1 for n nodes; each :meth:`step` is one iteration t (module docstring).

    features, labels: the N × m data (dense or sparse) and labels in {−1, +1}.
    node_rows: n × q row indices, row i the local dataset D_i (:func:`split_rows`).
    regulariser, strength: "l2" with μ (h = (μ/2)‖x‖²) or "l1" with φ (h = φ‖x‖₁).
    sigma: the noise standard deviation (≥ 0; 0 is the non-private method), e.g. from
        :func:`~dpbench.dda.noise.theorem1_sigma`.
    iterations: the horizon T (the schedules are tabulated up to T + 1; step T + 1 is refused).
    rng: the only source of randomness (gossip, ξ, ν), consumed in that order within a step.
    schedule: a name in :data:`SCHEDULES` ("l2", "l1") or a :class:`Schedule`.
    n_edges: edges sampled per iteration (1 or 2 in Sec. 5.1). Ignored with ``all_nodes``.
    all_nodes: every node active with W = 11ᵀ/n at every iteration (ref. [19]); ι = 1.
    iota: ι of eq. (6); default :func:`~dpbench.dda.gossip.activation_probability` (1 with all_nodes).
    schedule_edges: the gossip drawn in advance, iterations × n_edges × 2
        (:func:`~dpbench.dda.gossip.edge_schedule`); the rng then draws only ξ and ν. Lets the
        caller's accountant count each node's releases before the first one.
    clip: L, a bound enforced on every subgradient norm (module docstring), or None (the data's own).

    Attributes z, x (n × m) are z^(t), x^(t) for the current ``t`` (1 before the first step).
    """

    def __init__(
        self,
        features,
        labels,
        node_rows,
        *,
        regulariser: str,
        strength: float,
        sigma: float,
        iterations: int,
        rng: np.random.Generator,
        schedule: str | Schedule = "l2",
        n_edges: int = 1,
        all_nodes: bool = False,
        iota: float | None = None,
        schedule_edges: np.ndarray | None = None,
        clip: float | None = None,
    ) -> None:
        self.features = _check_features(features)
        self.labels = _check_labels(labels, self.features.shape[0])
        self.node_rows = _check_node_rows(node_rows, self.features.shape[0])
        if regulariser not in REGULARISERS:
            raise ValueError(f"regulariser must be one of {', '.join(REGULARISERS)}, got {regulariser!r}")
        self.regulariser = regulariser
        self.strength = check_positive("strength", strength)
        self.sigma = _check_sigma(sigma)
        self.iterations = check_count("iterations", iterations)
        self.rng = check_generator(rng)
        self.clip = None if clip is None else check_positive("clip", clip)
        self._row_scales = _row_scales(self.features, self.clip)
        if not isinstance(all_nodes, bool):
            raise ValueError(  # noqa: TRY004 — a bad value of a true/false option, refused like iota and schedule below
                f"all_nodes must be true or false, got {all_nodes!r}"
            )
        self.all_nodes = all_nodes
        n = self.node_rows.shape[0]
        if all_nodes:
            if schedule_edges is not None:
                raise ValueError(
                    "with all_nodes every node is active at every iteration: there is no edge schedule to give"
                )
            if iota not in (None, 1):
                raise ValueError(f"with all_nodes every node is active, so iota is 1, got {iota!r}")
            self.iota = 1.0
            self._everyone = metropolis_weights(n, complete_graph_edges(n))
        else:
            self._gossip = RandomGossip(n, n_edges)
            self._schedule = None if schedule_edges is None else self._check_schedule(schedule_edges, n, n_edges)
            if iota is None:
                self.iota = activation_probability(n, n_edges)
            elif isinstance(iota, bool) or not isinstance(iota, Real) or not 0.0 < iota <= 1.0:
                raise ValueError(f"iota must be in (0, 1], got {iota!r}")
            else:
                self.iota = float(iota)
        if isinstance(schedule, str):
            if schedule not in SCHEDULES:
                raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)} or a Schedule, got {schedule!r}")
            schedule = SCHEDULES[schedule]
        elif not isinstance(schedule, Schedule):
            raise ValueError(  # noqa: TRY004 — the same refusal as an unknown schedule name above
                f"schedule must be one of {', '.join(SCHEDULES)} or a Schedule, got {schedule!r}"
            )
        self._a, self._big_a, self._gamma = schedule.tables(self.iterations + 1)
        dim = self.features.shape[1]
        self.t = 1
        self.z = np.zeros((n, dim))
        self.x = self._primal(self.z, 1)  # line 3: z^(1) = 0, x^(1) by eq. (6)
        self._weighted = np.zeros((n, dim))  # Σ_{τ < since_i} a_τ x_i^(τ), the flushed part of x̃_i
        self._since = np.ones(n, dtype=np.int64)  # x_i^(τ) = x_i for τ = since_i..t
        # three k × m work arrays reused by every step: fresh multi-MB temporaries cost page faults
        self._work = np.empty((3, n if all_nodes else min(n, 2 * self._gossip.n_edges), dim))

    def _check_schedule(self, schedule_edges, n: int, n_edges: int) -> np.ndarray:
        edges = np.asarray(schedule_edges)
        if edges.shape != (self.iterations, n_edges, 2):
            raise ValueError(
                f"schedule_edges must have shape (iterations, n_edges, 2) = ({self.iterations}, {n_edges}, 2), got {edges.shape}"
            )
        activation_counts(n, edges)  # validates the endpoints
        low, high = edges.min(axis=2), edges.max(axis=2)
        if np.any(low == high):
            raise ValueError("schedule_edges must join two different nodes, got a self-loop")
        keys = np.sort(low * n + high, axis=1)
        if np.any(keys[:, 1:] == keys[:, :-1]):
            raise ValueError("schedule_edges must hold distinct edges within an iteration, got a repeated edge")
        return edges

    def _primal(self, z: np.ndarray, t: int, out: np.ndarray | None = None) -> np.ndarray:
        """Eq. (6) with ι·A_t and γ_t."""
        return dual_averaging_step(
            z,
            regulariser=self.regulariser,
            strength=self.strength,
            weight=self.iota * self._big_a[t],
            gamma=self._gamma[t],
            out=out,
        )

    def step(self) -> np.ndarray:
        """Run iteration t (Alg. 1 lines 5–12) and return its active nodes 𝒩^(t), sorted."""
        t = self.t
        if t > self.iterations:
            raise ValueError(f"the horizon iterations = {self.iterations} is reached: no iteration {t} was planned")
        q = self.node_rows.shape[1]
        if self.all_nodes:
            active, w = self._everyone
        elif self._schedule is not None:
            active, w = metropolis_block(self._schedule[t - 1])  # validated once, in _check_schedule
        else:
            active, w = self._gossip.draw(self.rng)
        k = active.size
        sample = self.node_rows[active, self.rng.integers(q, size=k)]  # line 6: ξ_i
        x_act = np.take(self.x, active, axis=0, out=self._work[0, :k])
        zeta = _release(
            self.features,
            self.labels,
            sample,
            x_act,
            self.sigma,
            self.rng,
            out=self._work[1, :k],
            row_scales=self._row_scales,
        )  # line 7
        # x_i^(τ) = x_i for τ = since_i..t: flush that a_τ-weighted run into x̃_i before x_i changes
        x_act *= (self._big_a[t] - self._big_a[self._since[active] - 1])[:, None]
        flushed = np.take(self._weighted, active, axis=0, out=self._work[2, :k])
        flushed += x_act
        self._weighted[active] = flushed
        self._since[active] = t + 1
        mixed = np.take(self.z, active, axis=0, out=self._work[0, :k])
        zeta *= self._a[t]
        mixed += zeta
        z_next = np.matmul(w, mixed, out=self._work[2, :k])  # eq. (5), η_j = 1 for the active j
        self.z[active] = z_next
        self.x[active] = self._primal(z_next, t + 1, out=self._work[1, :k])  # eq. (6)
        self.t = t + 1
        return active

    def _span(self) -> tuple[int, np.ndarray]:
        s = self.t - 1
        if s < 1:
            raise ValueError("x̃ needs at least one iteration")
        return s, self._big_a[s] - self._big_a[self._since - 1]

    def averages(self) -> np.ndarray:
        """x̃_i^(s) = A_s⁻¹ Σ_{τ≤s} a_τ x_i^(τ) for s the iterations run so far (Alg. 1 line 2), n × m."""
        s, run = self._span()
        return (self._weighted + run[:, None] * self.x) / self._big_a[s]

    def mean_average(self) -> np.ndarray:
        """n⁻¹ Σ_i x̃_i^(s), the point whose suboptimality Sec. 5.1 reports."""
        s, run = self._span()
        return (self._weighted.sum(axis=0) + run @ self.x) / (self.node_rows.shape[0] * self._big_a[s])


@dataclass(frozen=True)
class DDAResult:
    """What :func:`run_dda` returns.

    averages: n × m, x̃_i^(T) (Alg. 1 line 2).
    iota: the ι used in eq. (6).
    snapshot_iterations, snapshots: iterations t = k, 2k, … ≤ T and n⁻¹ Σ_i x̃_i^(t) there (k × m).
    """

    averages: np.ndarray
    iota: float
    snapshot_iterations: np.ndarray
    snapshots: np.ndarray


def run_dda(features, labels, node_rows, *, snapshot_every: int | None = None, **options) -> DDAResult:
    """Run Algorithm 1 for ``options["iterations"]`` iterations; ``options`` are the keyword
    arguments of :class:`DDASimulator`. ``snapshot_every`` = k records n⁻¹ Σ_i x̃_i^(t) every k
    iterations (none by default)."""
    sim = DDASimulator(features, labels, node_rows, **options)
    every = None if snapshot_every is None else check_count("snapshot_every", snapshot_every)
    at, snaps = [], []
    for t in range(1, sim.iterations + 1):
        sim.step()
        if every is not None and t % every == 0:
            at.append(t)
            snaps.append(sim.mean_average())
    shots = np.array(snaps) if snaps else np.empty((0, sim.features.shape[1]))
    return DDAResult(
        averages=sim.averages(), iota=sim.iota, snapshot_iterations=np.array(at, dtype=np.int64), snapshots=shots
    )
