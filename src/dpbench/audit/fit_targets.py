"""Audit targets that run an algorithm's own code path on a tiny worst-case neighbouring pair.

Each sampler either calls the algorithm's public entry point once per draw — ``fit()`` (OutPert-RSGD,
PrivGene) with a fresh run ledger and tracer, or ``release()`` for R runs at once (the han_pwa
mechanisms, vectorised over runs by design) — or, where one call per draw would be too slow, the exact
function ``fit()`` calls for the release, vectorised, after a probe has checked on the algorithm's own
code that it is that function (liu_dda). The claimed ε is what the ledger the algorithm charged reports
for the release. Targets that call ``fit()`` per draw cap N with ``max_n`` (~0.5 ms a fit).
"""

from __future__ import annotations

import math

import numpy as np

from dpbench.algorithms.base import Tracer
from dpbench.algorithms.liu_dda import DPDDA
from dpbench.algorithms.output_perturbation import (
    OutPertRSGD,
    permuted_sgd,
    public_constants,
)
from dpbench.algorithms.privgene import PrivGene, eem_sensitivity, population_fitness
from dpbench.audit.algorithm_targets import _huber_pair
from dpbench.audit.core import Target
from dpbench.audit.targets import DELTA, ample_ledger
from dpbench.dda.accounting import release_event
from dpbench.dda.simulator import DDASimulator, noisy_subgradients
from dpbench.privacy.accountants import make_accountant
from dpbench.privacy.events import ApproxDPEvent
from dpbench.privacy.ledger import Ledger
from dpbench.problems import make_problem
from dpbench.pwa.algorithms import PWALaplaceData, PWASubgradient
from dpbench.pwa.mechanisms import step_sizes
from dpbench.pwa.problem import PWAProblem

__all__ = [
    "dda_paper_release_target",
    "dda_rdp_release_target",
    "outpert_rsgd_target",
    "privgene_target",
    "pwa_laplace_data_target",
    "pwa_subgradient_target",
]

FIT_MAX_N = 20_000
"""N per side for the targets that call ``fit()`` once per draw: with the calibration sample (N/2 per side)
3·N fits, ~30 s per target at ~0.5 ms a fit."""


def _run_ledger(epsilon: float, delta: float, accountant: str, relation: str) -> Ledger:
    """A fresh ledger of one run, as ``dpbench.jobs.ledgers.run_ledger`` builds it for the method's native relation."""
    return Ledger(epsilon, delta, make_accountant(accountant), neighbouring=relation)


def _fit(method, problem, ledger: Ledger, rng: np.random.Generator):
    """One ``method.fit`` with its own tracer, as the engine runs it."""
    return method.fit(problem, ledger, rng, Tracer(problem, ledger))


def _fit_sampler(method, problems, budget: tuple[float, float, str, str]):
    """``sample(side, n, rng)``: the first weight of n independent ``fit()`` runs on problems[side], each
    charged to a fresh run ledger of ``budget`` = (ε, δ, accountant, relation)."""

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.array([_fit(method, problems[side], _run_ledger(*budget), rng).w[0] for _ in range(n)])

    return sample


def _fit_claim(method, problem, budget: tuple[float, float, str, str]) -> float:
    """The ε a run's ledger records after one ``fit()``: the claim of its one release."""
    ledger = _run_ledger(*budget)
    _fit(method, problem, ledger, np.random.default_rng(0))
    return float(ledger.eps_spent)


def _release_claim(method, problem, epsilon: float) -> float:
    """The ε the per-run ledger records after one han_pwa ``release`` (one run)."""
    ledger = ample_ledger()
    method.release(problem, epsilon=epsilon, runs=1, rng=np.random.default_rng(0), ledger=ledger)
    return float(ledger.eps_spent)


