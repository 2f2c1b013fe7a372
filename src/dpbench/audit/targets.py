"""Audit targets for the privacy primitives (:mod:`dpbench.privacy`, :mod:`dpbench.pwa`, :mod:`dpbench.bo`).

Each builder returns a :class:`~dpbench.audit.core.Target` whose sampler calls the repository's own
mechanism, vectorised over runs: an array value of n entries through ``laplace_mechanism`` or
``gaussian_mechanism`` is n independent runs (noise is i.i.d. per coordinate); the ledger, charged
once per call, has an ample budget (it is not the thing audited). The neighbouring pair of each is
the worst case of the guarantee's proof, as its docstring says.
"""

from __future__ import annotations

import numpy as np

from dpbench.audit.core import Target
from dpbench.audit.probe import probe_argmax_mechanism
from dpbench.privacy.calibrate import gaussian_noise_for_budget
from dpbench.privacy.counts import noisy_count
from dpbench.privacy.ledger import Ledger
from dpbench.privacy.mechanisms import (
    exponential_mechanism,
    exponential_mechanism_probabilities,
    gaussian_mechanism,
    laplace_mechanism,
    report_noisy_max,
    sample_above_threshold,
)
from dpbench.privacy.samplers import use_sampler
from dpbench.privacy.sparse_vector import svt_noise
from dpbench.pwa.mechanisms import exponential_mcmc, laplace_solution
from dpbench.pwa.problem import PWAProblem

__all__ = [
    "above_threshold_target",
    "ample_ledger",
    "claimed_epsilon",
    "exponential_sampler",
    "exponential_target",
    "gaussian_target",
    "laplace_target",
    "pwa_exponential_mcmc_target",
    "pwa_vector_laplace_target",
    "report_noisy_max_target",
    "training_count_target",
]

DELTA = 1e-5
SVT_D = np.zeros(9)
SVT_D_PRIME = np.array([1.0] * 8 + [-1.0])
"""chen_lee App. B's worst case for AboveThreshold (Δ = 1): 8 queries that D′ has Δ higher (they
must stay below the threshold), then one that D has Δ higher (it must cross): output index 8."""


def ample_ledger(accountant: str = "pure", delta: float = DELTA) -> Ledger:
    """A ledger that can pay for any single release audited here (its spend is not what is audited)."""
    return Ledger(1e6, delta, accountant)


def claimed_epsilon(event, delta: float, accountant: str = "rdp") -> float:
    """The ε at ``delta`` a fresh ledger reports after one ``event``: the claim a run would make."""
    ledger = ample_ledger(accountant, delta)
    ledger.charge(event, label="audit.claim")
    return float(ledger.eps_spent)


def laplace_target(epsilon: float = 1.0, *, mechanism_epsilon: float | None = None, name: str = "laplace") -> Target:
    """``laplace_mechanism``: f(D) = 0, f(D′) = Δ = 1 (a count with one more record). Proof: Dwork,
    McSherry, Nissim & Smith 2006 (Dwork & Roth 2014 Thm 3.6); the density ratio is e^{ε|f(D)−f(D′)|/Δ},
    maximal (= e^ε on all of {x ≤ 0}) when the values differ by the full Δ. ``mechanism_epsilon``
    (default ``epsilon``) is the ε the noise is calibrated to: the controls halve the noise this way."""
    noise_eps = epsilon if mechanism_epsilon is None else mechanism_epsilon

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        value = np.full(n, float(side))
        return laplace_mechanism(value, sensitivity=1.0, epsilon=noise_eps, rng=rng, ledger=ample_ledger())

    return Target(
        name,
        epsilon,
        0.0,
        sample,
        pair="f(D) = 0, f(D′) = Δ = 1 (L1 sensitivity 1)",
        proof="Laplace mechanism, Dwork et al. 2006 / Dwork & Roth Thm 3.6",
    )


