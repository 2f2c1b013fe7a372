"""Mechanisms as a paper's public code runs them, where that is NOT what the privacy claim covers.

Only ``fidelity=authors_code`` modes call these (:class:`~dpbench.algorithms.base.FidelityMode`),
and those modes label every row they write ``guarantee_valid = False``. Each function charges the
ledger what the authors' analysis claims for the release (so the ledger still records what was
released, at its claimed price) and says in its docstring why the claim fails. ``dpbench-audit``
has a control for each (a target that must come out as a violation: control_dp_agd_authors_noisy_min,
control_kuru_authors_laprnd).
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
from dpbench.privacy.mechanisms import _scores
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
    value, *, sensitivity: float, epsilon: float, sample_size: int, population: int, rng, ledger,
    label: str = "laplace_std_as_scale", neighbouring: str | None = None,
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
    event = LaplaceEvent(1.0 / epsilon)
    ledger.pay(event if m == n else SampledWithoutReplacementEvent(m, n, event), label=label, neighbouring=neighbouring)
    return x + rng.laplace(0.0, scale, size=x.shape)
