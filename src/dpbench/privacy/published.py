"""Mechanisms as a paper's public code runs them, where that is NOT what the privacy claim covers.

Only ``fidelity=authors_code`` modes call these (:class:`~dpbench.algorithms.base.FidelityMode`),
and those modes label every row they write ``guarantee_valid = False``. Each function charges the
ledger what the authors' analysis claims for the release (so the ledger still records what was
released, at its claimed price) and says in its docstring why the claim fails. ``dpbench-audit``
has a control for each (a target that must come out as a violation: control_dp_agd_authors_noisy_min,
control_kuru_authors_laprnd, control_dp_sgd_authors_fixed_batch).
"""

from __future__ import annotations

import math

import numpy as np

from dpbench.privacy._charge import charge
from dpbench.privacy._checks import (
    check_count,
    check_finite_array,
    check_generator,
    check_positive,
)
from dpbench.privacy.events import (
    LaplaceEvent,
    PureDPEvent,
    SampledWithoutReplacementEvent,
)
from dpbench.privacy.mechanisms import _scores, laplace_calibration
from dpbench.privacy.samplers import require_numpy_sampler


def noisy_min_exponential_subtracted(
    scores, *, sensitivity: float, epsilon: float, rng, ledger, label: str = "noisy_min_exponential_subtracted"
) -> int:
    """argmin(scores + Exp(Δ/ε)): DP-AGD's public noisy min (ppmlguy/DP-AGD, ``common/noisy_max.py``,
    ``noisy_max(scores, λ = C_obj/ε_nmax, bmin=True)`` negates both the scores and the one-sided
    exponential noise before the argmax), charged PureDPEvent(ε) as the code's accounting does.

    NOT ε-DP. Report-noisy-max with one-sided exponential noise is ε-DP when the noise is *added* to
    the utility −score (argmin(score − Exp)); adding it to the score subtracts it from the utility.
    With k candidates of equal score on D and one lower by Δ on D′, that one is chosen with
    probability 1/k on D and about 1 − e^{−ε} on D′ for large k: a ratio that grows with k (≈ 13 at
    k = 21, ε = 1) where ε-DP allows e^ε."""
    values = _scores("scores", scores)
    scale = check_positive("sensitivity", sensitivity) / check_positive("epsilon", epsilon)
    check_generator(rng)
    require_numpy_sampler("noisy_min_exponential_subtracted")
    charge(ledger, PureDPEvent(epsilon), 1.0, label)
    return int(np.argmin(values + rng.exponential(scale, size=values.shape[0])))


def subsampled_laplace_std_as_scale(
    value,
    *,
    sensitivity: float,
    epsilon: float,
    sample_size: int,
    population: int,
    rng,
    ledger,
    label: str = "laplace_std_as_scale",
    neighbouring: str | None = None,
) -> np.ndarray:
    """``value`` + Lap(b/√2) per coordinate with b = Δ₁/ε: kuru_acc's public code
    (sibirbil/DPAccGradMethods, ``laprnd.m``: ``laprnd(d, 1, b)`` takes b as the *standard deviation*
    and draws scale ``b = sigma / sqrt(2)``, line 29), charged exactly as
    :func:`~dpbench.privacy.mechanisms.subsampled_laplace_mechanism` charges Lap(b):
    SampledWithoutReplacementEvent(m, n, LaplaceEvent(1/ε)), or LaplaceEvent(1/ε) when m = n.

    NOT ε-DP on the subsample: Lap(Δ₁/ε·1/√2) is √2·ε-DP (the density ratio of two Laplace
    distributions of scale s whose centres are Δ₁ apart reaches e^{Δ₁/s}), so each release loses
    ln(1 + (m/n)(e^{√2ε} − 1)) where ln(1 + (m/n)(e^ε − 1)) is charged (kuru_acc eq. 3.3)."""
    x = check_finite_array("value", value)
    scale = check_positive("sensitivity", sensitivity) / check_positive("epsilon", epsilon) / math.sqrt(2.0)
    m, n = check_count("sample_size", sample_size), check_count("population", population)
    if m > n:
        raise ValueError(f"sample_size ({m}) exceeds population ({n})")
    check_generator(rng)
    require_numpy_sampler("subsampled_laplace_std_as_scale")
    event = LaplaceEvent(laplace_calibration(epsilon)[0])
    ledger.pay(event if m == n else SampledWithoutReplacementEvent(m, n, event), label=label, neighbouring=neighbouring)
    return x + rng.laplace(0.0, scale, size=x.shape)


