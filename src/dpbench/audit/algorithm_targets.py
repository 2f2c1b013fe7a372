"""Audit targets for one private release of each optimiser (DP-SGD, DP-BLSGD, DP-NAG, DDA, output
and objective perturbation, kusner_bo). The samplers reproduce the release from the algorithm's
public pieces — its sensitivity, its noise calibration and the mechanism function it calls —
vectorised over runs; where a release depends on the data only through one record, the other
records are chosen so that the batch enters only through that record (stated per target).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

from dpbench.algorithms import kuru_schedules as schedules
from dpbench.algorithms.chen_lee import ArmijoQueries, noisy_btls
from dpbench.algorithms.output_perturbation import (
    OutPertGD,
    gradient_descent,
    public_constants,
)
from dpbench.algorithms.sampling import poisson_subsample
from dpbench.audit.core import Target
from dpbench.audit.events import clopper_pearson_bounds
from dpbench.audit.probe import probe_additive_release
from dpbench.audit.targets import (
    DELTA,
    ample_ledger,
    claimed_epsilon,
    exponential_sampler,
)
from dpbench.bo.algorithms import BOProblem, KusnerAlg1, KusnerAlg2, KusnerAlg3
from dpbench.dda.noise import per_step_epsilon, theorem1_sigma
from dpbench.dda.simulator import noisy_subgradients
from dpbench.privacy.calibrate import gaussian_noise_for_budget
from dpbench.privacy.events import GaussianEvent, PoissonSampledEvent
from dpbench.privacy.mechanisms import (
    gaussian_mechanism,
    laplace_mechanism,
    objective_perturbation_noise,
    sample_above_threshold,
    subsampled_laplace_mechanism,
)
from dpbench.privacy.sparse_vector import svt_noise
from dpbench.problems import make_problem

__all__ = [
    "bo_alg2_value_target",
    "bo_alg3_value_target",
    "bo_lambda_target",
    "bo_value_target",
    "dda_release_target",
    "dp_blsgd_line_search_target",
    "dp_blsgd_poisson_line_search_target",
    "dp_nag_step_target",
    "dp_sgd_step_target",
    "objective_perturbation_target",
    "output_perturbation_target",
]


# ------------------------------------------------------------------------------------------ DP-SGD
def _dp_sgd_pair(others: int, clip: float):
    """D′ for the DP-SGD step: z = (x = (30, −20, 10), y = 1) as row 0, then ``others`` rows at x = 0
    (zero gradient); D is D′ without z. Returns D′'s problem and z's clipped gradient g_z (‖g_z‖ = C)."""
    X = np.zeros((others + 1, 3))
    X[0] = (30.0, -20.0, 10.0)
    problem = make_problem(X, np.ones(others + 1), loss="logistic", reg=0.0)
    g_z = problem.clipped_gradient_sum(np.zeros(3), np.array([0]), clip)
    if not math.isclose(float(np.linalg.norm(g_z)), clip):
        raise AssertionError(f"z's gradient must be clipped to exactly C = {clip}, got norm {np.linalg.norm(g_z)}")
    return problem, g_z


def _probe_batch_sums(problem, g_z: np.ndarray, sampling_rate: float, clip: float, batches: int = 64) -> None:
    """Raise unless ``clipped_gradient_sum`` at w₀ = 0 on batches ``poisson_subsample`` draws from D′'s rows
    is [z ∈ B]·g_z exactly: the sampler's release needs only z's membership."""
    rng = np.random.default_rng(0)
    for _ in range(batches):
        batch = poisson_subsample(problem.n, sampling_rate, rng)
        total = problem.clipped_gradient_sum(np.zeros(3), batch, clip)
        if not np.array_equal(total, g_z if 0 in batch else np.zeros(3)):
            raise AssertionError(f"batch {batch}: clipped sum {total}, expected [z ∈ B]·{g_z}")


def _poisson_batches(
    runs: int, rows: int, sampling_rate: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(row 0 is in the batch, |B|) for ``runs`` independent Poisson batches of ``rows`` records, from ONE
    ``poisson_subsample`` over runs·rows records: either way every record is kept by an independent
    Bernoulli(q) coin, so the kept positions in [r·rows, (r + 1)·rows) are run r's batch, in law exactly."""
    kept = poisson_subsample(runs * rows, sampling_rate, rng)
    run = kept // rows
    first = np.zeros(runs, dtype=bool)
    first[run[kept % rows == 0]] = True
    return first, np.bincount(run, minlength=runs)


