"""Positive controls: DELIBERATELY BROKEN mechanisms that claim a guarantee they do not have.

Every control here must come out as a violation (the CLI reports "caught"; "MISSED" fails the run):
they show the auditor has the power to catch the mistakes it exists for. The broken samplers are
small local functions, clearly labelled; none of them is used anywhere else in dpbench — except
:func:`numpy_laplace_float_hole`, which is dpbench's own ``laplace_mechanism`` under the default numpy
sampler, broken in floating point (Mironov 2012; the reason for ``privacy.sampler=secure``). Three run an
algorithm's own code path with its calibration broken from outside (the algorithm is untouched):
``PrivGene.fit`` through a subclass whose mutations outrun the sensitivity it charges, han_pwa's
``PWALaplaceData.release`` told a b_max four times too small, and liu_dda's release priced as one of q
samples drawn at random while it always uses the replaced one. Two publish a count that follows the
mechanism's private randomness beside its release: a DP-SGD step's batch size and repeat-and-select's
number of trials K (the real targets' samplers, with the count appended to the output).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dpbench.algorithms.privgene import PrivGene
from dpbench.algorithms.registry import make_algorithm
from dpbench.audit.algorithm_targets import dp_sgd_step_target
from dpbench.audit.core import Target
from dpbench.audit.fit_targets import (
    dda_paper_release_target,
    dda_rdp_release_target,
    privgene_target,
    pwa_laplace_data_target,
)
from dpbench.audit.float_attack import numpy_laplace_producible
from dpbench.audit.targets import (
    DELTA,
    ample_ledger,
    claimed_epsilon,
    laplace_target,
    training_count_target,
)
from dpbench.audit.tuning_target import TuningPair, repeat_and_select_target
from dpbench.privacy.events import GaussianEvent, PoissonSampledEvent
from dpbench.privacy.mechanisms import gaussian_mechanism, laplace_mechanism
from dpbench.privacy.published import (
    gaussian_fixed_batch_priced_as_poisson,
    subsampled_laplace_std_as_scale,
)
from dpbench.problems import make_problem

__all__ = [
    "dda_paper_sigma",
    "dda_sample_not_drawn",
    "dp_agd_authors_noisy_min",
    "gaussian_step_unclipped",
    "kuru_authors_laprnd",
    "laplace_halved_noise",
    "laplace_l2_calibrated",
    "laplace_noise_reused",
    "numpy_laplace_float_hole",
    "privgene_wide_mutation",
    "publish_batch_size",
    "publish_realised_n",
    "publish_trials",
    "pwa_laplace_data_b_max_understated",
    "svt_lyu_alg5",
    "svt_lyu_alg6",
]


def laplace_halved_noise(epsilon: float = 1.0) -> Target:
    """BROKEN: ``laplace_mechanism`` with Lap(Δ/(2ε)) noise, claimed ε-DP (it is 2ε-DP)."""
    return laplace_target(epsilon, mechanism_epsilon=2.0 * epsilon, name="control_laplace_halved_noise")


def gaussian_step_unclipped(noise_multiplier: float = 1.5, clip: float = 4.0) -> Target:
    """BROKEN: a full-batch DP-SGD step with clipping removed (clip = +inf in ``clipped_gradient_sum``)
    but noise and claim still calibrated to C: D′ = D ∪ {z} with ‖∇ℓ_z‖ ≈ 9C, so the Gaussian
    mechanism's sensitivity assumption fails by a factor of 9."""
    X = np.zeros((20, 3))
    X[0] = (60.0, -40.0, 20.0)
    problem = make_problem(X, np.ones(20), loss="logistic", reg=0.0)
    raw = problem.clipped_gradient_sum(np.zeros(3), np.array([0]), np.inf)  # no clipping: the broken part
    claim = claimed_epsilon(GaussianEvent(noise_multiplier), DELTA)

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        sums = np.zeros((n, 3)) + (raw if side == 1 else 0.0)
        return gaussian_mechanism(
            sums, sensitivity=clip, noise_multiplier=noise_multiplier, rng=rng, ledger=ample_ledger("rdp")
        )

    return Target(
        "control_gaussian_step_unclipped",
        claim,
        DELTA,
        sample,
        pair=f"D: zero-gradient rows; D′ = D ∪ {{z}}, ‖∇ℓ_z‖ = {np.linalg.norm(raw):.3g} ≫ C = {clip:g}, unclipped",
        proof="(broken) Gaussian mechanism with the sensitivity bound violated",
    )