# ------------------------------------------------------------------------------------------ han_pwa
def pwa_laplace_data_target(
    epsilon: float = 1.0, *, declared_b_max: float = 1.0, max_n: int | None = None, name: str = "pwa_laplace_data"
) -> Target:
    """han_pwa's Laplace mechanism on the data (Sec. 4.1, Thm 16) through ``PWALaplaceData.release``:
    b̃ = b + w_P, w_P ∝ exp(−ε‖w_P‖₂/(√m·b_max)), then x = the exact LP minimiser on b̃ (post-processing,
    Thm 14); the released x is the output. Pair (d = 1, m = 2, c = 10, b_max = 1): f = max(x + b₁, −x + b₂),
    b = (0, 0) vs b′ = (−1, 1), adjacent by eq. (4) (every offset moves by b_max); x_opt = (b₂ − b₁)/2 = 0
    vs 1. ‖b − b′‖₂ = √2·b_max = √m·b_max, the L2 sensitivity Thm 16 charges, and the whole shift lies
    along (−1, 1), the one direction x reads: x = x_opt + (w₂ − w₁)/2 inside the box. ``declared_b_max``
    is the b_max the problem tells the mechanism (a control understates it); ``max_n`` caps N (~15 µs a run,
    one LP each)."""
    A = np.array([[1.0], [-1.0]])
    problems = [PWAProblem(A, np.array(b), 10.0, declared_b_max) for b in ((0.0, 0.0), (-1.0, 1.0))]
    optima = [p.solve()[0][0] for p in problems]
    if not math.isclose(optima[1] - optima[0], 1.0, rel_tol=1e-9):
        raise AssertionError(f"the optima {optima} should be b_max = 1 apart")
    method = PWALaplaceData()

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return method.release(problems[side], epsilon=epsilon, runs=n, rng=rng, ledger=ample_ledger()).x[:, 0]

    return Target(
        name,
        _release_claim(method, problems[0], epsilon),
        0.0,
        sample,
        max_n=max_n,
        pair=f"d = 1, m = 2: b = (0, 0) vs b′ = (−1, 1), b_max = 1 (declared {declared_b_max:g}): "
        "‖Δb‖₂ = √m·b_max, x_opt 0 vs 1",
        proof="han_pwa Thm 16 (vector Laplace on b, Thm 9; the LP is post-processing, Thm 14)",
    )


def pwa_subgradient_target(selection: str = "printed", epsilon: float = 1.0) -> Target:
    """One subgradient selection of han_pwa's private subgradient method (Alg. 1–2, Thm 24) through
    ``PWASubgradient.release`` with k = 1 (every one of the k selections of a run is this draw with
    ε_k = ε/k; their composition, Thm 15, is not audited here). At x(1) = 0, u_sub(i) = b_i and i* is drawn
    ∝ exp(∓ε·u_sub/(2b_max)) (``selection`` "printed": −, ``fidelity=paper``; "active": +,
    ``fidelity=correct``); x(2) = Π_P(−α a_{i*}), and with slopes a = (1, −1, ½, −½), c = 1 and α = 1
    (step_scale ½, so |α a_i| ≤ c and the projection does nothing) x(2) = −a_{i*} identifies the index. Pair (b_max = 1): the exponential mechanism's worst case
    (McSherry & Talwar 2007; as the ``exponential`` target), b = ±(6, 0, 0, 0) vs ±(5, 1, 1, 1) — piece 1
    gains b_max in score while every other loses b_max, adjacent by eq. (4) — sign + for "printed"."""
    A = np.array([[1.0], [-1.0], [0.5], [-0.5]])
    sign = 1.0 if selection == "printed" else -1.0
    problems = [PWAProblem(A, sign * np.array(b), 1.0, 1.0) for b in ((6.0, 0.0, 0.0, 0.0), (5.0, 1.0, 1.0, 1.0))]
    method = PWASubgradient(iterations=1, step_scale=0.5, fidelity="paper" if selection == "printed" else "correct")
    alpha = step_sizes(problems[0], 1, method.step_rule, method.step_scale)[0]
    if not alpha * np.abs(A).max() <= problems[0].c:
        raise AssertionError(f"the step α = {alpha} would leave the box: x(2) would not identify the index")

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return method.release(problems[side], epsilon=epsilon, runs=n, rng=rng, ledger=ample_ledger()).x[:, 0]

    return Target(
        f"pwa_subgradient_{selection}",
        _release_claim(method, problems[0], epsilon),
        0.0,
        sample,
        pair=f"u_sub at x(1) = 0: b = {sign:+g}·(6, 0, 0, 0) vs {sign:+g}·(5, 1, 1, 1), b_max = 1, x(2) = −a_{{i*}}",
        proof=f"han_pwa Alg. 1 ({selection} sign), Thm 10 with Δ = b_max (exponential mechanism)",
    )