def training_count_target(epsilon: float = 0.05) -> Target:
    """The noisy training size a run under add/remove publishes (``n_public``), by
    :func:`~dpbench.privacy.counts.noisy_count` with its rounding and floor: n = 100 records on D, 101 on
    D′ (one record added). Proof: the Laplace mechanism (sensitivity 1), then post-processing;
    ε = 0.05, the share ``privacy.count_share`` takes of ε = 1."""

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return noisy_count(np.full(n, 100 + side), epsilon, rng, ample_ledger()).astype(float)

    return Target(
        "training_count",
        epsilon,
        0.0,
        sample,
        pair="n = 100 records on D, 101 on D′ (add/remove)",
        proof="Laplace mechanism on a count (sensitivity 1), rounding and the floor at 1 are post-processing",
    )


def gaussian_target(epsilon: float = 1.0, delta: float = DELTA) -> Target:
    """``gaussian_mechanism`` with the σ of ``gaussian_noise_for_budget(ε, δ)`` (the RDP calibration every
    Gaussian release of dpbench uses, Mironov 2017 + the tight conversion): f(D) = 0, f(D′) = Δ = 1,
    the full L2 sensitivity, on which the privacy-loss distribution is the worst one (chen_lee Lemma 1)."""
    sigma = gaussian_noise_for_budget(epsilon, delta)

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return gaussian_mechanism(
            np.full(n, float(side)), sensitivity=1.0, noise_multiplier=sigma, rng=rng, ledger=ample_ledger("rdp", delta)
        )

    return Target(
        "gaussian",
        epsilon,
        delta,
        sample,
        pair=f"f(D) = 0, f(D′) = Δ₂ = 1; σ = {sigma:.4g}",
        proof="Gaussian mechanism, RDP (chen_lee Lemma 1; Mironov 2017 Prop. 3), ε by the RDP conversion",
    )


def exponential_sampler(utilities: np.ndarray, *, sensitivity: float, epsilon: float, failure_probability: float = 0.0):
    """Bulk draws of ``exponential_mechanism(utilities, ...)``: probed call by call against Gumbel-max
    over log ``exponential_mechanism_probabilities`` (:mod:`dpbench.audit.probe`), then the categorical
    law those probabilities define is sampled in bulk by inversion (the law Gumbel-max samples)."""
    u = np.asarray(utilities, dtype=float)
    log_p = np.log(exponential_mechanism_probabilities(u, sensitivity=sensitivity, epsilon=epsilon))
    ledger = ample_ledger("approx", 0.5)
    probe_argmax_mechanism(
        lambda rng: exponential_mechanism(
            u, sensitivity=sensitivity, epsilon=epsilon, rng=rng, ledger=ledger, failure_probability=failure_probability
        ),
        log_p,
        "gumbel",
        (0.0, 1.0),
    )

    cdf = np.cumsum(np.exp(log_p))
    cdf[-1] = np.inf  # rounding must not leave a draw past the last candidate

    def draw(n: int, rng: np.random.Generator) -> np.ndarray:
        return np.searchsorted(cdf, rng.random(n), side="right")  # the same categorical law, by inversion

    return draw


def exponential_target(epsilon: float = 1.0) -> Target:
    """``exponential_mechanism`` over 4 candidates, Δ = 1: u(D) = (−6, 0, 0, 0), u(D′) = (−5, −1, −1, −1).
    Proof (McSherry & Talwar 2007, Thm 6): the ratio splits into e^{ε/2} from the candidate's own
    score and e^{ε/2} from the normaliser; both are attained only when the candidate gains Δ while
    every other loses Δ, and the normaliser term tends to e^{ε/2} as the candidate becomes unlikely.
    Among such pairs this gap (6Δ) maximises the expected 99.95% bound at N = 10⁶ (≈ 0.93ε)."""
    draws = [
        exponential_sampler(u, sensitivity=1.0, epsilon=epsilon)
        for u in (np.array([-6.0, 0.0, 0.0, 0.0]), np.array([-5.0, -1.0, -1.0, -1.0]))
    ]
    return Target(
        "exponential",
        epsilon,
        0.0,
        lambda side, n, rng: draws[side](n, rng),
        pair="u(D) = (−6, 0, 0, 0), u(D′) = (−5, −1, −1, −1), Δ = 1",
        proof="exponential mechanism, McSherry & Talwar 2007 Thm 6",
    )