def _encode(bits: np.ndarray) -> np.ndarray:
    """The ⊤/⊥ answer vector of each run as one integer (bit i = answer i)."""
    return bits.astype(np.int64) @ (1 << np.arange(bits.shape[1], dtype=np.int64))


def _broken_svt_lyu_alg5(q: np.ndarray, rng: np.random.Generator, n: int, epsilon: float) -> np.ndarray:
    """DELIBERATELY BROKEN — Lyu, Su & Li (VLDB 2017) Alg. 5 (Stoddard et al. 2014): ρ = Lap(Δ/ε₁),
    ε₁ = ε/2, NO noise on the queries, ⊤/⊥ for every query (no cutoff). Claimed ε-DP; not ε′-DP for any ε′."""
    rho = rng.laplace(0.0, 1.0 / (epsilon / 2.0), size=(n, 1))
    return _encode(q[None, :] >= rho)


def _broken_svt_lyu_alg6(q: np.ndarray, rng: np.random.Generator, n: int, epsilon: float) -> np.ndarray:
    """DELIBERATELY BROKEN — Lyu, Su & Li (VLDB 2017) Alg. 6 (Chen et al. 2015): ρ = Lap(Δ/ε₁), ν_i = Lap(Δ/ε₂),
    ε₁ = ε₂ = ε/2, but ⊤/⊥ for EVERY query (no cutoff after the first ⊤): each extra ⊤ leaks more.
    Claimed ε-DP; its privacy loss grows with the number of queries (not ε′-DP for any ε′)."""
    rho = rng.laplace(0.0, 1.0 / (epsilon / 2.0), size=(n, 1))
    nu = rng.laplace(0.0, 1.0 / (epsilon / 2.0), size=(n, q.size))
    return _encode(q[None, :] + nu >= rho)


def svt_lyu_alg5(epsilon: float = 1.0) -> Target:
    """Alg. 5 on q(D) = (0, 1), q(D′) = (1, 0), Δ = 1, T = 0: the answer (⊥, ⊤) needs 0 < ρ ≤ 1 on D and is
    impossible on D′."""
    queries = (np.array([0.0, 1.0]), np.array([1.0, 0.0]))
    return Target(
        "control_svt_lyu_alg5",
        epsilon,
        0.0,
        lambda side, n, rng: _broken_svt_lyu_alg5(queries[side], rng, n, epsilon),
        pair="q(D) = (0, 1), q(D′) = (1, 0), Δ = 1, T = 0",
        proof="(broken) Lyu, Su & Li 2017 Alg. 5",
    )


def svt_lyu_alg6(epsilon: float = 1.0, m: int = 5) -> Target:
    """Alg. 6 on 2m queries: q(D) = (0^m, 1^m), q(D′) = (1^m, 0^m), Δ = 1, T = 0 (Lyu et al. Sec. 3): the
    answers (⊥^m, ⊤^m) are likelier under D by a factor that grows with m."""
    queries = (np.repeat([0.0, 1.0], m), np.repeat([1.0, 0.0], m))
    return Target(
        "control_svt_lyu_alg6",
        epsilon,
        0.0,
        lambda side, n, rng: _broken_svt_lyu_alg6(queries[side], rng, n, epsilon),
        pair=f"q(D) = (0^{m}, 1^{m}), q(D′) = (1^{m}, 0^{m}), Δ = 1, T = 0",
        proof="(broken) Lyu, Su & Li 2017 Alg. 6",
    )


def laplace_l2_calibrated(epsilon: float = 1.0, d: int = 16) -> Target:
    """BROKEN: per-coordinate ``laplace_mechanism`` calibrated to the L2 sensitivity (Δ₂ = 1) of a d-vector
    whose neighbours differ by (1/√d)·𝟏: ‖·‖₂ = 1 but ‖·‖₁ = √d = 4, so it is 4ε-DP, claimed ε."""
    shift = np.full(d, 1.0 / np.sqrt(d))

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        values = np.zeros((n, d)) + (shift if side == 1 else 0.0)
        return laplace_mechanism(values, sensitivity=1.0, epsilon=epsilon, rng=rng, ledger=ample_ledger())

    return Target(
        "control_laplace_l2_calibrated",
        epsilon,
        0.0,
        sample,
        pair=f"f(D) = 0, f(D′) = 𝟏/√{d} in R^{d}: ‖Δf‖₂ = 1, ‖Δf‖₁ = {np.sqrt(d):g}",
        proof="(broken) Laplace mechanism needs the L1 sensitivity",
    )