# ------------------------------------------------------------------------------------------ OutPert-RSGD
def outpert_rsgd_target(epsilon: float = 1.0, delta: float = DELTA, max_n: int = FIT_MAX_N) -> Target:
    """OUTPERT-RSGD (chen_lee Sec 5.3; Chen, Lee & Kifer 2019) by ``OutPertRSGD.fit``: E = 2 passes of
    minibatch SGD over one random permutation (m = 2 batches of 2), the average of the iterates, then one
    Gaussian release with Δ = max_k Δ^{(k)} of eq. (RS-1) and σ calibrated to the run's (ε, δ). Replace-one
    pair: the Huber pair of ``_huber_pair`` (n = 4, μ = 1; record 0 is x = 1 with y = +1 vs −1, the rest
    x = 0). Every step is the affine contraction w ↦ (1 − ημ)w ± η/|B| on the batch holding record 0 and
    (1 − ημ)w on the other, so the outputs differ by exactly Δ^{(k)}, k the batch fit()'s permutation puts
    record 0 in (checked for both k): the recurrence (RS-1) is tight and the release is, per draw, the
    Gaussian mechanism at Δ^{(k)} ≤ Δ. The claim is the ledger's spend. N is capped (a fit per draw)."""
    problems = _huber_pair()
    method = OutPertRSGD(epochs=2, batch_size=2)
    _check_rsgd_pair(method, problems)
    budget = (epsilon, delta, "rdp", "replace_one")
    return Target(
        "outpert_rsgd",
        _fit_claim(method, problems[0], budget),
        delta,
        _fit_sampler(method, problems, budget),
        max_n=max_n,
        note="one OutPertRSGD.fit per draw",
        pair="1-D Huber hinge, n = 4, x₀ = 1, y₀ = +1 vs −1, μ = 1; E = 2, m = 2: |w − w′| = Δ^{(k)}",
        proof="Chen, Lee & Kifer 2019 (eq. RS-1, replace-one), Gaussian mechanism (RDP)",
    )


def _check_rsgd_pair(method: OutPertRSGD, problems) -> None:
    """On the pair, the noise-free outputs differ by exactly Δ^{(k)} of eq. (RS-1) for record 0 in either batch."""
    sizes, steps = method.schedule(problems[0])
    lipschitz = public_constants(method.name, problems[0], method.row_bound)[0]
    sensitivities = method.sensitivities(problems[0])
    for k, order in enumerate((np.array([0, 1, 2, 3]), np.array([1, 2, 0, 3]))):
        w = [permuted_sgd(p, order, sizes, steps, averaging=method.averaging, lipschitz=lipschitz)[0] for p in problems]
        if not math.isclose(abs(w[0] - w[1]), sensitivities[k], rel_tol=1e-9):
            raise AssertionError(
                f"batch {k}: the pair gives |w − w′| = {abs(w[0] - w[1])}, Δ^({k}) = {sensitivities[k]}"
            )


# ------------------------------------------------------------------------------------------ PrivGene
def _privgene_pair(against: int):
    """1-D hinge problems with public n̄ = against + 1: D holds ``against`` records (x = 1, y = −1), D′ = D ∪ {(1, +1)}."""
    ys = (np.full(against, -1.0), np.append(np.full(against, -1.0), 1.0))
    return [make_problem(np.ones((y.size, 1)), y, loss="hinge", reg=0.0, public_n=against + 1) for y in ys]


def _check_privgene_pair(method: PrivGene, problems) -> tuple[float, float]:
    """(the candidates' |w|, Δ'_1) of round 1, after checking that the added record moves the fitness difference
    of the two candidates by at least the Δ'_1 fit() charges (exactly Δ'_1 for PrivGene itself)."""
    delta = method.mutation_scale_at(1)
    population = method._mutants(np.zeros((1, 1)), delta, np.random.default_rng(0))
    gaps = [float(np.diff(population_fitness(p, population.T, method.clip_obj))[0]) for p in problems]
    charged = eem_sensitivity(
        population,
        l1_diameter=2.0 * delta,
        clip=method.clip_obj,
        lipschitz=problems[0].loss.lipschitz,
        feature_bound=method.feature_bound,
        reg=problems[0].reg,
    )
    if not abs(gaps[1] - gaps[0]) >= charged * (1.0 - 1e-12):
        raise AssertionError(
            f"the pair moves the fitness difference by {abs(gaps[1] - gaps[0])}, less than Δ' = {charged}"
        )
    return float(np.abs(population).max()), charged