# ---------------------------------------------------------------- chen_lee's DP-SGD (ppmlguy/DP-AGD, algo/sgd.py)
# (one block; its imports are local so that it stands apart from the other papers' additions)
MOMENTS_ACCOUNTANT_ORDER = 32
"""The one moment order λ whose log moment DP-AGD's public code converts to ε (``common/gaussian_moments.py``,
``_compute_eps``: the ``min`` sits after the loop over λ = 1..32, so only the last λ is read)."""


def moments_accountant_epsilon(sampling_rate: float, noise_multiplier: float, steps: int, delta: float) -> float:
    """ε that DP-AGD's ``dpsgd_ma`` reports for ``steps`` Poisson-subsampled Gaussian steps
    (``algo/sgd.py`` with ``get_privacy_spent`` of ``common/gaussian_moments.py``): the moments
    accountant's ε = (T·α(λ) + ln(1/δ))/λ at λ = 32 only, where α(λ) = λ·RDP(λ + 1) is the log moment
    of one step (Abadi et al. 2016, Thm 2). Their ``compute_a`` (a binomial expansion) equals the exact
    integer-order RDP of the Poisson-subsampled Gaussian (Mironov, Talwar & Zhang 2019) that
    :func:`~dpbench.privacy.rdp.rdp_poisson_subsampled_gaussian` computes, to ~1e-11 relative.

    A valid bound for the mechanism it prices: one order of the moments accountant and its
    conversion always bound ε, only more loosely than the minimum over a grid of orders (at σ = 4,
    δ = 1e-8, no step fits below ε = ln(1/δ)/32 ≈ 0.58)."""
    from dpbench.privacy._checks import check_delta
    from dpbench.privacy.rdp import rdp_poisson_subsampled_gaussian

    check_positive("noise_multiplier", noise_multiplier)
    lam = MOMENTS_ACCOUNTANT_ORDER
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise ValueError(f"steps must be an integer ≥ 0, got {steps!r}")
    rdp = float(rdp_poisson_subsampled_gaussian(sampling_rate, noise_multiplier, np.array([lam + 1.0]))[0])
    return (steps * lam * rdp - math.log(check_delta(delta))) / lam


def moments_accountant_steps(sampling_rate: float, noise_multiplier: float, epsilon: float, delta: float) -> int:
    """The most steps T whose :func:`moments_accountant_epsilon` is ≤ ``epsilon`` (0 when even one
    does not fit): how long DP-AGD's ``dpsgd_ma`` runs at a target ε. Their script fixes T and
    reports ε; this inverts that report (it is increasing in T)."""
    check_positive("epsilon", epsilon)
    per_step = moments_accountant_epsilon(sampling_rate, noise_multiplier, 1, delta) - moments_accountant_epsilon(
        sampling_rate, noise_multiplier, 0, delta
    )
    steps = max(
        0, math.floor((epsilon - moments_accountant_epsilon(sampling_rate, noise_multiplier, 0, delta)) / per_step)
    )
    while steps > 0 and moments_accountant_epsilon(sampling_rate, noise_multiplier, steps, delta) > epsilon:
        steps -= 1
    while moments_accountant_epsilon(sampling_rate, noise_multiplier, steps + 1, delta) <= epsilon:
        steps += 1
    return steps