def _broken_reused_noise(values: np.ndarray, rng: np.random.Generator, epsilon: float) -> np.ndarray:
    """DELIBERATELY BROKEN: releases q₁ + L and q₂ + L with ONE Laplace draw L ~ Lap(1/ε) per run
    (``laplace_mechanism`` on a zero, then reused), claimed ε-DP for the pair."""
    noise = laplace_mechanism(
        np.zeros(values.shape[0]), sensitivity=1.0, epsilon=epsilon, rng=rng, ledger=ample_ledger()
    )
    return values + noise[:, None]


def laplace_noise_reused(epsilon: float = 1.0) -> Target:
    """Two queries of sensitivity 1 that both change, q(D) = (0, 0), q(D′) = (1, −1), released with the same
    noise draw: the difference of the two releases is noise-free (0 vs 2), so the privacy loss is
    unbounded (independent noise would give 2ε); claimed ε."""
    values = (np.zeros(2), np.array([1.0, -1.0]))
    return Target(
        "control_laplace_noise_reused",
        epsilon,
        0.0,
        lambda side, n, rng: _broken_reused_noise(np.zeros((n, 2)) + values[side], rng, epsilon),
        pair="q(D) = (0, 0), q(D′) = (1, −1), one Laplace draw added to both",
        proof="(broken) noise reuse",
    )


def numpy_laplace_float_hole(epsilon: float = 1.0) -> Target:
    """BROKEN in floating point: ``laplace_mechanism`` under the numpy sampler, f(D) = 0 vs f(D′) = 1, claimed
    ε-DP. The statistic is whether an output could have been produced on f(D′) = 1
    (:func:`~dpbench.audit.float_attack.numpy_laplace_producible`): about 82% of D's outputs cannot, every
    one of D′'s can, so P_D[not producible] ≈ 0.82 against 0 (Mironov 2012)."""
    base = laplace_target(epsilon, name="control_numpy_laplace_float_hole")
    return dataclasses.replace(
        base,
        statistic=lambda y: numpy_laplace_producible(y, 1.0, 1.0 / epsilon).astype(np.float64),
        pair="f(D) = 0, f(D′) = 1; T(y) = [y is a float output of 1 + numpy's Laplace draw]",
        proof="(broken in floating point) numpy Laplace sampler, Mironov CCS 2012",
    )


class _WideMutationPrivGene(PrivGene):
    """DELIBERATELY BROKEN PrivGene: mutates by 16δ_t while ``fit()`` still computes Δ'_t for moves of δ_t
    (l1_diameter = 2δ_t), so a record can move the fitness differences by far more than Δ'_t."""

    def _mutants(self, children: np.ndarray, delta: float, rng: np.random.Generator) -> np.ndarray:
        return super()._mutants(children, 16.0 * delta, rng)


def privgene_wide_mutation(epsilon: float = 1.0) -> Target:
    """BROKEN: ``PrivGene.fit`` (subclass :class:`_WideMutationPrivGene`) on the ``privgene`` pair with one record
    against, claimed ε as the ledger records: the candidates are ±8 and a hinge record moves their fitness
    difference by 9 = 9Δ', so with the exponent ε/(2Δ') P_D[+8] = 1/(1 + e^{4.5}) vs P_D′[+8] = 1/2."""
    base = privgene_target(
        epsilon, method=_WideMutationPrivGene(), against=1, max_n=5_000, name="control_privgene_wide_mutation"
    )
    return dataclasses.replace(base, proof="(broken) PrivGene whose mutations outrun the Δ' it charges")


def pwa_laplace_data_b_max_understated(epsilon: float = 1.0) -> Target:
    """BROKEN: ``PWALaplaceData.release`` on the ``pwa_laplace_data`` pair, the offsets moving by 1 but the problem
    declaring b_max = 1/4: noise for √m·b_max/4, claimed ε (4ε-DP for this pair)."""
    base = pwa_laplace_data_target(
        epsilon, declared_b_max=0.25, max_n=50_000, name="control_pwa_laplace_data_b_max_understated"
    )
    return dataclasses.replace(base, proof="(broken) vector Laplace on b calibrated to a b_max 4× too small")


def dda_sample_not_drawn(epsilon: float = 1.0) -> Target:
    """BROKEN: liu_dda's node release with dp_dda's ``noise=rdp`` σ for one of q = 50 samples drawn at random
    (amplified by sampling), claimed ε as ``DPDDA.fit`` charges it, but the node always releases the replaced
    sample: the Gaussian mechanism without the amplification it was priced with."""
    base = dda_rdp_release_target(epsilon, q=50, subsample=False, name="control_dda_sample_not_drawn")
    return dataclasses.replace(base, proof="(broken) subsampling priced but not done")