def privgene_target(
    epsilon: float = 1.0,
    *,
    method: PrivGene | None = None,
    against: int = 4,
    max_n: int = FIT_MAX_N,
    name: str = "privgene",
) -> Target:
    """PrivGene (Zhang et al. 2013; privgene.py) by ``PrivGene.fit`` with its defaults on d = 1: r = 1 round,
    one parent, the population {+δ₀, −δ₀} (δ₀ = ½), one enhanced-exponential-mechanism selection with
    ε_sel = ε and Δ'_1 = G·B·2δ₀ = 1 (hinge, B = 1), exponent ε/(2Δ') (``tight=False``, DP-AGD's code). The
    released model ±δ₀ is the output. Add/remove pair: D = ``against`` records (1, −1), D′ = D ∪ {(1, +1)};
    each record moves φ(+δ₀) − φ(−δ₀) by exactly 2δ₀ = Δ' (the hinge is linear there), so z attains the
    sensitivity, and D's records make +δ₀ unlikely — where the exponential mechanism's ratio approaches its
    bound. The default ``tight=False`` is (ε/2)-DP under add/remove while the ledger charges ε
    (privgene.py): ε̂ ≤ ε/2 is expected. N is capped (a fit per draw)."""
    method = PrivGene() if method is None else method
    problems = _privgene_pair(against)
    moves, charged = _check_privgene_pair(method, problems)
    budget = (epsilon, DELTA, "pure", "add_remove")
    return Target(
        name,
        _fit_claim(method, problems[0], budget),
        0.0,
        _fit_sampler(method, problems, budget),
        max_n=max_n,
        note="one PrivGene.fit per draw",
        pair=f"d = 1, hinge: D = {against} × (x = 1, y = −1), D′ = D ∪ {{(1, +1)}}; candidates ±{moves:g}, "
        f"Δ' = {charged:g}",
        proof="PrivGene's enhanced exponential mechanism (privgene.py; Zhang et al. 2013), add/remove",
    )


# ------------------------------------------------------------------------------------------ liu_dda, noise=rdp
def _dda_local_data(q: int):
    """One node's q samples (a, y), a = 1 (‖a‖ = L): D all y = +1; D′ has its first sample's label flipped."""
    return np.ones((q, 1)), [np.ones(q), np.append(-1.0, np.ones(q - 1))]


def _probe_dda_step(sigma: float, q: int, lipschitz: float, strength: float, seeds: int = 16) -> None:
    """Raise unless one ``DDASimulator.step`` of dp_dda (two nodes on one gossip edge, a₁ = 1, z = 0) releases
    what the sampler draws: ξ_i = node_rows[i, rng.integers(q)] and ζ = ``noisy_subgradients`` at x = 0 from
    the same generator — the mixed state z^(2) = W·ζ (W = ½·11ᵀ) must match exactly."""
    X, labels = _dda_local_data(q)
    features, y = np.vstack([X, X]), np.concatenate([labels[1], labels[0]])  # node 0 holds D′, node 1 holds D
    node_rows = np.arange(2 * q).reshape(2, q)
    for seed in range(seeds):
        sim = DDASimulator(
            features,
            y,
            node_rows,
            regulariser="l2",
            strength=strength,
            sigma=sigma,
            iterations=1,
            rng=np.random.default_rng(seed),
            schedule_edges=np.array([[[0, 1]]]),
            clip=lipschitz,
        )
        sim.step()
        rng = np.random.default_rng(seed)
        rows = node_rows[np.arange(2), rng.integers(q, size=2)]
        zeta = noisy_subgradients(features, y, rows, np.zeros((2, 1)), sigma=sigma, rng=rng, clip=lipschitz)
        if not np.allclose(sim.z, zeta.mean(axis=0), rtol=1e-12, atol=0.0):
            raise AssertionError(f"probe seed {seed}: the simulator's state {sim.z} is not W·ζ = {zeta.mean(axis=0)}")


def dda_rdp_release_target(
    epsilon: float = 1.0, delta: float = DELTA, q: int = 2, *, subsample: bool = True, name: str = "dda_rdp_release"
) -> Target:
    """One node release of liu_dda Alg. 1 (line 7) under dp_dda's default ``noise=rdp``: ``DPDDA.fit`` with
    n = 2 nodes, T = 1 (each node releases once, K = 1) calibrates σ to the run's (ε, δ) and charges
    K copies of ``SampledWithoutReplacementEvent(1, q, GaussianEvent(σ/2L))`` (dpbench.dda.accounting:
    a Gaussian of sensitivity 2L on one of the node's q samples drawn uniformly, Wang, Balle &
    Kasiviswanathan 2019 Thm 9); the claim is that ledger's spend, σ is ``fit``'s. The sampler draws
    ξ = rng.integers(q) and ζ = ``noisy_subgradients`` at x^(1) = 0, probed against ``DDASimulator.step``.
    Replace-one pair (L = 1): the node's q samples (a, +1) vs the first replaced by (a, −1): ĝ = −a always
    on D, and +a when ξ hits the replaced sample on D′ (‖ĝ − ĝ′‖ = 2L): N(−a, σ²) vs
    (1 − 1/q)·N(−a, σ²) + (1/q)·N(a, σ²), the subsampled Gaussian's worst case. ``subsample=False``
    (a control) always releases the replaced sample instead of drawing ξ."""
    method, lipschitz, strength = DPDDA(n_nodes=2, iterations=1, lipschitz=1.0), 1.0, 0.0005
    X, _ = _dda_local_data(q)
    problem = make_problem(np.vstack([X, X]), np.ones(2 * q), loss="hinge", reg=strength)
    ledger = _run_ledger(epsilon, delta, "rdp", "replace_one")
    sigma = _fit(method, problem, ledger, np.random.default_rng(0)).info["sigma"]
    entry = ledger.entries[0]
    if (entry.event, entry.count) != (release_event(sigma, lipschitz=lipschitz, q=q), 1):
        raise AssertionError(f"fit charged {entry.count} × {entry.event}, the audit samples one release at σ = {sigma}")
    _probe_dda_step(sigma, q, lipschitz, strength)
    return Target(
        name,
        float(ledger.eps_spent),
        delta,
        _dda_release_sampler(q, sigma, lipschitz, subsample=subsample),
        pair=f"one node's q = {q} samples (a, +1) vs the first replaced by (a, −1), ‖a‖ = L = 1, x = 0"
        + ("" if subsample else ", ξ always the replaced sample")
        + f"; σ = {sigma:.4g}",
        proof="liu_dda Alg. 1 line 7; Gaussian (sensitivity 2L) on 1 of q samples without replacement, RDP "
        "(Wang, Balle & Kasiviswanathan 2019 Thm 9)",
    )