def report_noisy_max_target(epsilon: float = 1.0, *, monotonic: bool = True) -> Target:
    """``report_noisy_max`` as DP-AGD's step selection calls it (monotonic=True: Lap(Δ/ε), Dwork & Roth
    2014 Claim 3.9), or the general form (Lap(2Δ/ε)). Pair: 8 candidates; the monotone case adds a
    record whose clipped loss is C_obj = Δ on every candidate but the first (values = −scores drop by
    Δ there): v(D) = (−1, 0, …, 0), v(D′) = (−1, −1, …, −1); the general case moves the first up and the
    rest down: v(D) = (−2, 0, …), v(D′) = (−1, −1, …). The proof's bound on P[first wins] is then
    tight: its probability is exactly e^ε times larger on D′ (numerical integration)."""
    k, scale = 8, (1.0 if monotonic else 2.0) / epsilon
    low = -1.0 if monotonic else -2.0
    low_text = "−1" if monotonic else "−2"
    pairs = (np.array([low] + [0.0] * (k - 1)), np.full(k, -1.0))
    ledger = ample_ledger()
    for v in pairs:
        probe_argmax_mechanism(
            lambda rng, v=v: report_noisy_max(
                v, sensitivity=1.0, epsilon=epsilon, rng=rng, ledger=ledger, monotonic=monotonic
            ),
            v,
            "laplace",
            (0.0, scale),
        )

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.argmax(pairs[side] + rng.laplace(0.0, scale, size=(n, k)), axis=1)

    name = "report_noisy_max_dp_agd" if monotonic else "report_noisy_max"
    return Target(
        name,
        epsilon,
        0.0,
        sample,
        pair=f"v(D) = ({low_text}, 0, …, 0), v(D′) = (−1, …, −1), 8 candidates, Δ = 1"
        + (" (monotone: DP-AGD's clipped loss sums)" if monotonic else ""),
        proof="report noisy max, Dwork & Roth 2014 Claim 3.9" + (" (monotone queries)" if monotonic else ""),
    )


def above_threshold_target(
    noise: str = "laplace", *, epsilon: float = 1.0, rho: float = 0.05, sampler: str = "numpy"
) -> Target:
    """``sample_above_threshold`` (the vectorised AboveThreshold sharing ``svt_noise`` and the noise draws
    with the mechanism NoisyBTLS calls) on chen_lee App. B's worst case :data:`SVT_D` / :data:`SVT_D_PRIME`,
    threshold 0. Laplace: ε-DP (chen_lee Lemma 5). Gaussian: (α, αρ)-RDP (chen_lee Thm 3), claimed at
    δ = 10⁻⁵. ``sampler="secure"``: the same under the secure sampler (target ``secure_above_threshold_*``:
    exact discrete noise on a grid, calibrated to the rounded queries' sensitivity)."""
    if noise == "laplace":
        budget, claim, delta = {"epsilon": epsilon}, epsilon, 0.0
    else:
        budget, delta = {"rho": rho}, DELTA
        claim = claimed_epsilon(svt_noise(noise, sensitivity=1.0, rho=rho).event, delta)
    queries = (SVT_D, SVT_D_PRIME)

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        with use_sampler(sampler):
            return sample_above_threshold(queries[side], 0.0, sensitivity=1.0, rng=rng, size=n, noise=noise, **budget)

    prefix = "" if sampler == "numpy" else f"{sampler}_"
    return Target(
        f"{prefix}above_threshold_{noise}",
        claim,
        delta,
        sample,
        pair="q(D) = 0⁹, q(D′) = (1⁸, −1), Δ = 1, T = 0 (chen_lee App. B)",
        proof="chen_lee Lemma 5 (Laplace)" if noise == "laplace" else f"chen_lee Thm 3, ρ = {rho:g}, RDP → (ε, δ)",
    )