def dda_paper_sigma(epsilon: float = 1.0) -> Target:
    """BROKEN as published: liu_dda's node release at Theorem 1's printed σ under ``fidelity=paper``
    (:func:`~dpbench.dda.noise.sec5_sigma`), claimed (ε, 10⁻⁵) as ``DPDDA.fit`` charges it in that mode:
    at q = 50, T = 1 (below the theorem's condition T ≥ 5q²ε²/4, as Sec. 5's 3-epoch runs are), the replaced
    sample, used with probability 1/q, moves the release by 7.7σ (:func:`dda_paper_release_target`)."""
    return dda_paper_release_target(epsilon, q=50, name="control_dda_paper_sigma")


def dp_agd_authors_noisy_min(epsilon: float = 1.0, *, candidates: int = 21, max_n: int = 100_000) -> Target:
    """BROKEN as published: DP-AGD's noisy min under ``fidelity=authors_code`` (``DPAGD._select``, i.e.
    :func:`~dpbench.privacy.published.noisy_min_exponential_subtracted`, ppmlguy/DP-AGD's
    ``noisy_max(bmin=True)``), claimed ε_nmax-DP as that code charges it. Monotone pair of 21 candidate
    steps: on D every clipped-loss score is equal; D′ = D ∪ {z} where z's clipped loss is 0 at step 0 and
    C_obj at every other step, so on D′ step 0 scores C_obj below the rest. The output is the chosen
    index; P_D[0] = 1/21, P_D′[0] ≈ 1 − e^{−ε}·20/21 ≈ 0.65: ln ≈ 2.6 where ε-DP allows 1. ``max_n``:
    one selection per call (~15 µs)."""
    method = make_algorithm("dp_agd", {"fidelity": "authors_code"})
    clip = method.clip_obj
    scores = (np.zeros(candidates), np.r_[0.0, np.full(candidates - 1, clip)])

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        ledger = ample_ledger("pure")
        return np.array([method._select(scores[side], epsilon, rng, ledger) for _ in range(n)], dtype=float)

    return Target(
        "control_dp_agd_authors_noisy_min",
        epsilon,
        0.0,
        sample,
        max_n=max_n,
        note="one selection per call",
        pair=f"{candidates} candidate steps, equal clipped-loss scores on D; D′ adds a record with clipped "
        f"loss 0 at step 0 and C_obj = {clip:g} at the others",
        proof="(broken as published) DP-AGD's public noisy min adds Exp noise to the scores, Lee & Kifer 2018 code",
    )


def kuru_authors_laprnd(epsilon: float = 2.0) -> Target:
    """BROKEN as published: kuru_acc's noisy gradient as the authors' MATLAB draws it
    (:func:`~dpbench.privacy.published.subsampled_laplace_std_as_scale`, ``fidelity=authors_code``:
    ``laprnd`` reads its scale argument b as a standard deviation, so the noise is Lap(b/√2)), charged
    ε for Lap(b = Δ₁/ε). Full batch (m = n): f(D) = 0, f(D′) = Δ₁ = 1; the true loss is √2·ε. Claimed
    ε = 2, so the true 2.83 clears the claim by the margin the suite asks of a control."""

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return subsampled_laplace_std_as_scale(
            np.full(n, float(side)),
            sensitivity=1.0,
            epsilon=epsilon,
            sample_size=1,
            population=1,
            rng=rng,
            ledger=ample_ledger("pure"),
        )

    return Target(
        "control_kuru_authors_laprnd",
        epsilon,
        0.0,
        sample,
        pair="f(D) = 0, f(D′) = 1 = Δ₁, one coordinate, m = n",
        proof="(broken as published) laprnd.m draws Lap(b/√2) for a charge of Lap(b), kuru_acc code",
    )


