"""Mechanisms as a paper's public code runs them, where that is NOT what the privacy claim covers.

Only ``fidelity=authors_code`` modes call these (:class:`~dpbench.algorithms.base.FidelityMode`),
and those modes label every row they write ``guarantee_valid = False``. Each function charges the
ledger what the authors' analysis claims for the release (so the ledger still records what was
released, at its claimed price) and says in its docstring why the claim fails. ``dpbench-audit``
has a control for each (a target that must come out as a violation).
"""

from __future__ import annotations

import numpy as np

from dpbench.privacy._charge import charge
from dpbench.privacy._checks import check_generator, check_positive
from dpbench.privacy.events import PureDPEvent
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