def _batch_size_statistic(g_z: np.ndarray, noise_multiplier: float, others: int):
    """T(s, k) = y/σ² + ln k − ln(n + 1 − k), y = ⟨s, g_z⟩/C² (z's unit of the noisy sum s), k = |B|, n = |D|: an
    increasing function of the likelihood ratio of (s, |B|) on D′ and D, (1 − q)(1 + k/(n + 1 − k)·e^{(2y − 1)/(2σ²)})
    (given |B| = k on D′, z is in the batch with probability k/(n + 1)); ±∞ at k = n + 1 (only on D′) and k = 0."""
    unit = g_z / float(g_z @ g_z)

    def statistic(outputs: np.ndarray) -> np.ndarray:
        k = outputs[:, -1]
        with np.errstate(divide="ignore"):
            return outputs[:, :-1] @ unit / noise_multiplier**2 + np.log(k) - np.log(others + 1 - k)

    return statistic


def dp_sgd_step_target(
    *,
    noise_multiplier: float = 1.5,
    sampling_rate: float = 0.25,
    clip: float = 4.0,
    others: int = 19,
    publish_batch_size: bool = False,
    name: str = "dp_sgd_step",
) -> Target:
    """One DP-SGD step (Abadi et al. 2016; dp_sgd.py): Σ_B clip(∇ℓ_i, C) + N(0, σ²C²I) on a Poisson batch
    of rate q. D′ = D ∪ {z}: the ``others`` records of D have x = 0 (zero gradients) and z has ‖∇ℓ_z‖ ≫ C, so
    the clipped sum is exactly [z ∈ B]·g_z, ‖g_z‖ = C (probed on ``clipped_gradient_sum``) — the worst case of
    the subsampled-Gaussian RDP bound (Mironov, Talwar & Zhang 2019: N(0, σ²) vs (1 − q)N(0, σ²) + qN(1, σ²)
    per unit C). The batches are drawn by ``poisson_subsample``, DP-SGD's own sampler (one call for all runs,
    :func:`_poisson_batches`); the sum goes through ``gaussian_mechanism`` with sampling_rate = q, as
    DPSGD.fit calls it. The output is the noisy sum, what a step releases (3-D; the auditor projects it onto
    the difference of the calibration means, ≈ g_z's direction). ``publish_batch_size`` appends |B| — what
    a row's grad_evals adds up — a release the claim does not cover (a control; its statistic is the
    likelihood ratio's :func:`_batch_size_statistic`).
    Claimed ε: the RDP ledger's ε at δ = 10⁻⁵ for one PoissonSampledEvent(q, GaussianEvent(σ))."""
    problem, g_z = _dp_sgd_pair(others, clip)
    _probe_batch_sums(problem, g_z, sampling_rate, clip)
    claim = claimed_epsilon(PoissonSampledEvent(sampling_rate, GaussianEvent(noise_multiplier)), DELTA)

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        in_batch, sizes = _poisson_batches(n, others + side, sampling_rate, rng)  # z is row 0 of D′ only
        noisy = gaussian_mechanism(
            (side * in_batch)[:, None] * g_z,
            sensitivity=clip,
            noise_multiplier=noise_multiplier,
            rng=rng,
            ledger=ample_ledger("rdp"),
            sampling_rate=sampling_rate,
        )
        return np.column_stack([noisy, sizes]) if publish_batch_size else noisy

    return Target(
        name,
        claim,
        DELTA,
        sample,
        pair=f"D: {others} zero-gradient rows; D′ = D ∪ {{z}}, ‖∇ℓ_z‖ > C = {clip:g}; "
        f"q = {sampling_rate:g}, σ = {noise_multiplier:g}"
        + ("; output (noisy sum, |B|)" if publish_batch_size else ""),
        proof="Poisson-subsampled Gaussian RDP (Mironov et al. 2019), chen_lee Lemma 4 accounting",
        statistic=_batch_size_statistic(g_z, noise_multiplier, others) if publish_batch_size else None,
    )


# ------------------------------------------------------------------------------------------ DP-BLSGD
_BTLS = {"eta0": 40.0, "alpha": 0.5, "beta": 0.8, "obj_clip": 1.0}
_BTLS_QUERIES = 12


def _armijo_queries(X, y, w, g, normaliser, batch=None):
    problem = make_problem(X, y, loss="logistic", reg=0.001)
    queries = ArmijoQueries(problem, w, g, batch, normaliser=normaliser, **_BTLS)
    return np.array([queries.value(i) for i in range(_BTLS_QUERIES)]), queries.sensitivity


def _cdf(x: np.ndarray, scale: float, gaussian: bool) -> np.ndarray:
    if gaussian:
        return ndtr(x / scale)
    z = np.exp(-np.abs(x) / scale) / 2.0
    return np.where(x < 0, z, 1.0 - z)


