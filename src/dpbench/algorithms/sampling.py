"""Poisson subsampling (each record kept independently with probability q).

The kept indices are drawn in increasing order as the successes of a Bernoulli(q) process over
0, …, n−1: the gaps between successive successes are i.i.d. Geometric(q) (the process is
memoryless), so the k-th kept index is G₁ + … + G_k − 1. This is the law of a Bernoulli(q) mask,
exactly, and costs about qn geometric draws and a cumulative sum: no mask over all n records, no
sort and no hash set (``Generator.choice`` without replacement costs ~50 ns per index; scripts/bench.py).
It is the sampling scheme the Poisson-subsampled RDP bounds (chen_lee Lemma 4; Mironov et al.
2019) assume.
"""

from __future__ import annotations

import math

import numpy as np


def poisson_subsample(n: int, sampling_rate: float, rng: np.random.Generator) -> np.ndarray:
    """Increasing indices of a Poisson subsample of ``range(n)`` at rate ``sampling_rate``."""
    if not 0.0 < sampling_rate <= 1.0:
        raise ValueError(f"sampling rate must be in (0, 1], got {sampling_rate}")
    if sampling_rate == 1.0:
        return np.arange(n)
    expected = n * sampling_rate
    return bernoulli_positions(n, sampling_rate, rng, chunk=int(expected + 4.0 * math.sqrt(expected)) + 16)


def bernoulli_positions(n: int, sampling_rate: float, rng: np.random.Generator, chunk: int) -> np.ndarray:
    """The successes among n Bernoulli(q) trials, from Geometric(q) gaps drawn ``chunk`` at a time
    (one chunk covers the n trials with probability ≳ 1 − 3·10⁻⁵ at the size
    :func:`poisson_subsample` asks for; further chunks continue the same process)."""
    trials = rng.geometric(sampling_rate, size=chunk)  # trials up to and including each success
    np.cumsum(trials, out=trials)
    while trials[-1] <= n:
        more = rng.geometric(sampling_rate, size=chunk)
        np.cumsum(more, out=more)
        trials = np.concatenate((trials, trials[-1] + more))
    positions = trials[: trials.searchsorted(n, side="right")]
    positions -= 1
    return positions