def _dda_release_sampler(q: int, sigma: float, lipschitz: float, *, subsample: bool = True):
    """``sample(side, n, rng)``: n releases ζ = ``noisy_subgradients`` of the node holding :func:`_dda_local_data`'s
    D (side 0) or D′ (side 1) at x = 0, ξ = rng.integers(q) (always the replaced sample unless ``subsample``)."""
    X, labels = _dda_local_data(q)

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        rows = rng.integers(q, size=n) if subsample else np.zeros(n, dtype=np.int64)
        return noisy_subgradients(X, labels[side], rows, np.zeros((n, 1)), sigma=sigma, rng=rng, clip=lipschitz)[:, 0]

    return sample


# ------------------------------------------------------------------------------------------ liu_dda, fidelity=paper
def dda_paper_release_target(
    epsilon: float = 1.0, delta: float = DELTA, q: int = 50, *, name: str = "dda_paper_release"
) -> Target:
    """One node release of liu_dda Alg. 1 under ``fidelity=paper``: ``DPDDA.fit`` with n = 2 nodes, T = 1
    (ι = 1) draws Theorem 1's σ as printed, √(32·L²·log(2/δ₀))/(qε) at δ₀ = 0.01
    (:func:`~dpbench.dda.noise.sec5_sigma`; T = 1 is below Theorem 1's condition 5q²ε²/4, as Sec. 5's runs
    are), and charges ApproxDPEvent(ε, δ), the claim. Same pair and sampler as :func:`dda_rdp_release_target`,
    probed the same way. NOT a guarantee (a control): at q = 50, ε = 1, σ = 0.26·L, so when ξ hits the
    replaced sample (probability 1/q) the release is N(+a, σ²) instead of N(−a, σ²), 7.7σ apart: the release
    is (ε′, ≈ 1/q)-DP for every ε′, where (ε, 10⁻⁵) is claimed."""
    method, lipschitz, strength = DPDDA(n_nodes=2, iterations=1, lipschitz=1.0, fidelity="paper"), 1.0, 0.0005
    X, _ = _dda_local_data(q)
    problem = make_problem(np.vstack([X, X]), np.ones(2 * q), loss="hinge", reg=strength)
    ledger = _run_ledger(epsilon, delta, "approx", "replace_one")
    sigma = _fit(method, problem, ledger, np.random.default_rng(0)).info["sigma"]
    entry = ledger.entries[0]
    if (entry.event, entry.count) != (ApproxDPEvent(epsilon, delta), 1):
        raise AssertionError(
            f"fit charged {entry.count} × {entry.event}, the audit's claim is (ε, δ) = ({epsilon}, {delta})"
        )
    _probe_dda_step(sigma, q, lipschitz, strength)
    return Target(
        name,
        epsilon,
        delta,
        _dda_release_sampler(q, sigma, lipschitz),
        pair=f"one node's q = {q} samples (a, +1) vs the first replaced by (a, −1), ‖a‖ = L = 1, x = 0; "
        f"σ = {sigma:.4g} (Theorem 1 as printed, T = 1, ι = 1)",
        proof="(broken as published) liu_dda Theorem 1's σ as Sec. 5 draws it, below the theorem's condition on T",
    )