def _svt_output_law(q: np.ndarray, noise) -> np.ndarray:
    """P[first ⊤ = k], k = 0..K−1, of AboveThreshold at T = 0 with ``noise`` (an ``SVTNoise``), by
    quadrature over the threshold noise (midpoint rule on ±40 scales, ±10 for Gaussian noise)."""
    width = (10.0 if noise.gaussian else 40.0) * noise.threshold_scale
    edges = np.linspace(-width, width, 4001)
    weights = np.diff(_cdf(edges, noise.threshold_scale, noise.gaussian))
    t = 0.5 * (edges[1:] + edges[:-1])
    below = _cdf(t[:, None] - q[None, :], noise.query_scale, noise.gaussian)  # P[q_i + ν_i < T̂]
    before = np.cumprod(np.hstack([np.ones((t.size, 1)), below[:, :-1]]), axis=1)
    return weights @ (before * (1.0 - below))


def _worst_record(law_d: np.ndarray, candidates, delta: float):
    """Of ``candidates`` — (record, its queries, the output law on D′) — the (record, queries) whose law gives
    the largest expected bound at N = 10⁶ against ``law_d`` on some output index, in either direction (the
    first on ties); chosen from exact laws, before any sampling."""
    best = (-np.inf, None)
    for record, queries, law in candidates:
        score = np.maximum(
            clopper_pearson_bounds(law_d * 1e6, 10**6, law * 1e6, 10**6, delta=delta, confidence=0.9995),
            clopper_pearson_bounds(law * 1e6, 10**6, law_d * 1e6, 10**6, delta=delta, confidence=0.9995),
        ).max()
        if score > best[0]:
            best = (float(score), (record, queries))
    return best[1]