def dp_sgd_authors_fixed_batch(
    noise_multiplier: float = 1.2, delta: float = DELTA, *, rows: int = 50, batch: int = 49
) -> Target:
    """BROKEN as published: a DP-SGD step as the public DP-AGD code takes it under ``fidelity=authors_code``
    (:func:`~dpbench.privacy.published.gaussian_fixed_batch_priced_as_poisson`): a batch of exactly b rows
    drawn without replacement, charged PoissonSampledEvent(b/n, GaussianEvent(σ)). Add/remove pair: D holds
    n = 50 rows whose clipped gradients are −C, D′ adds one with +C, b = 49, σ = 1.2. On D the batch sum is
    −bC; on D′ the new row enters with probability b/(n + 1) and displaces one, so the sum moves by 2C.
    Claimed the Poisson price at D's rate q = b/n (the larger of the two sides' rates), which assumes a move
    of C: (3.82, 10⁻⁵); N = 10⁶ draws a side give ε̂ ≥ 5.37."""
    clip = 1.0

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        batch_sum = np.full(n, -batch * clip)
        if side:
            batch_sum += np.where(rng.random(n) < batch / (rows + 1), 2.0 * clip, 0.0)
        return gaussian_fixed_batch_priced_as_poisson(
            batch_sum,
            sensitivity=clip,
            noise_multiplier=noise_multiplier,
            batch_size=batch,
            population=rows,
            rng=rng,
            ledger=ample_ledger("rdp", delta),
        )

    claim = claimed_epsilon(PoissonSampledEvent(batch / rows, GaussianEvent(noise_multiplier)), delta)
    return Target(
        "control_dp_sgd_authors_fixed_batch",
        claim,
        delta,
        sample,
        pair=f"D: {rows} rows with clipped gradient −C; D′ adds one with +C; a batch of b = {batch} drawn "
        "without replacement",
        proof="(broken as published) a fixed-size batch priced as Poisson sampling, DP-AGD code's dpsgd_ma",
    )


def publish_batch_size(noise_multiplier: float = 1.5, sampling_rate: float = 0.25, others: int = 4) -> Target:
    """BROKEN as a release: the ``dp_sgd_step`` target (DP-SGD's own Poisson sampler and Gaussian release, priced
    as the ledger prices one PoissonSampledEvent(q, GaussianEvent(σ))) with the batch size |B| appended — what a
    row's ``grad_evals`` sums over the steps. Given |B| = k on D′, z is in the batch with probability k/(n + 1)
    instead of q; with D = 4 zero-gradient rows, a batch of all 5 rows (probability q⁵ ≈ 10⁻³ ≫ δ) can only be
    drawn on D′, so the pair (noisy sum, |B|) is (ε, 10⁻⁵)-DP for no ε at all, where the step without |B| is
    (1.355, 10⁻⁵)-DP exactly (tests/privacy/test_published_counts.py) and (1.606, 10⁻⁵) is claimed."""
    base = dp_sgd_step_target(
        noise_multiplier=noise_multiplier,
        sampling_rate=sampling_rate,
        others=others,
        publish_batch_size=True,
        name="control_publish_batch_size",
    )
    return dataclasses.replace(base, proof="(broken) a Poisson-subsampled Gaussian step released with its batch size")


def publish_trials(epsilon: float = 4.0, mean: float = 300.0) -> Target:
    """BROKEN as a release: ``tuning_repeat_and_select`` with K appended to the released (y, score, setting), claimed
    the (ε, 10⁻⁵) of Papernot & Steinke's Thm 2, which holds for K hidden. Settings where publishing K is far
    outside the claim, chosen by the exact profiles of tests/privacy/test_published_counts.py: the logarithmic law
    (``trials_shape = 0``) with E[K] = 300 at ε = 4 (each trial a Gaussian at its whole ρ_T: ε = 2.19 with K hidden,
    19.18 with K published); ``validation_fraction = score_share = 0.05``, x pushes every trial's model DOWN by 1
    (so the held-out coin, which leaves D′'s model unmoved, cannot dilute the events that favour D′), and selection
    follows the model (slope 500). Knowing K, the best of K trials all pulled down by x is an order statistic of
    known rank: its lower tail composes over the K trials."""
    base = repeat_and_select_target(
        epsilon,
        DELTA,
        mean,
        0.0,
        score_share=0.05,
        pair=TuningPair(held_out=0.05, shift=-1.0, slope=500.0),
        publish_trials=True,
        name="control_publish_trials",
    )
    return dataclasses.replace(base, proof="(broken) repeat-and-select publishing K, which Thm 2 keeps hidden")


def publish_realised_n(epsilon: float = 0.05) -> Target:
    """BROKEN as a release: the ``training_count`` target's noisy ñ published beside the realised training size n
    (what ``n_train`` is, and what a row's n̄ was before the count was paid): under add/remove n itself tells D
    (100 records) from D′ (101) with certainty, so no ε covers the pair, where ñ alone is ε-DP."""
    base = training_count_target(epsilon)

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.column_stack([base.sample(side, n, rng), np.full(n, 100.0 + side)])

    return dataclasses.replace(
        base,
        name="control_publish_realised_n",
        sample=sample,
        proof="(broken) the Laplace count released with the realised count",
    )
