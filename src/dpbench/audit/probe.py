"""Bulk sampling of mechanisms whose public function releases ONE output per call.

``report_noisy_max`` and ``exponential_mechanism`` (:mod:`dpbench.privacy.mechanisms`) take ~25 µs
a call, too slow for 10⁶ draws per side. Both are "argmax of scores plus i.i.d. noise". We call the
real function through :class:`RecordingGenerator` — a ``numpy.random.Generator`` that records
every draw it hands out — and check, on every probe call, that the released index is exactly
argmax(scores + recorded noise) and that the noise law (distribution, scale, shape) is the expected
one; the scores come from the public function or its public probabilities. Only then is the same
law sampled in bulk. A change to the mechanism's noise or selection rule therefore fails the probe
instead of being audited silently on a stale copy. (A vectorised sampler in
:mod:`dpbench.privacy.mechanisms`, like ``sample_above_threshold``, would remove the need.)

The secure sampler's draws are exact integers, not numpy's continuous draws, so its targets sample
the sampler's own vectorised primitive instead, after :func:`probe_same_release` has checked, call
by call, that the public mechanism releases exactly what that primitive draws from the same seed.

An algorithm's release that adds noise to a value it computes (kusner_bo's ṽ, f̃, f̃_L) is checked
by :func:`probe_additive_release`: its value must be that value plus the one draw of the expected
noise law it makes (other draws, such as an exponential mechanism's, are ignored).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["RecordingGenerator", "probe_additive_release", "probe_argmax_mechanism", "probe_same_release"]

PROBE_CALLS = 64


class RecordingGenerator(np.random.Generator):
    """A Generator that logs (method, parameters, draw) for Laplace, Gumbel and normal draws."""

    def __init__(self, seed: int) -> None:
        super().__init__(np.random.PCG64(seed))
        self.calls: list[tuple[str, tuple, np.ndarray]] = []

    def _log(self, name: str, params: tuple, draw):
        self.calls.append((name, params, np.asarray(draw)))
        return draw

    def laplace(self, loc=0.0, scale=1.0, size=None):
        return self._log("laplace", (float(loc), float(scale)), super().laplace(loc, scale, size))

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        return self._log("gumbel", (float(loc), float(scale)), super().gumbel(loc, scale, size))

    def normal(self, loc=0.0, scale=1.0, size=None):
        return self._log("normal", (float(loc), float(scale)), super().normal(loc, scale, size))


def probe_argmax_mechanism(
    release: Callable[[np.random.Generator], int],
    scores: np.ndarray,
    noise: str,
    params: tuple[float, float],
    seed: int = 7,
) -> None:
    """Raise unless ``release(rng)`` is argmax(scores + one draw of ``noise``(*params) per score),
    checked on :data:`PROBE_CALLS` calls with a :class:`RecordingGenerator`."""
    rng = RecordingGenerator(seed)
    for call in range(PROBE_CALLS):
        rng.calls.clear()
        index = release(rng)
        if len(rng.calls) != 1:
            raise AssertionError(f"expected one noise draw per release, saw {[c[0] for c in rng.calls]}")
        name, got, draw = rng.calls[0]
        if name != noise or not np.allclose(got, params, rtol=1e-12, atol=0.0) or draw.shape != scores.shape:
            raise AssertionError(
                f"expected {noise}{params} of shape {scores.shape}, the mechanism drew {name}{got} {draw.shape}"
            )
        if index != int(np.argmax(scores + draw)):
            best = int(np.argmax(scores + draw))
            raise AssertionError(f"probe call {call}: released {index}, argmax(scores + noise) is {best}")


def probe_additive_release(
    release: Callable[[np.random.Generator], float],
    value: float,
    noise: str,
    params: tuple[float, float],
    seed: int = 7,
) -> None:
    """Raise unless ``release(rng)`` is ``value`` plus the one draw of ``noise``(*params) it makes, checked on
    :data:`PROBE_CALLS` calls with a :class:`RecordingGenerator` (draws of other laws are not checked)."""
    rng = RecordingGenerator(seed)
    for call in range(PROBE_CALLS):
        rng.calls.clear()
        released = release(rng)
        draws = [c for c in rng.calls if c[0] == noise]
        if len(draws) != 1 or not np.allclose(draws[0][1], params, rtol=1e-12, atol=0.0) or draws[0][2].size != 1:
            raise AssertionError(
                f"expected one {noise}{params} draw per release, saw {[(c[0], c[1]) for c in rng.calls]}"
            )
        if released != value + float(draws[0][2]):
            raise AssertionError(
                f"probe call {call}: released {released!r}, value + noise is {value + float(draws[0][2])!r}"
            )


def probe_same_release(
    release: Callable[[np.random.Generator], object],
    primitive: Callable[[np.random.Generator], object],
    calls: int = PROBE_CALLS,
) -> None:
    """Raise unless ``release(rng)`` equals ``primitive(rng)`` exactly for fresh generators seeded
    0 … ``calls`` − 1: the mechanism releases exactly the primitive's draw (same calibration, same
    randomness)."""
    for seed in range(calls):
        got, want = release(np.random.default_rng(seed)), primitive(np.random.default_rng(seed))
        if not np.array_equal(np.asarray(got), np.asarray(want)):
            raise AssertionError(
                f"probe seed {seed}: the mechanism released {got!r}, its sampler primitive draws {want!r}"
            )