def dp_blsgd_line_search_target(
    noise: str = "laplace", *, epsilon: float = 1.0, rho: float = 0.05, candidates: int = 300
) -> Target:
    """NoisyBTLS (chen_lee Alg. 1), DP-BLSGD's step-size release, on its real Armijo queries: D is a
    40-record logistic problem, D′ = D plus one record; both run ``ArmijoQueries`` through the
    calibration ``noisy_btls`` uses (``svt_noise(noise, Δ_q = C_obj/L, ε_BT or ρ_BT)``, checked against
    the event ``noisy_btls`` charges), sampled by ``sample_above_threshold``. The added record is the
    one, among ``candidates`` random records, whose exact output law (quadrature) gives the largest
    expected bound at N = 10⁶ on some output index — chosen before any sampling. Claim: ε_BT-DP
    (Laplace, chen_lee Lemma 5 / Thm 1) or (α, αρ_BT)-RDP (Gaussian, Thm 3) converted at δ = 10⁻⁵."""
    rng = np.random.default_rng(7)
    n, d = 40, 3
    X = np.hstack([np.ones((n, 1)), rng.uniform(size=(n, d - 1))])
    y = np.where(X @ np.array([-1.0, 2.0, 1.0]) + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    w = np.array([0.3, -0.5, 0.2])
    _, g = make_problem(X, y, loss="logistic", reg=0.001).objective_and_gradient(w)
    q_d, sensitivity = _armijo_queries(X, y, w, g, float(n))
    budget = {"epsilon": epsilon} if noise == "laplace" else {"rho": rho}
    calibration = svt_noise(noise, sensitivity=sensitivity, **budget)
    claim, delta = (epsilon, 0.0) if noise == "laplace" else (claimed_epsilon(calibration.event, DELTA), DELTA)
    law_d = _svt_output_law(q_d, calibration)

    def records():
        for _ in range(candidates):
            x_new = np.append(1.0, rng.normal(size=d - 1) * 10 ** rng.uniform(-1, 2))
            q_new, _ = _armijo_queries(np.vstack([X, x_new]), np.append(y, rng.choice([-1.0, 1.0])), w, g, float(n))
            yield x_new, q_new, _svt_output_law(q_new, calibration)

    queries = (q_d, _worst_record(law_d, records(), delta)[1])
    _check_noisy_btls_charge(
        make_problem(X, y, loss="logistic", reg=0.001),
        w,
        g,
        noise,
        epsilon if noise == "laplace" else rho,
        calibration,
        normaliser=float(n),
    )

    def sample(side: int, n_runs: int, rng: np.random.Generator) -> np.ndarray:
        return sample_above_threshold(
            queries[side], 0.0, sensitivity=sensitivity, rng=rng, size=n_runs, noise=noise, **budget
        )

    return Target(
        f"dp_blsgd_noisy_btls_{noise}",
        claim,
        delta,
        sample,
        pair=f"40 records vs the same plus the worst of {candidates} random records (Armijo queries, Δ_q = C_obj/L)",
        proof="chen_lee Lemma 5 / Thm 1" if noise == "laplace" else f"chen_lee Thm 3, ρ_BT = {rho:g}, RDP → (ε, δ)",
    )


def _check_noisy_btls_charge(
    problem, w, g, noise: str, budget: float, calibration, *, normaliser: float, sampling_rate: float = 1.0
) -> float:
    """Run ``noisy_btls`` as DP-BLSGD's ``fit()`` does — for q < 1 on a batch from ``poisson_subsample``, charged
    to ``ledger.poisson_batch(q)`` — and check that it charges the calibration the sampler uses, priced as
    PoissonSampledEvent(q, ·) for q < 1; returns the ε the ledger then records (that one release's claim)."""
    ledger, rng = ample_ledger("rdp"), np.random.default_rng(0)
    subsampled = sampling_rate < 1.0
    batch = poisson_subsample(problem.n, sampling_rate, rng) if subsampled else None
    noisy_btls(
        problem,
        w,
        g,
        batch,
        max_it=_BTLS_QUERIES,
        normaliser=normaliser,
        noise=noise,
        budget=budget,
        rng=rng,
        ledger=ledger.poisson_batch(sampling_rate) if subsampled else ledger,
        **_BTLS,
    )
    priced = PoissonSampledEvent(sampling_rate, calibration.event) if subsampled else calibration.event
    if ledger.entries[0].event != calibration.event or not math.isclose(
        ledger.eps_spent, claimed_epsilon(priced, DELTA), rel_tol=1e-12
    ):
        raise AssertionError(
            f"noisy_btls charged {ledger.entries[0].event} (ε = {ledger.eps_spent}), the audit samples {priced}"
        )
    return float(ledger.eps_spent)


def dp_blsgd_poisson_line_search_target(
    noise: str = "laplace",
    *,
    epsilon: float = 2.0,
    rho: float = 0.2,
    sampling_rate: float = 0.25,
    candidates: int = 300,
) -> Target:
    """NoisyBTLS (chen_lee Alg. 1) on a Poisson subsample of rate q, as DP-BLSGD and DP-BLSGD-AC run it: ``fit()``
    draws B with ``poisson_subsample``, normalises by the public L = qn̄ and charges ``noisy_btls`` to
    ``ledger.poisson_batch(q)`` (checked: the charge is priced as PoissonSampledEvent(q, ·) and is the claim, the
    tight RDP conversion at δ = 10⁻⁵ — a run's Rényi filter at one order can only report more). Add/remove pair:
    D = n̄ = 40 records with x = 0, whose clipped losses do not move along any step, so every subsample of D
    has the same Armijo queries q_D (checked on subsamples); D′ = D ∪ {z}, whose queries are q_z when z ∈ B,
    with probability q (the marginal of ``poisson_subsample``), else q_D. At w = (1, 0), g = (0, 10⁻³)
    (the iteration's public noisy gradient), q_D ≈ 0 = the threshold, and z = (x₁, x₂, +1) lowers query i
    by up to Δ_q = C_obj/L through its loss at w − η_i g. z is the one among ``candidates`` (x₁ ~ U(−15, 15),
    x₂ = ±10^U(2,6)) whose exact mixture law (1 − q)·law(q_D) + q·law(q_z) gives the largest expected bound
    at N = 10⁶ — chosen before any sampling. Runs go through ``sample_above_threshold`` with ``svt_noise``,
    the calibration ``noisy_btls`` uses."""
    rng, n = np.random.default_rng(7), 40
    X, y, w, g = np.zeros((n, 2)), np.ones(n), np.array([1.0, 0.0]), np.array([0.0, 1e-3])
    normaliser = sampling_rate * n
    q_d, sensitivity = _armijo_queries(X, y, w, g, normaliser)
    budget = {"epsilon": epsilon} if noise == "laplace" else {"rho": rho}
    calibration = svt_noise(noise, sensitivity=sensitivity, **budget)
    law_d = _svt_output_law(q_d, calibration)

    def records():
        for _ in range(candidates):
            z = np.array([rng.uniform(-15.0, 15.0), rng.choice([-1.0, 1.0]) * 10 ** rng.uniform(2, 6)])
            q_z, _ = _armijo_queries(np.vstack([X, z]), np.append(y, 1.0), w, g, normaliser)
            yield z, q_z, (1.0 - sampling_rate) * law_d + sampling_rate * _svt_output_law(q_z, calibration)

    z, q_z = _worst_record(law_d, records(), DELTA)
    _check_only_z_moves_queries(np.vstack([X, z]), np.append(y, 1.0), w, g, normaliser, sampling_rate, (q_d, q_z))
    claim = _check_noisy_btls_charge(
        make_problem(X, y, loss="logistic", reg=0.001),
        w,
        g,
        noise,
        epsilon if noise == "laplace" else rho,
        calibration,
        normaliser=normaliser,
        sampling_rate=sampling_rate,
    )

    def runs(queries: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
        if count == 0:
            return np.empty(0, dtype=np.int64)
        return sample_above_threshold(queries, 0.0, sensitivity=sensitivity, rng=rng, size=count, noise=noise, **budget)

    def sample(side: int, n_runs: int, rng: np.random.Generator) -> np.ndarray:
        if side == 0:
            return runs(q_d, n_runs, rng)
        in_batch = rng.random(n_runs) < sampling_rate
        out = np.empty(n_runs, dtype=np.int64)
        out[in_batch] = runs(q_z, int(in_batch.sum()), rng)
        out[~in_batch] = runs(q_d, int((~in_batch).sum()), rng)
        return out

    return Target(
        f"dp_blsgd_poisson_btls_{noise}",
        claim,
        DELTA,
        sample,
        pair=f"D: 40 zero rows; D′ = D ∪ {{z}}, z the worst of {candidates} records; z ∈ B w.p. q = "
        f"{sampling_rate:g}, L = qn̄, Δ_q = C_obj/L",
        proof=("chen_lee Lemma 5 / Thm 2" if noise == "laplace" else f"chen_lee Thm 3, ρ_BT = {rho:g}")
        + ", Poisson amplification (chen_lee Lemma 4), RDP → (ε, δ)",
    )


def _check_only_z_moves_queries(X, y, w, g, normaliser: float, sampling_rate: float, queries, draws: int = 16) -> None:
    """On Poisson subsamples B of D′ (z the last row), with and without z, the Armijo queries are q_z if z ∈ B,
    else q_D (up to rounding: 10⁻¹² Δ_q)."""
    rng, seen = np.random.default_rng(1), set()
    for _ in range(draws):
        batch = poisson_subsample(X.shape[0], sampling_rate, rng)
        got, sensitivity = _armijo_queries(X, y, w, g, normaliser, batch)
        has_z = int(batch.size > 0 and batch[-1] == X.shape[0] - 1)
        seen.add(has_z)
        if not np.allclose(got, queries[has_z], rtol=0.0, atol=1e-12 * sensitivity):
            raise AssertionError(f"the queries of the subsample {batch} depend on more than z's membership")
    if seen != {0, 1}:
        raise AssertionError(f"{draws} subsamples did not cover both z ∈ B and z ∉ B")


# ------------------------------------------------------------------------------------------ DP-NAG
def dp_nag_step_target(epsilon: float = 1.0, *, n: int = 10, batch: int = 5, l1_clip: float = 1.0) -> Target:
    """One DP-NAG noisy gradient (kuru_acc eq. 4.1, kuru.py ``_noisy_gradient``): the mean of L1-clipped
    per-example gradients of a size-m batch drawn without replacement from n, plus Lap(b), released
    by ``subsampled_laplace_mechanism`` with b from ``uniform_noise`` (ε for T = 1). Replace-one pair:
    record 0 is (x = 100, y = 1) in D and (x = −100, y = 1) in D′, its clipped gradient −C vs +C (the
    full S₁ = 2C of eq. 3.2); the other records have x = 0 (zero gradient), so the batch enters only
    through [record 0 ∈ B] ~ Bernoulli(m/n). Claim: ε_t = ln(1 + (m/n)(e^{S₁/(bm)} − 1)) (eq. 3.3,
    Balle, Barthe & Gaboardi 2018 Thm 9)."""
    X = np.zeros((n, 1))
    sums = []
    for x0 in (100.0, -100.0):
        X[0, 0] = x0
        problem = make_problem(X.copy(), np.ones(n), loss="logistic", reg=0.02)
        sums.append(float(problem.clipped_gradient_sum(np.zeros(1), np.array([0]), l1_clip, norm=1)[0]))
    assert sums == [-l1_clip, l1_clip], sums
    sensitivity = 2.0 * l1_clip / batch
    scale = float(schedules.uniform_noise(2.0 * l1_clip, epsilon, 1, n, batch)[0])
    claim = float(schedules.epsilon_per_iteration(2.0 * l1_clip, scale, n, batch))

    def sample(side: int, n_runs: int, rng: np.random.Generator) -> np.ndarray:
        mean = (rng.random(n_runs) < batch / n) * sums[side] / batch
        return subsampled_laplace_mechanism(
            mean,
            sensitivity=sensitivity,
            epsilon=sensitivity / scale,
            sample_size=batch,
            population=n,
            rng=rng,
            ledger=ample_ledger(),
        )

    return Target(
        "dp_nag_step",
        claim,
        0.0,
        sample,
        pair=f"replace-one: record 0's L1-clipped gradient −C vs +C (C = {l1_clip:g}), others zero; "
        f"m = {batch} of n = {n}",
        proof="kuru_acc eq. 3.3 (Laplace, WOR subsampling: Balle et al. 2018 Thm 9)",
    )


# ------------------------------------------------------------------------------------------ DDA
def dda_release_target(*, epsilon: float = 0.8, delta0: float = 0.01) -> Target:
    """One active node's release ζ = ĝ + N(0, σ²I) (liu_dda Alg. 1 line 7, ``noisy_subgradients``) with
    Theorem 1's σ (ι = 0.1, q = 10, T = 8000, L = 1: ε_t² = 0.2, the largest Theorem 1 allows). Pair:
    local datasets {(a, +1)} vs {(a, −1)}, ‖a‖ = L, at x = 0: ĝ = −a vs +a, ‖ĝ − ĝ′‖ = 2L, the
    sensitivity of Sec. 4.1, with the differing sample drawn (subsampling only amplifies). Claim:
    (ε_t, δ₀), ε_t = 2L√(2 log(2/δ₀))/σ (Lemma 4.1, eq. 16)."""
    sigma = theorem1_sigma(epsilon, delta0=delta0, iota=0.1, q=10, iterations=8000, lipschitz=1.0)
    claim = per_step_epsilon(sigma, lipschitz=1.0, delta0=delta0)

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return noisy_subgradients(
            [[1.0]], [1.0 if side == 0 else -1.0], np.zeros(n, dtype=int), np.zeros((n, 1)), sigma=sigma, rng=rng
        )[:, 0]

    return Target(
        "dda_release",
        claim,
        delta0,
        sample,
        pair="{(a, +1)} vs {(a, −1)}, ‖a‖ = L = 1, x = 0: ĝ = ∓a",
        proof="liu_dda Lemma 4.1 / eq. (16), Theorem 1's σ",
    )


# ------------------------------------------------------------------------------ output / objective perturbation
def _huber_pair(n: int = 4, reg: float = 1.0):
    """A 1-D replace-one pair for the Huberized hinge (h = 1/2): x = (1, 0, …, 0), y₀ = +1 vs −1. The
    zero rows have zero gradient; the first record's gradient is ∓1 (|ℓ′| = 1 = G, the bound both
    proofs use) while its margin stays below 1 − h."""
    X = np.zeros((n, 1))
    X[0, 0] = 1.0
    return [make_problem(X, np.array([y0] + [1.0] * (n - 1)), loss="huber_hinge", reg=reg) for y0 in (1.0, -1.0)]


def output_perturbation_target(epsilon: float = 1.0, delta: float = DELTA) -> Target:
    """OUTPERT-GD (output_perturbation.py): T = 50 gradient steps, then ``gaussian_mechanism`` with the
    σ of ``gaussian_noise_for_budget(ε, δ)`` and Δ_T = ``OutPertGD.sensitivity`` (eq. GD-2). On the
    Huber pair of :func:`_huber_pair` each step is the affine contraction w ↦ (1 − ημ)w ± η/n, so
    |w_T − w′_T| = (2ηG/n)Σ_t(1 − ημ)^t = Δ_T exactly: the recurrence (GD-1) is tight (Zhang et al.
    2017 Sec. 3; Hardt, Recht & Singer 2016 Lemma 3.7). Claim: (ε, δ) of the RDP calibration."""
    method = OutPertGD(iterations=50)
    problems = _huber_pair()
    sensitivity = method.sensitivity(problems[0])
    lipschitz = public_constants(method.name, problems[0], method.row_bound)[0]
    outputs = [
        float(gradient_descent(p, step=method.step(p), iterations=method.iterations, lipschitz=lipschitz)[0])
        for p in problems
    ]
    if not math.isclose(abs(outputs[0] - outputs[1]), sensitivity, rel_tol=1e-9):
        raise AssertionError(f"the pair should attain Δ_T = {sensitivity}, got {abs(outputs[0] - outputs[1])}")
    sigma = gaussian_noise_for_budget(epsilon, delta)

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return gaussian_mechanism(
            np.full(n, outputs[side]),
            sensitivity=sensitivity,
            noise_multiplier=sigma,
            rng=rng,
            ledger=ample_ledger("rdp", delta),
        )

    return Target(
        "output_perturbation_gd",
        epsilon,
        delta,
        sample,
        pair=f"1-D Huber hinge, x₀ = 1, y₀ = +1 vs −1, μ = 1: |w_T − w′_T| = Δ_T = {sensitivity:.4g}",
        proof="output perturbation, Zhang et al. 2017 Sec. 3 (Δ_T of eq. GD-2), Gaussian mechanism (RDP)",
    )


def _perturbed_minimisers(problem, extra_reg: float, b: np.ndarray) -> np.ndarray:
    """argmin_w F(w) + (Δ/2n)w² + bw/n for every b, 1-D, exactly: J′(w) = g(w) + b/n with g increasing
    and, for the Huberized hinge, piecewise linear with kinks where a margin y_i x_i w is 1 ± h; so
    w* = g⁻¹(−b/n) is linear interpolation of g's values at the kinks (computed with the problem's
    own loss derivative). ObjPert.fit uses L-BFGS-B to gtol 1e-10; the theorem assumes the exact one."""
    n, signed = problem.n, problem.y * problem.X[:, 0]
    signed = signed[signed != 0]  # rows with x = 0 have zero gradient
    curvature = problem.reg + extra_reg / n
    h = problem.loss.h
    reach = (np.abs(b).max() + np.abs(signed).sum()) / (n * curvature) + 1.0  # |w*| ≤ (|b| + Σ|x_i|)/(n·curvature)
    kinks = np.concatenate([[(1.0 - h) / s, (1.0 + h) / s] for s in signed] + [[-reach, reach]])
    points = np.unique(kinks)
    g = curvature * points + sum(problem.loss.derivative(points * s) * s for s in signed) / n
    return np.interp(-b / n, g, points)


def objective_perturbation_target(epsilon: float = 1.0, delta: float = DELTA) -> Target:
    """ObjPert (objpert.py; Kifer, Smith & Thakurta 2012 Thm 2): the exact minimiser of
    F(w) + (Δ/2n)‖w‖² + bᵀw/n with Δ = 2λ/ε and b from ``objective_perturbation_noise``. Pair: the Huber
    pair of :func:`_huber_pair` (ζ = 1, λ = 1/(2h) = 1): the differing record's gradients are −1 and +1
    wherever its margin is below 1 − h, the ‖∇ℓ(z) − ∇ℓ(z′)‖ = 2ζ of the proof's density-ratio
    bound, with zero curvature there. The b of n runs are one call with dim = n (its entries are i.i.d.)."""
    problems = _huber_pair(reg=0.01)
    extra_reg = 2.0 * problems[0].loss.smoothness / epsilon  # ObjPert.fit: Δ = 2λ/ε, λ = sup ℓ″ for ‖x‖ ≤ 1

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        b = objective_perturbation_noise(
            n,
            gradient_bound=problems[side].loss.lipschitz,
            epsilon=epsilon,
            delta=delta,
            rng=rng,
            ledger=ample_ledger("approx", 0.5),
        )
        return _perturbed_minimisers(problems[side], extra_reg, b)

    return Target(
        "objective_perturbation",
        epsilon,
        delta,
        sample,
        pair="1-D Huber hinge (h = 1/2), x₀ = 1, y₀ = +1 vs −1, μ = 0.01",
        proof="Kifer, Smith & Thakurta 2012 Thm 2 (Chaudhuri et al. 2011)",
    )


# ------------------------------------------------------------------------------------------ kusner_bo
def _bo_problem(seed: int = 0, n: int = 16) -> BOProblem:
    rng = np.random.default_rng(seed)
    points = rng.random((n, 2))
    gains = 0.8 + 0.1 * np.sin(3 * points).sum(axis=1)
    hyperparameters = [{"lambda": float(10 ** (-2 + 2 * p[0]))} for p in points]
    return BOProblem(gains, points, hyperparameters, validation_size=1000, row_norm=1.0)


def _bo_release(problem: BOProblem, eps_total: float, delta_total: float, method=None):
    method = KusnerAlg1(iterations=4, gamma_t=1.0) if method is None else method
    ledger = ample_ledger("approx", 0.5)
    return method.release(problem, epsilon=eps_total, delta=delta_total, rng=np.random.default_rng(0), ledger=ledger)


def _bo_value_pair(method, eps_total: float, delta_total: float):
    """(problem seed, D's problem, D's release, (v*, v*′)) for the first problem seed (of 20) on which adding
    the release's own Δ to the gains on GP-UCB's path gives v*′ − v* = Δ exactly (GP-UCB is shift-sensitive,
    so D′'s run may take another path)."""
    for seed in range(20):
        base = _bo_problem(seed)
        first = _bo_release(base, eps_total, delta_total, method)
        neighbour = BOProblem(base.gains.copy(), base.points, base.hyperparameters, base.validation_size, base.row_norm)
        neighbour.gains[first.run.indices] += first.info["value_sensitivity"]
        best = (first.best_observed, _bo_release(neighbour, eps_total, delta_total, method).best_observed)
        if math.isclose(best[1] - best[0], first.info["value_sensitivity"], rel_tol=1e-12):
            return seed, base, first, best
    raise AssertionError(f"{method.name}: no problem seed gives v*′ − v* = Δ")


def _bo_value_target(name: str, method, eps_total: float, delta_total: float, proof: str) -> Target:
    """The value release of ``method`` (``release`` → ``laplace_mechanism``) on the pair of
    :func:`_bo_value_pair`: Δ, ε and δ per release and v*, v*′ come from ``release`` itself, and a probe
    checks on ``release`` that its value is v* plus one Lap(Δ/ε) draw; the n runs then go through
    ``laplace_mechanism`` with the release's failure_probability δ."""
    seed, base, first, best = _bo_value_pair(method, eps_total, delta_total)
    sensitivity, eps, dlt = (first.info[k] for k in ("value_sensitivity", "eps_release", "delta_release"))
    probe_additive_release(
        lambda rng: (
            method.release(
                base, epsilon=eps_total, delta=delta_total, rng=rng, ledger=ample_ledger("approx", 0.5)
            ).value
        ),
        best[0],
        "laplace",
        (0.0, sensitivity / eps),
    )

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return laplace_mechanism(
            np.full(n, best[side]),
            sensitivity=sensitivity,
            epsilon=eps,
            rng=rng,
            ledger=ample_ledger("approx", 0.5),
            failure_probability=dlt,
        )

    return Target(
        name,
        eps,
        dlt,
        sample,
        pair=f"gains + Δ on GP-UCB's path (problem seed {seed}): v*′ − v* = Δ = {sensitivity:.4g}",
        proof=proof,
    )


def bo_value_target(eps_total: float = 2.0, delta_total: float = DELTA) -> Target:
    """kusner_bo Alg. 1's ṽ = max_t v_t + Lap(Δ_v/ε) (KusnerAlg1.release, per release (ε/2, δ/2)). Under
    the sensitivity assumption (Thm 3, which holds w.p. 1 − δ under Assumption 1) |v* − v*′| ≤ Δ_v; the
    pair attains it: D′'s gains are D's plus Δ_v on GP-UCB's path, as in tests/bo/test_kusner.py
    (:func:`_bo_value_pair`)."""
    return _bo_value_target(
        "bo_v_tilde",
        KusnerAlg1(iterations=4, gamma_t=1.0),
        eps_total,
        delta_total,
        "kusner_bo Thm 3 / Cor. 2 (under its sensitivity assumption)",
    )


def bo_alg2_value_target(eps_total: float = 2.0, delta_total: float = DELTA) -> Target:
    """kusner_bo Alg. 2's f̃ = max_{2≤t≤T} f(λ_t) + Lap(Δ_f/ε), Δ_f = A e^{−2τ/(log 2)^{d/4}} + c (Thm 5,
    Cor. 3; KusnerAlg2.release, per release (ε/2, δ/2), T = 4, A = τ = 1). Under Thm 5's sensitivity bound
    (w.p. 1 − δ under Assumption 1 and de Freitas et al.'s) |f* − f*′| ≤ Δ_f; the pair attains it with D′'s
    gains D's plus Δ_f on GP-UCB's path (:func:`_bo_value_pair`)."""
    return _bo_value_target(
        "bo_f_tilde",
        KusnerAlg2(iterations=4),
        eps_total,
        delta_total,
        "kusner_bo Thm 5 / Cor. 3 (under its sensitivity assumption)",
    )


def bo_alg3_value_target(epsilon: float = 1.0) -> Target:
    """kusner_bo Alg. 3's f̃_L = max_t f_V(w_{λ_t}) + Lap(Δ/ε), Δ = min{g*/m, L/(mλ_min)} +
    (λ_max − λ_min)L/(λ_maxλ_min) (Thm 7, Cor. 4: ε-DP under Assumption 2; KusnerAlg3.release, T = 4, one
    ε-DP release, m = 1000, L = 1, 16 candidate λ in [10⁻², 1]). Thm 7 bounds |f*_L − f*′_L| ≤ Δ for every neighbouring V;
    the pair is that bound's edge, D′'s gains D's plus Δ on GP-UCB's path (:func:`_bo_value_pair`) — whether
    real validation sets reach it is Thm 7's business, not the audit's."""
    return _bo_value_target(
        "bo_f_tilde_l", KusnerAlg3(iterations=4), epsilon, DELTA, "kusner_bo Thm 7 / Cor. 4 (Assumption 2)"
    )


def bo_lambda_target(eps_total: float = 2.0, delta_total: float = DELTA) -> Target:
    """kusner_bo Alg. 1's λ̃ ∝ exp(εμ_T(λ)/(2Δ)), Δ = 2√β_{T+1} + c (Thm 1, Cor. 1), through
    ``exponential_mechanism`` with failure_probability δ/2. Thm 1 bounds |μ_T(λ) − μ′_T(λ)| ≤ Δ for
    every λ (w.p. 1 − δ under Assumption 1); the pair takes μ_T from a real GP-UCB run and
    μ′_T = μ_T − Δ except at the least likely candidate, where μ′_T = μ_T + Δ — the exponential
    mechanism's worst case (McSherry & Talwar 2007) within that assumption."""
    release = _bo_release(_bo_problem(), eps_total, delta_total)
    mean, sensitivity = release.run.mean, release.info["lambda_sensitivity"]
    target = int(np.argmin(mean))
    neighbour = mean - sensitivity
    neighbour[target] = mean[target] + sensitivity
    eps, dlt = eps_total / 2.0, delta_total / 2.0
    draws = [
        exponential_sampler(u, sensitivity=sensitivity, epsilon=eps, failure_probability=dlt) for u in (mean, neighbour)
    ]
    return Target(
        "bo_lambda_tilde",
        eps,
        dlt,
        lambda side, n, rng: draws[side](n, rng),
        pair=f"μ_T of GP-UCB vs μ_T ∓ Δ (+Δ at the least likely λ), Δ = {sensitivity:.4g}, |Λ| = 16",
        proof="kusner_bo Thm 1 / Cor. 1 (under its sensitivity assumption)",
    )