def gaussian_fixed_batch_priced_as_poisson(
    value,
    *,
    sensitivity: float,
    noise_multiplier: float,
    batch_size: int,
    population: int,
    rng,
    ledger,
    label: str = "gaussian_fixed_batch_priced_as_poisson",
) -> np.ndarray:
    """``value`` (a clipped-gradient sum over a batch of exactly ``batch_size`` of the ``population``
    rows, drawn without replacement) + N(0, (σΔ)²) per coordinate, charged
    PoissonSampledEvent(b/n, GaussianEvent(σ)): DP-AGD's ``dpsgd_ma`` (``algo/sgd.py``:
    ``np.random.choice(N, size=batch_size, replace=False)``, noise ``sigma * clip``, accounted by the
    moments accountant at q = batch_size/N, which prices Poisson sampling).

    NOT (ε, δ)-DP at the charged price. The Poisson analysis prices one record that is in the batch
    with probability q and, when it is, moves the sum by Δ. With a batch of fixed size, adding a record
    (or replacing one) displaces another from the batch whenever it enters it, so the sum moves by up
    to 2Δ with probability q: the privacy loss of that mixture exceeds the charged one at every order
    (Lebeda, Regehr, Kamath & Steinke 2024, "Avoiding pitfalls for privacy accounting of subsampled
    mechanisms under composition"). ``batch_size``/``population`` must be the run's b and n."""
    from dpbench.privacy.events import GaussianEvent

    x = check_finite_array("value", value)
    sigma = check_positive("noise_multiplier", noise_multiplier)
    scale = check_positive("sensitivity", sensitivity) * sigma
    b, n = check_count("batch_size", batch_size), check_count("population", population)
    if b > n:
        raise ValueError(f"batch_size ({b}) exceeds population ({n})")
    check_generator(rng)
    require_numpy_sampler("gaussian_fixed_batch_priced_as_poisson")
    charge(ledger, GaussianEvent(sigma), b / n, label)
    return x + rng.normal(0.0, scale, size=x.shape)


# ----------------------------------------------------------- chen_lee's OutPert-GD (ppmlguy/DP-AGD, algo/outpert.py)
def output_perturbation_assumed_lipschitz(
    w,
    *,
    n: int,
    iterations: int,
    step: float,
    lipschitz: float,
    epsilon: float,
    delta: float,
    rng,
    ledger,
    label: str = "outpert_assumed_lipschitz",
    neighbouring: str | None = None,
) -> tuple[np.ndarray, float, float]:
    """(w + N(0, (σΔ)²I), Δ, σ) with Δ = 3LTη/n and σ = √(2 ln(2/δ))/ε: DP-AGD's public OutPert-GD
    (ppmlguy/DP-AGD, ``algo/outpert.py``: ``sens = (3.0 * L * T * step_size) / n``, ``sigma =
    sqrt(2 log(2/delta)) * sens / eps``), which ``run_outpert_logistic.py`` runs with L = 1 (``--L``
    default). Charged GaussianEvent(σ) at sensitivity Δ — the release as made, at the price the
    code claims for it.

    NOT (ε, δ)-DP as run: L must bound every per-example gradient norm |ℓ′|·‖x_i‖, and the code's rows
    (min–max to [0, 1] plus a column of ones, never clipped) have norms up to 3.32 on BANK and 3.71 on
    IPUMS-BR; with η = 1 > 2/β̄ (β̄ = ‖x‖²/4 + μ ≈ 2.8–3.4 on such rows) a gradient step can expand the
    gap between neighbouring runs, so no bound of the form cGTη/n covers T steps either."""
    from dpbench.privacy.mechanisms import gaussian_mechanism

    x = check_finite_array("w", w)
    sensitivity = 3.0 * check_positive("lipschitz", lipschitz) * check_count("iterations", iterations)
    sensitivity *= check_positive("step", step) / check_count("n", n)
    sigma = math.sqrt(2.0 * math.log(2.0 / check_positive("delta", delta))) / check_positive("epsilon", epsilon)
    noisy = gaussian_mechanism(
        x,
        sensitivity=sensitivity,
        noise_multiplier=sigma,
        rng=rng,
        ledger=ledger,
        label=label,
        neighbouring=neighbouring,
    )
    return noisy, sensitivity, sigma