def pwa_vector_laplace_target(epsilon: float = 1.0) -> Target:
    """han_pwa's Laplace mechanism on the solution (``laplace_solution``, Sec. 4.2 / Thm 17) with the
    exactly-ε scale Δ/ε (``fidelity=correct``; the paper's √d·Δ/ε only adds noise), i.e. vector-Laplace
    noise ∝ exp(−ε‖w‖₂/Δ), Δ = diam P = 2√d·c (Thm 9). Pair (d = 2, c = 1, b_max = 2):
    f = max(−x₁ + b₁, −x₂ + b₂, x₁ + b₃, x₂ + b₄) with b = (−1, −1, 1, 1) vs b′ = (1, 1, −1, −1), adjacent by
    eq. (4) (every offset moves by b_max): x_opt = (−1, −1) vs (1, 1), opposite corners, so
    ‖x_opt − x_opt′‖ = diam P — the sensitivity bound is attained. The 2-D output is projected on the
    difference direction by the auditor."""
    A = np.array([[-1.0, 0.0], [0.0, -1.0], [1.0, 0.0], [0.0, 1.0]])
    problems = [PWAProblem(A, np.array(b), 1.0, 2.0) for b in ((-1.0, -1.0, 1.0, 1.0), (1.0, 1.0, -1.0, -1.0))]
    optima = [p.solve()[0] for p in problems]
    if not np.isclose(np.linalg.norm(optima[0] - optima[1]), problems[0].diameter, rtol=1e-9):
        raise AssertionError(f"the optima {optima} should be a diameter apart")

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        release = laplace_solution(problems[side], epsilon=epsilon, runs=n, rng=rng, ledger=ample_ledger())
        return release.x

    return Target(
        "pwa_vector_laplace",
        epsilon,
        0.0,
        sample,
        pair="d = 2 box, x_opt(D) = (−1, −1), x_opt(D′) = (1, 1): ‖Δx‖ = diam P = 2√2",
        proof="han_pwa Thm 9 / Thm 17 (vector Laplace, scale Δ₂/ε)",
    )


def pwa_exponential_mcmc_target(epsilon: float = 1.0, delta: float = DELTA, max_n: int = 4000) -> Target:
    """han_pwa's exponential mechanism (Thm 19) sampled by its Metropolis chain (``exponential_mcmc``,
    5000 steps, the defaults of Sec. 5.1), claimed (ε, δ) with δ standing for the chain's mixing error
    (``accounting="approx"``). Pair (d = 1, c = 2, b_max = 1): f_D = max(x, −x) = |x| and
    f_D′ = max(x − 1, −x + 1) = |x − 1|, adjacent by eq. (4); |f_D − f_D′| = b_max wherever x ≤ 0 or
    x ≥ 1, the score sensitivity of Lemma 18. Only N = ``max_n`` per side: each draw is a 5000-step
    chain (~0.6 ms), so 10⁶ draws would take ~10 min; with two affine pieces on this box the best event's
    ratio is ≈ e^{0.65ε}, so the expected bound at this N is ≈ 0.4ε (a check against gross leaks)."""
    A = np.array([[1.0], [-1.0]])
    problems = [PWAProblem(A, np.array(b), 2.0, 1.0) for b in ((0.0, 0.0), (-1.0, 1.0))]

    def sample(side: int, n: int, rng: np.random.Generator) -> np.ndarray:
        ledger = ample_ledger("approx", 0.5)
        return exponential_mcmc(problems[side], epsilon=epsilon, runs=n, rng=rng, ledger=ledger, delta=delta).x[:, 0]

    return Target(
        "pwa_exponential_mcmc",
        epsilon,
        delta,
        sample,
        max_n=max_n,
        note="5000-step Metropolis chain per draw",
        pair="f_D = |x|, f_D′ = |x − 1| on [−2, 2], b_max = 1",
        proof="han_pwa Thm 19 (exponential mechanism; Metropolis assumed mixed)",
    )
